import { TransactionError, ValidationError } from "../../errors.js";
import type { TransactionAction } from "../table-store.js";

/**
 * Rejects, before any request, what the service (and MemoryStore) reject in a transaction: no
 * operation, an operation in another partition; and an ETag with a line break, which the `$batch`
 * body (batch-request.ts) would carry as a header line of its own.
 */
export function assertTransactionSendable(
  table: string,
  partitionKey: string,
  actions: readonly TransactionAction[],
): void {
  if (actions.length === 0) {
    throw new TransactionError({
      index: 0,
      table,
      partitionKey,
      statusCode: 400,
      serviceCode: "InvalidInput",
      message: "a transaction needs at least one operation",
    });
  }
  for (let index = 0; index < actions.length; index++) {
    const action = actions[index] as TransactionAction;
    const deleting = action.kind === "delete";
    const actionPartitionKey = deleting ? action.partitionKey : action.entity.partitionKey;
    if (actionPartitionKey !== partitionKey) {
      throw new TransactionError({
        index,
        table,
        partitionKey,
        rowKey: deleting ? action.rowKey : action.entity.rowKey,
        statusCode: 400,
        serviceCode: "CommandsInBatchActOnDifferentPartitions",
        message: `all operations must use PartitionKey '${partitionKey}', this one uses '${actionPartitionKey}'`,
      });
    }
    if ((action.kind === "delete" || action.kind === "update") && /[\r\n]/.test(action.ifMatch)) {
      // It is pasted into the raw batch body: a line break would inject headers.
      throw new ValidationError("etag", `Transaction operation ${index} has an ETag with a line break`, {
        field: "ifMatch",
      });
    }
  }
}
