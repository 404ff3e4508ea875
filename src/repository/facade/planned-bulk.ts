import { ValidationError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import { assertWideRowKey } from "../../serialization/wide-rows.js";
import type { TransactionAction, WriteMode } from "../../store/table-store.js";
import type { StoreLimits } from "../../util/store-limits.js";
import { BatchPlanner, type PlannedBatch } from "../core/bulk/batch-planner.js";
import { unitOfItem } from "../core/bulk/bulk-item-error.js";
import { runBulk } from "../core/bulk/bulk-runner.js";
import type {
  BulkOptions,
  BulkResult,
  BulkWriter,
  SubmitOutcome,
  WriteUnit,
} from "../core/bulk/bulk-types.js";
import { type BulkKind, missingDelete, toAction } from "../core/bulk/bulk-writer.js";
import { deriveCopyRefs, isLocal } from "../core/copy-ref.js";
import { keepsCopies } from "../core/entity-features.js";
import { assertEntityGroupFits, type EntityRows, entityRows } from "../core/entity-layout.js";
import { estimateActionBytes } from "../core/payload-size.js";
import { isTableNotFound } from "../core/period-tables.js";
import type { Planning, RequestContext } from "../core/requests.js";
import type { RenderedStep } from "../core/write-plan.js";
import { assertWithinLimits } from "../pipeline/backend-limits.js";
import { feedBatchLimits } from "../pipeline/feed/feed-plan.js";
import type { SummaryCommitter } from "../summary/summary-committer.js";
import { type PlannedOperation, plannedOperation } from "./transaction.js";
import { commitTransaction } from "./transaction-commit.js";
import { explainTransactionSteps } from "./transaction-explain.js";

/** The payload margin left in each batch for its summary rows (each well under 1 KiB; a few per class). */
const SUMMARY_ROWS_MARGIN = 64 * 1024;

/** A failed plan that only says "too much for one transaction": its half batches may each fit. */
const SPLITTABLE = new Set(["transaction-operations", "transaction-payload", "transaction-duplicate"]);

/**
 * The bulk writes of an entity class that keeps more than its row (index copies, summary rows, large
 * values, wide rows): items are packed per partition as for plain entities, and each batch is committed
 * as one `db.transaction` plan (transaction-commit.ts) — large values uploaded and intents recorded
 * before, the entity rows with their same-partition copies and the partition's summary rows in one
 * entity group transaction, copies elsewhere and replaced blobs after. Each batch is atomic; the bulk
 * write is not.
 *
 * Copies are planned only when a batch is sent (they depend on what is stored), so a batch is packed
 * on an estimate of them; a batch whose plan does not fit one transaction after all is sent as two
 * halves (nothing is sent for a plan that does not fit).
 */
export class PlannedBulk<T extends object> implements BulkWriter<T> {
  readonly #model: EntityModel<object>;
  readonly #table: string;
  /** Sends each batch's plan (its reads, its steps, its commit): held by the executor only. */
  readonly #runner: RequestContext;
  /** What the batches are packed and planned with (naming, limits, tracked state): no store. */
  readonly #planning: Planning;
  readonly #summaries: SummaryCommitter | undefined;
  /** A wide entity's rows (split per item), built once. */
  readonly #wide: EntityRows | undefined;

  constructor(
    model: EntityModel<T>,
    table: string,
    runner: RequestContext,
    summaries: SummaryCommitter | undefined,
  ) {
    this.#model = model as unknown as EntityModel<object>;
    this.#table = table;
    this.#runner = runner;
    // The context's one object plays both roles; the planning half is all the packing is given.
    this.#planning = runner;
    this.#summaries = summaries;
    this.#wide = model.wide ? entityRows(this.#model, this.#planning) : undefined;
  }

  bulkInsert(items: Iterable<T> | AsyncIterable<T>, options: BulkOptions): Promise<BulkResult<T>> {
    return this.#bulk(items, { kind: "insert" }, options);
  }

  bulkUpsert(
    items: Iterable<T> | AsyncIterable<T>,
    mode: WriteMode,
    options: BulkOptions,
  ): Promise<BulkResult<T>> {
    return this.#bulk(items, { kind: "upsert", mode }, options);
  }

  bulkDelete(
    keys: Iterable<Partial<T>> | AsyncIterable<Partial<T>>,
    options: BulkOptions,
  ): Promise<BulkResult<Partial<T>>> {
    return this.#bulk(keys, { kind: "delete" }, options);
  }

  #bulk<I extends object>(
    items: Iterable<I> | AsyncIterable<I>,
    write: BulkKind,
    options: BulkOptions,
  ): Promise<BulkResult<I>> {
    // Each unit's first action stands for its operation: the batch's actions are mapped back to them.
    const operationOf = new WeakMap<TransactionAction, PlannedOperation>();
    const toUnit = (item: I, index: number): WriteUnit<I> =>
      unitOfItem(this.#model, item, index, () => {
        const { unit, operation } = this.#unit(item, write);
        operationOf.set(unit.actions[0] as TransactionAction, operation);
        return unit;
      });
    const submit = async (partitionKey: string, actions: TransactionAction[]): Promise<SubmitOutcome> => {
      const operations: PlannedOperation[] = [];
      const positions: number[] = [];
      for (const action of actions) {
        const operation = operationOf.get(action);
        if (operation === undefined) continue;
        positions.push(operations.length);
        operations.push(operation);
      }
      const outcome: Required<SubmitOutcome> = { retries: 0, transactions: 0, failed: [] };
      await this.#commit(partitionKey, operations, positions, outcome);
      // The whole batch failed in one transaction: the scheduler reports it as the batch's failure.
      const [only, ...more] = outcome.failed;
      if (only !== undefined && more.length === 0 && only.units.length === positions.length) throw only.error;
      return outcome;
    };
    const batchLimits = this.#batchLimits();
    if (!Array.isArray(items)) return runBulk(items, toUnit, submit, { ...options, limits: batchLimits });
    // An array is in memory already: check every item before the first request, so bad input sends nothing.
    const prepared = new Map<I, WriteUnit<I>>();
    items.forEach((item, index) => {
      prepared.set(item, toUnit(item, index));
    });
    return runBulk(items, (item, index) => prepared.get(item) ?? toUnit(item, index), submit, {
      ...options,
      total: items.length,
      limits: batchLimits,
    });
  }

  /**
   * The plan of a bulk write of `items` from the state `assumed` gives: the batches it packs (as it
   * packs them), each the plan of its transaction; a batch whose plan does not fit one transaction,
   * as its two halves. Batches of several partitions are sent in parallel: with more than one batch,
   * every step is in one group.
   */
  async explain<I extends object>(
    items: readonly I[],
    write: BulkKind,
    assumed: (operation: PlannedOperation) => object | undefined,
  ): Promise<RenderedStep[]> {
    const planner = new BatchPlanner<I>(this.#batchLimits());
    const operationOf = new Map<WriteUnit<I>, PlannedOperation>();
    const batches: PlannedBatch<I>[] = [];
    items.forEach((item, position) => {
      const { unit, operation } = this.#unit(item, write);
      operationOf.set(unit, operation);
      batches.push(...planner.add(unit, position));
    });
    batches.push(...planner.closeAll());
    const groups = { next: 0 };
    const explainBatch = async (operations: PlannedOperation[]): Promise<RenderedStep[]> => {
      try {
        return await explainTransactionSteps(this.#runner, this.#planning, operations, assumed, groups);
      } catch (error) {
        if (!splittable(error) || operations.length < 2) throw error;
        const half = Math.ceil(operations.length / 2);
        return [
          ...(await explainBatch(operations.slice(0, half))),
          ...(await explainBatch(operations.slice(half))),
        ];
      }
    };
    const steps: RenderedStep[] = [];
    for (const batch of batches)
      steps.push(
        ...(await explainBatch(batch.units.map((unit) => operationOf.get(unit) as PlannedOperation))),
      );
    // The batches' own groups are nested in this one, which the plan's shape cannot say: one group.
    return batches.length < 2 ? steps : steps.map((step) => ({ ...step, group: 1 }));
  }

  /** The limits a batch is packed within: the summary rows ride in every batch, so room is left for them. */
  #batchLimits(): StoreLimits {
    const limits = this.#planning.limits;
    const reserved = this.#summaries?.reserved ?? 0;
    // The summary rows ride in every batch: leave them room (operations, and a margin of the payload).
    const batch =
      reserved === 0
        ? limits
        : {
            ...limits,
            maxTransactionOperations: limits.maxTransactionOperations - reserved,
            maxTransactionBytes: limits.maxTransactionBytes - SUMMARY_ROWS_MARGIN,
          };
    return feedBatchLimits(batch, this.#model.changeFeed !== undefined);
  }

  /**
   * One item as a unit: its operation (checked as a single write would be: values, keys, limits, a
   * summary row's key, a wide entity's rows) and, for packing, the rows it writes and an estimate of
   * the copies its plan adds in the partition.
   */
  #unit<I extends object>(item: I, write: BulkKind): { unit: WriteUnit<I>; operation: PlannedOperation } {
    const model = this.#model;
    const planning = this.#planning;
    const action = toAction(model, item, write);
    const operation = plannedOperation(model, action, item, `${write.kind} ${model.name}`);
    const { partitionKey, rowKey } = operation;
    this.#summaries?.assertNotSummaryKey(rowKey);
    const layout = this.#wide;
    if (layout !== undefined) assertWideRowKey(model.name, rowKey);
    const rows =
      action.kind === "delete" || layout === undefined ? [action] : layout.write(action.entity, undefined);
    if (layout !== undefined && action.kind !== "delete")
      assertEntityGroupFits(planning, model.name, this.#table, rowKey, rows, this.#summaries?.reserved ?? 0);
    else assertWithinLimits(planning.limits, action, () => `${model.name} (PartitionKey '${partitionKey}')`);
    const copies = this.#localCopies(action);
    // An upsert may move each copy (the old one deleted, the new one written): both are counted.
    const moves = action.kind === "upsert" ? 2 : 1;
    // Measured only when there are copies: the estimate serialises the entity.
    const bytes = copies === 0 || action.kind === "delete" ? 0 : estimateActionBytes(action, planning.limits);
    const unit: WriteUnit<I> = {
      item,
      partitionKey,
      // A wide entity's rows are packed as rows; the operation carries the entity whole.
      actions: layout === undefined ? [action] : rows,
      rowKeys: rows.map((row) => ("entity" in row ? row.entity.rowKey : row.rowKey)),
      ...(copies === 0 ? {} : { extra: { operations: copies * moves, bytes: copies * bytes } }),
    };
    return { unit, operation };
  }

  /**
   * The copies (and list index rows) an item has in its own partition: derived from the entity (which
   * refuses a value no index key can hold, before any request); for a delete, which names only keys,
   * one per index kept in the partition.
   */
  #localCopies(action: TransactionAction): number {
    const model = this.#model;
    if (!keepsCopies(model)) return 0;
    if (action.kind === "delete") {
      let count = 0;
      for (const index of model.indexes.values()) if (index.intraPartition) count++;
      return count;
    }
    const entity = model.mapper.fromWire({ ...action.entity, etag: "" });
    const refs = deriveCopyRefs(model, entity, this.#planning);
    return refs.filter((ref) => isLocal(ref, this.#table, action.entity.partitionKey)).length;
  }

  /**
   * Commits `operations` (one partition) as one transaction plan; a plan that does not fit one
   * transaction is committed as two halves, and a delete of an entity already gone is dropped (a
   * bulk delete's keys already gone count as deleted). Failures are recorded per transaction.
   */
  async #commit(
    partitionKey: string,
    operations: PlannedOperation[],
    positions: number[],
    outcome: Required<SubmitOutcome>,
  ): Promise<void> {
    let pending = operations;
    let at = positions;
    for (;;) {
      try {
        if (pending.length > 0) await commitTransaction(this.#runner, this.#planning, pending);
      } catch (error) {
        if (splittable(error) && pending.length > 1) {
          // Nothing was sent for a plan that does not fit: its halves are planned (and read) afresh.
          const half = Math.ceil(pending.length / 2);
          await this.#commit(partitionKey, pending.slice(0, half), at.slice(0, half), outcome);
          await this.#commit(partitionKey, pending.slice(half), at.slice(half), outcome);
          return;
        }
        const missing = missingDelete(
          error,
          pending.map((o) => o.action),
        );
        if (missing !== undefined) {
          pending = pending.filter((_, index) => index !== missing);
          at = at.filter((_, index) => index !== missing);
          continue;
        }
        // A period nobody wrote to has no table: every entity a batch of deletes names is gone.
        if (!(isTableNotFound(error) && pending.every((o) => o.action.kind === "delete")))
          outcome.failed.push({ units: at, error });
      }
      outcome.transactions++;
      return;
    }
  }
}

function splittable(error: unknown): boolean {
  return error instanceof ValidationError && SPLITTABLE.has(error.rule);
}
