import {
  ConcurrencyError,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  StoreError,
  TransactionError,
} from "../../errors.js";
import { AZURE_TABLE_LIMITS, type StoreLimits } from "../../util/store-limits.js";
import {
  BATCH_ENVELOPE_BYTES,
  batchOperationBytes,
  batchOperationBytesBound,
  batchTableUrlFor,
} from "../batch-body-size.js";
import type { TransactionAction } from "../table-store.js";
import { keysOf, type ParsedAction, parseAction } from "./write-planner.js";

/**
 * Validates an entity group transaction without looking at stored state, the service's EGT rules:
 * 1 to 100 operations, all on `partitionKey`, each entity at most once, a `$batch` request body of at
 * most 4 MiB (2 MB on the Cosmos DB Table API) as the SDK would send it to the account URL of `limits`
 * (`batch-body-size.ts`: the nominal Azure endpoint for MemoryStore, so it refuses what Azure would),
 * and each operation's own input rules. A violation is a
 * `TransactionError` whose `index` is the offending operation.
 */
export function parseTransaction(
  table: string,
  partitionKey: string,
  actions: readonly TransactionAction[],
  limits: StoreLimits = AZURE_TABLE_LIMITS,
): ParsedAction[] {
  const { maxTransactionOperations, maxTransactionBytes } = limits;
  const fail = (index: number, statusCode: number, serviceCode: string, message: string, rowKey?: string) =>
    new TransactionError({ index, table, partitionKey, rowKey, statusCode, serviceCode, message });
  if (!Array.isArray(actions) || actions.length === 0) {
    throw fail(0, 400, "InvalidInput", "a transaction needs at least one operation");
  }
  if (actions.length > maxTransactionOperations) {
    throw fail(
      maxTransactionOperations,
      400,
      "InvalidInput",
      `the batch request operation exceeds the maximum ${maxTransactionOperations} changes per change set (it has ${actions.length})`,
    );
  }
  const seen = new Set<string>();
  const tableUrl = batchTableUrlFor(limits, table);
  let bytes = BATCH_ENVELOPE_BYTES;
  // An upper bound is cheap to count; the exact size is counted only once the bound could reach
  // the limit (from the first operation on, so `bytes` is then exactly what it always was).
  let bound = BATCH_ENVELOPE_BYTES;
  let exact = false;
  return actions.map((action, index) => {
    let parsed: ParsedAction;
    try {
      parsed = parseAction(action);
    } catch (error) {
      throw toTransactionError(error, index, table, partitionKey, undefined);
    }
    const keys = keysOf(parsed);
    if (keys.partitionKey !== partitionKey) {
      throw fail(
        index,
        400,
        "CommandsInBatchActOnDifferentPartitions",
        `all operations must use PartitionKey '${partitionKey}', this one uses '${keys.partitionKey}'`,
        keys.rowKey,
      );
    }
    if (seen.has(keys.rowKey)) {
      throw fail(
        index,
        400,
        "InvalidDuplicateRow",
        `a command with RowKey '${keys.rowKey}' is already present in the batch; an entity can appear only once`,
        keys.rowKey,
      );
    }
    seen.add(keys.rowKey);
    if (!exact) {
      bound += batchOperationBytesBound(tableUrl, action);
      if (bound > maxTransactionBytes) {
        exact = true;
        for (const earlier of actions.slice(0, index)) bytes += batchOperationBytes(tableUrl, earlier);
      }
    }
    if (exact) bytes += batchOperationBytes(tableUrl, action);
    // The service: 413 RequestBodyTooLarge, "The request body is too large and exceeds the maximum permissible limit."
    if (exact && bytes > maxTransactionBytes) {
      throw fail(
        index,
        413,
        "RequestBodyTooLarge",
        `the $batch request body reaches ${bytes} bytes at this operation; it may be at most ${maxTransactionBytes}`,
        keys.rowKey,
      );
    }
    return parsed;
  });
}

/** Converts a failure of operation `index` into the `TransactionError` the service's answer maps to. */
export function toTransactionError(
  error: unknown,
  index: number,
  table: string,
  partitionKey: string,
  rowKey: string | undefined,
): TransactionError {
  let statusCode: number | undefined;
  let serviceCode: string | undefined;
  if (error instanceof EntityAlreadyExistsError) [statusCode, serviceCode] = [409, "EntityAlreadyExists"];
  else if (error instanceof EntityNotFoundError) [statusCode, serviceCode] = [404, "ResourceNotFound"];
  else if (error instanceof ConcurrencyError)
    [statusCode, serviceCode] = [412, "UpdateConditionNotSatisfied"];
  else if (error instanceof StoreError) [statusCode, serviceCode] = [error.statusCode, error.serviceCode];
  else throw error;
  return new TransactionError(
    { index, table, partitionKey, rowKey, statusCode, serviceCode, message: error.message },
    { cause: error },
  );
}
