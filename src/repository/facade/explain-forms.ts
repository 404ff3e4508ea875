import { ValidationError } from "../../errors.js";
import { type EntityModel, modelOfInstance } from "../../schema/entity-model.js";
import { etagIn } from "../../serialization/entity-etag.js";
import type { TableStore } from "../../store/table-store.js";
import { BatchPlanner } from "../core/bulk/batch-planner.js";
import type { WriteUnit } from "../core/bulk/bulk-types.js";
import { type BulkKind, toAction } from "../core/bulk/bulk-writer.js";
import type { RequestContext } from "../core/requests.js";
import type { RenderedStep } from "../core/write-plan.js";
import { assertBlobStore } from "../large/large-values.js";
import { feedBatchLimits } from "../pipeline/feed/feed-plan.js";
import { EventualTransaction } from "./eventual/eventual-transaction.js";
import { type EventualExplainDeps, explainEventually } from "./eventual/explain-eventually.js";
import { withFeedSteps } from "./explain-feed.js";
import type { ExplainOptions, WritePlan } from "./explain-write.js";
import { assertValidTransaction, type PlannedOperation, Transaction } from "./transaction.js";
import { explainTransactionSteps } from "./transaction-explain.js";

/**
 * `db.explainTransaction`: the operations the callback adds, checked as `db.transaction` checks them
 * (no request), planned and rendered by the transaction's own planner from the state
 * `options.current` gives (see `explainTransactionSteps`).
 */
export async function explainTransaction(
  runner: RequestContext,
  store: TableStore,
  build: (tx: Transaction) => unknown,
  options: ExplainOptions,
  claim: (model: EntityModel<object>) => void,
): Promise<WritePlan> {
  const tx = Transaction.build(runner.scope);
  await build(tx);
  const operations = tx.operations;
  for (const operation of operations) {
    claim(operation.model);
    assertBlobStore(operation.model, store);
  }
  assertValidTransaction(operations, runner.limits, (t) => runner.tableName(t));
  const assumed = assumedOperations(runner, options);
  const steps = await explainTransactionSteps(runner, runner, operations, assumed, { next: 0 });
  const stored = new Set(
    operations
      .filter((operation) => assumed(operation) !== undefined)
      .map((operation) => rowAt(runner.tableName(operation.table), operation.partitionKey, operation.rowKey)),
  );
  return { steps: withFeedSteps(steps, runner.feed, (...at) => stored.has(rowAt(...at))) };
}

/** A row's place, as a key of a set. */
export function rowAt(table: string, partitionKey: string, rowKey: string): string {
  return `${table}\u0001${partitionKey}\u0001${rowKey}`;
}

/** The callback of `db.eventually` (and `db.explainEventually`): it adds the steps. */
export type EventualBuild = (tx: EventualTransaction) => unknown;

/** `db.explainEventually`: the steps the callback adds, planned from the state `options.current` gives. */
export async function explainEventual(
  deps: EventualExplainDeps,
  runner: RequestContext,
  build: EventualBuild,
  options: ExplainOptions,
): Promise<WritePlan> {
  const tx = EventualTransaction.build(runner.scope, (table) => runner.tableName(table));
  await build(tx);
  const assumed = assumedOperations(runner, options);
  return explainEventually(deps, tx, (step) =>
    assumed({ entity: step.source, model: step.model, ...step.wire }),
  );
}

/**
 * The state an explained transaction assumes for each operation: its own instance when a read
 * returned it (its ETag is tracked), else the entity of `current` of the same class and keys, else nothing.
 */
export function assumedOperations(
  runner: RequestContext,
  { current }: ExplainOptions,
): (operation: Pick<PlannedOperation, "entity" | "model" | "partitionKey" | "rowKey">) => object | undefined {
  const stored = new Map<string, object>();
  for (const entity of current ?? []) {
    if (entity === null || typeof entity !== "object")
      throw new ValidationError("current", `options.current holds entities, not '${String(entity)}'`);
    const model = modelOfInstance(entity);
    const values = entity as Record<string, unknown>;
    const at = [
      model.table,
      model.partitionKey.encode(values, "PartitionKey"),
      model.rowKey.encode(values, "RowKey"),
    ].join("\u0001");
    stored.set(at, entity);
  }
  return (operation) => {
    const own = operation.entity;
    if (own !== undefined && etagIn(own, runner.scope) !== undefined) return own;
    return stored.get([operation.model.table, operation.partitionKey, operation.rowKey].join("\u0001"));
  };
}

/**
 * The plan of a plain entity's bulk write (`writeBulk`): its batches as it packs them, each one
 * entity group transaction of its rows; several batches are sent in parallel (one group).
 */
export function explainPlainBulk<T extends object>(
  runner: RequestContext,
  model: EntityModel<T>,
  table: string,
  items: readonly T[],
  write: BulkKind,
): RenderedStep[] {
  // Packed as the bulk writer packs them: a change-fed entity's batches keep room for the feed's rows.
  const planner = new BatchPlanner<T>(feedBatchLimits(runner.limits, model.changeFeed !== undefined));
  const batches = items.flatMap((item, position) => {
    const action = toAction(model, item, write);
    const keys = action.kind === "delete" ? action : action.entity;
    const unit: WriteUnit<T> = {
      item,
      partitionKey: keys.partitionKey,
      actions: [action],
      rowKeys: [keys.rowKey],
    };
    return planner.add(unit, position);
  });
  batches.push(...planner.closeAll());
  return batches.map((batch) => ({
    phase: "commit",
    request: "transaction",
    table,
    partitionKey: batch.partitionKey,
    operations: batch.actions.map((action) => ({
      kind: action.kind,
      rowKey: action.kind === "delete" ? action.rowKey : action.entity.rowKey,
    })),
    ...(batches.length > 1 ? { group: 1 } : {}),
  }));
}

/** Plans sent one after another, as one plan: each plan's parallel groups numbered apart from the others'. */
export function inSequence(plans: readonly WritePlan[]): WritePlan {
  const steps: WritePlan["steps"] = [];
  let offset = 0;
  for (const plan of plans) {
    let next = offset;
    for (const step of plan.steps) {
      if (step.group === undefined) steps.push(step);
      else {
        steps.push({ ...step, group: step.group + offset });
        next = Math.max(next, step.group + offset + 1);
      }
    }
    offset = next;
  }
  return { steps };
}
