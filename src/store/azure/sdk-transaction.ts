import type { TransactionAction as SdkTransactionAction } from "@azure/data-tables";
import { TransactionError, ValidationError } from "../../errors.js";
import type { TransactionAction, WriteMode } from "../table-store.js";
import { toSdkEntity } from "./sdk-entity.js";

/** The SDK's name of a write mode. */
export function sdkMode(mode: WriteMode): "Replace" | "Merge" {
  return mode === "merge" ? "Merge" : "Replace";
}

/**
 * Fills `sdkActions` with the SDK's form of a transaction's `actions` and returns the ETags of its
 * conditional deletes by index (the SDK drops them; transaction-delete-etags.ts puts them back), if any.
 * Rejects, before any request, what the service (and MemoryStore) reject: an empty transaction, an
 * action in another partition, an ETag with a line break.
 */
export function toSdkTransaction(
  table: string,
  partitionKey: string,
  actions: readonly TransactionAction[],
  sdkActions: SdkTransactionAction[],
): Map<number, string> | undefined {
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
  let deleteEtags: Map<number, string> | undefined;
  for (let index = 0; index < actions.length; index++) {
    const action = actions[index]!;
    const actionPartitionKey = action.kind === "delete" ? action.partitionKey : action.entity.partitionKey;
    if (actionPartitionKey !== partitionKey) {
      throw new TransactionError({
        index,
        table,
        partitionKey,
        rowKey: action.kind === "delete" ? action.rowKey : action.entity.rowKey,
        statusCode: 400,
        serviceCode: "CommandsInBatchActOnDifferentPartitions",
        message: `all operations must use PartitionKey '${partitionKey}', this one uses '${actionPartitionKey}'`,
      });
    }
    switch (action.kind) {
      case "insert":
        sdkActions[index] = ["create", toSdkEntity(action.entity)];
        break;
      case "upsert":
        sdkActions[index] = ["upsert", toSdkEntity(action.entity), sdkMode(action.mode)];
        break;
      case "update":
        sdkActions[index] = [
          "update",
          toSdkEntity(action.entity),
          sdkMode(action.mode),
          { etag: action.ifMatch },
        ];
        break;
      case "delete":
        sdkActions[index] = ["delete", { partitionKey: action.partitionKey, rowKey: action.rowKey }];
        if (/[\r\n]/.test(action.ifMatch)) {
          // It is pasted into the raw batch body: a line break would inject headers.
          throw new ValidationError("etag", `Transaction operation ${index} has an ETag with a line break`);
        }
        if (action.ifMatch !== "*") {
          deleteEtags ??= new Map();
          deleteEtags.set(index, action.ifMatch);
        }
        break;
    }
  }
  return deleteEtags;
}
