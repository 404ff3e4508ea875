import { TransactionError } from "../../../errors.js";
import type { EntityModel } from "../../../schema/entity-model.js";
import type { TransactionAction, WriteMode } from "../../../store/table-store.js";
import { assertWithinLimits } from "../../pipeline/backend-limits.js";
import { feedBatchLimits } from "../../pipeline/feed/feed-plan.js";
import { isTableNotFound } from "../period-tables.js";
import type { Backoff, Limited, PeriodTableLookup, Requests } from "../requests.js";
import { submitTransaction } from "../submit-transaction.js";
import { unitOfItem } from "./bulk-item-error.js";
import { runBulk } from "./bulk-runner.js";
import type { BulkOptions, BulkResult, SubmitBatch, WriteUnit } from "./bulk-types.js";

/** Which write a bulk operation performs. */
export type BulkKind = { kind: "insert" } | { kind: "upsert"; mode: WriteMode } | { kind: "delete" };

/**
 * Writes a stream of entities (or keys, for deletes) as entity group transactions of at most
 * 100 operations per partition, partitions in parallel. Each batch is atomic; the bulk write
 * as a whole is not: a failed batch is reported in the result and the others go on.
 */
export function writeBulk<T extends object>(
  runner: Requests & Limited & Backoff & PeriodTableLookup,
  model: EntityModel<T>,
  table: string,
  items: Iterable<T> | AsyncIterable<T>,
  write: BulkKind,
  options: BulkOptions = {},
): Promise<BulkResult<T>> {
  const toUnit = (item: T, index: number): WriteUnit<T> =>
    unitOfItem(model as EntityModel<object>, item, index, () => {
      const action = toAction(model, item, write);
      const keys = action.kind === "delete" ? action : action.entity;
      assertWithinLimits(runner.limits, action, () => `${model.name} (PartitionKey '${keys.partitionKey}')`);
      return { item, partitionKey: keys.partitionKey, actions: [action], rowKeys: [keys.rowKey] };
    });
  const submit: SubmitBatch = async (partitionKey, actions) => {
    let pending = actions;
    const retries = 0;
    for (;;) {
      try {
        const submitted = await submitTransaction(runner, table, partitionKey, pending);
        runner.emit({ type: "batch-committed", table, partitionKey, operations: pending.length });
        return { retries: retries + submitted.retries };
      } catch (error) {
        // A period nobody wrote to has no table: every entity a batch of deletes names is gone.
        if (isTableNotFound(error) && runner.periodTables.has(table) && pending.every(isDelete)) {
          return { retries };
        }
        // Deleting what is already gone is not a failure of a bulk delete: drop it and resend the rest.
        const missing = missingDelete(error, pending);
        if (missing === undefined) {
          runner.emit({ type: "batch-failed", table, partitionKey, operations: pending.length, error });
          throw error;
        }
        pending = pending.filter((_, index) => index !== missing);
        if (pending.length === 0) return { retries };
      }
    }
  };
  const limits = feedBatchLimits(runner.limits, model.changeFeed !== undefined);
  if (!Array.isArray(items)) return runBulk(items, toUnit, submit, { ...options, limits });
  // An array is in memory already: check every item before the first request, so bad input sends nothing.
  const prepared = new Map<T, WriteUnit<T>>();
  items.forEach((item, index) => {
    prepared.set(item, toUnit(item, index));
  });
  const preparedUnit = (item: T, index: number) => prepared.get(item) ?? toUnit(item, index);
  return runBulk(items, preparedUnit, submit, { ...options, total: items.length, limits });
}

/** The transaction action of one bulk item: its row (insert, upsert) or its keys (a delete, unconditional). */
export function toAction<T extends object>(
  model: EntityModel<T>,
  item: T,
  write: BulkKind,
): TransactionAction {
  if (write.kind === "delete") {
    const values = item as Record<string, unknown>;
    return {
      kind: "delete",
      partitionKey: model.partitionKey.encode(values, "PartitionKey"),
      rowKey: model.rowKey.encode(values, "RowKey"),
      ifMatch: "*",
    };
  }
  const entity = model.mapper.toWire(item);
  return write.kind === "insert" ? { kind: "insert", entity } : { kind: "upsert", entity, mode: write.mode };
}

/** The position of a delete the service answered 404 (the entity is gone), if that is what failed. */
export function missingDelete(error: unknown, actions: readonly TransactionAction[]): number | undefined {
  if (!(error instanceof TransactionError) || error.statusCode !== 404) return undefined;
  // A missing table is a 404 too: a failure, never "the entity is already gone".
  if (error.serviceCode === "TableNotFound") return undefined;
  return actions[error.index]?.kind === "delete" ? error.index : undefined;
}

function isDelete(action: TransactionAction): boolean {
  return action.kind === "delete";
}
