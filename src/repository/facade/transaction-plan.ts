import { type CopyRef, indexOf, refKey } from "../core/copy-ref.js";
import type { StageDescription } from "../core/group-companion.js";
import { INTENTS_TABLE } from "../core/intent-log.js";
import type { TableNaming } from "../core/requests.js";
import type { PlanOperation, StepTarget } from "../core/write-plan.js";
import type { PlannedOperation } from "./transaction.js";
import type { LargeWork } from "./transaction-large.js";
import type { TransactionParts } from "./transaction-parts.js";

/** What a step of a transaction's plan does (the send path runs each kind; explain renders its requests). */
export type TransactionStepKind =
  /** Before: the large references each replacing operation's row holds now (`readReplaced`). */
  | "replaced references"
  /** Before: the large values uploaded (the rows point at them). */
  | "uploads"
  /** Before, per summary stage: its intent, when a summary is kept in another partition. */
  | "summary intent"
  /** Before: each entity's intent, then its claims of unique values it does not hold yet (`beginRemoteWork`). */
  | "remote begin"
  /** Before: the rows riding in the commit read as it is planned, each round (the commit's rounds send them). */
  | "companion reads"
  /** After: each entity's copies elsewhere, its lists, the race settled, the intent removed (`finishRemoteWork`). */
  | "remote finish"
  /** After, per summary stage: each remote contribution mirrored, the intent removed. */
  | "summary mirrors"
  /** After: the blobs each replaced row pointed at that its written row no longer does. */
  | "replaced blobs";

/** A step before or after the commit: the requests it sends, in any order among themselves. */
export interface TransactionStep {
  readonly kind: TransactionStepKind;
  /** The summary stage the step is of (`summary intent`, `summary mirrors`). */
  readonly stage?: number;
  readonly requests: readonly StepTarget[];
}

/**
 * The plan of one transaction (or bulk batch), as data: its steps in the order they are sent, and the
 * commit's operations. `commitTransaction` runs each step; `db.explainTransaction` renders each step's
 * requests: both derive from this one description, so the explained plan cannot drift from what is sent.
 */
export interface TransactionPlan {
  readonly before: readonly TransactionStep[];
  readonly commit: {
    readonly request: "transaction";
    readonly table: string;
    readonly partitionKey: string;
    readonly operations: PlanOperation[];
  };
  readonly after: readonly TransactionStep[];
}

/**
 * The plan of a transaction from its parts (`planTransaction`). `stored` is the state the plan assumes
 * of each operation's entity: the blobs a replaced row points at are known to the send path only once
 * the first step has read its references, so the send path's plan lists none (its step removes those
 * it finds); an explained plan lists those of the state it is given.
 */
export function transactionPlan(
  runner: TableNaming,
  operations: readonly PlannedOperation[],
  parts: TransactionParts,
  stored: (operation: PlannedOperation) => object | undefined,
): TransactionPlan {
  const { table, partitionKey, summaries, companions, large } = parts;
  const described = summaries.map((stage) => stage.describe());
  const isIntent = (step: StepTarget) => step.request === "insert summary intent";
  const rows = companions.map((companion) => companion.describe?.());
  const before: TransactionStep[] = [
    { kind: "replaced references", requests: largeReads(large) },
    { kind: "uploads", requests: largeUploads(large) },
    ...described.map(
      (description, stage): TransactionStep => ({
        kind: "summary intent",
        stage,
        requests: description.before.filter(isIntent),
      }),
    ),
    { kind: "remote begin", requests: remoteBegin(runner, operations, parts) },
    {
      kind: "companion reads",
      requests: rows.flatMap((row) => (row?.before ?? []).filter((s) => !isIntent(s))),
    },
  ];
  const after: TransactionStep[] = [
    { kind: "remote finish", requests: remoteFinish(runner, operations, parts) },
    ...described.map(
      (description, stage): TransactionStep => ({
        kind: "summary mirrors",
        stage,
        requests: description.after,
      }),
    ),
    { kind: "replaced blobs", requests: largeRemovals(large, stored) },
  ];
  return {
    before,
    commit: { request: "transaction", table, partitionKey, operations: commitOperations(parts, rows) },
    after,
  };
}

/** The commit's operations: each entity's action, then its copies and rows, then the companions' rows. */
function commitOperations(
  { expanded, companions }: TransactionParts,
  rows: ReadonlyArray<StageDescription | undefined>,
): PlanOperation[] {
  const operations: PlanOperation[] = expanded.operations.map((operation, at) => ({
    // An entity's first action is its own; the ones after it (same owner) are its copies and rows.
    kind:
      at === 0 || expanded.owners[at - 1] !== expanded.owners[at]
        ? operation.action.kind
        : `${operation.action.kind} copy`,
    rowKey: operation.rowKey,
  }));
  companions.forEach((companion, at) => {
    const own = rows[at]?.operations;
    operations.push(...(own ?? companion.rowKeys.map((rowKey) => ({ kind: "update", rowKey }))));
  });
  return operations;
}

/** The references each replacing operation's row holds now (`readReplaced`). */
function largeReads(large: readonly LargeWork[]): StepTarget[] {
  return large
    .filter((work) => work.operation.action.kind !== "insert")
    .map(({ large: values, operation }) => ({
      request: "get (large references)",
      table: values.table,
      partitionKey: operation.partitionKey,
      rowKey: operation.rowKey,
    }));
}

function largeUploads(large: readonly LargeWork[]): StepTarget[] {
  return large.flatMap((work) =>
    work.uploads.map((upload) => ({ request: `putBlob (${upload.field})`, table: work.large.container })),
  );
}

/** Each entity's intent, then its claims of unique values it does not hold yet (`beginRemoteWork`). */
function remoteBegin(
  runner: TableNaming,
  operations: readonly PlannedOperation[],
  { expanded }: TransactionParts,
): StepTarget[] {
  const steps: StepTarget[] = [];
  expanded.remote.forEach((copies, index) => {
    if (copies === undefined) return;
    const { model } = operations[index] as PlannedOperation;
    const held = new Set(copies.before.map(refKey));
    const claims = copies.next.filter(
      (ref) => !indexOf(model, ref).list && indexOf(model, ref).unique && !held.has(refKey(ref)),
    );
    steps.push(
      { request: "insert intent", table: runner.tableName(INTENTS_TABLE) },
      ...claims.map((ref) => target(`claim (${ref.index})`, ref)),
    );
  });
  return steps;
}

/** Each entity's copies elsewhere written and stale ones removed, its lists, the race settled, the intent removed (`finishRemoteWork`). */
function remoteFinish(
  runner: TableNaming,
  operations: readonly PlannedOperation[],
  { expanded, isLocalChange, table }: TransactionParts,
): StepTarget[] {
  const steps: StepTarget[] = [];
  expanded.remote.forEach((copies, index) => {
    if (copies === undefined) return;
    const { model, partitionKey, rowKey } = operations[index] as PlannedOperation;
    const isList = (ref: CopyRef) => indexOf(model, ref).list;
    const keep = new Set(copies.next.map(refKey));
    const held = new Set(copies.before.map(refKey));
    const lists = (expanded.lists[index] ?? []).filter((change) => !isLocalChange(change, index));
    // Every copy (a claim too) stamped with the version committed (copy-stamp.ts); a unique value's
    // only over this write's own (`writeUniqueCopy`): a kept value's copy is read first.
    const write = (ref: CopyRef): StepTarget[] => {
      if (!indexOf(model, ref).unique) return [target(`upsert copy (${ref.index})`, ref)];
      const replace = target(`replace copy (${ref.index})`, ref);
      return held.has(refKey(ref)) ? [target(`get kept copy (${ref.index})`, ref), replace] : [replace];
    };
    steps.push(
      ...copies.next.filter((ref) => !isList(ref)).flatMap(write),
      // A replaced copy read, then removed if the replaced version made it (`releaseCopy`).
      ...copies.before
        .filter((ref) => !isList(ref) && !keep.has(refKey(ref)))
        .flatMap((ref) => [
          target(`get replaced copy (${ref.index})`, ref),
          target(`delete replaced copy (${ref.index})`, ref),
        ]),
      ...lists.map((change) => target(`update list (${change.ref.index})`, change.ref)),
      // The settle rule (issue 34): the entity read once more; as the plan assumes no other writer, it
      // is the state this write left (absent after a delete), so nothing is reconciled.
      { request: "get (settle race)", table, partitionKey, rowKey },
      { request: "delete intent", table: runner.tableName(INTENTS_TABLE) },
    );
  });
  return steps;
}

/** The blobs each operation's stored row points at that its written row no longer does (`LargeValues.replaced`). */
function largeRemovals(
  large: readonly LargeWork[],
  stored: (operation: PlannedOperation) => object | undefined,
): StepTarget[] {
  return large.flatMap(({ large: values, operation }) => {
    const { action } = operation;
    if (action.kind === "insert") return [];
    const row = stored(operation) as Record<string, unknown> | undefined;
    const written = (operation.entity ?? {}) as Record<string, unknown>;
    const merge = action.kind !== "delete" && action.mode === "merge";
    return values.columns
      .filter((column) => row?.[column.field] != null && !(merge && written[column.field] == null))
      .map((column) => ({ request: `deleteBlob (replaced ${column.field})`, table: values.container }));
  });
}

function target(request: string, ref: CopyRef): StepTarget {
  return { request, table: ref.table, partitionKey: ref.partitionKey, rowKey: ref.rowKey };
}
