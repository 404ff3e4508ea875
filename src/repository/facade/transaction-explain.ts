import { ValidationError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import { etagIn } from "../../serialization/entity-etag.js";
import type { StoredEntity } from "../../store/table-store.js";
import { COPY_REFS_PROPERTY, type CopyRef, encodeCopyRefs, indexOf, refKey } from "../core/copy-ref.js";
import { INTENTS_TABLE } from "../core/intent-log.js";
import type { RequestContext } from "../core/requests.js";
import type { PlanOperation, RenderedStep, StepTarget } from "../core/write-plan.js";
import { trackedCopies } from "../index/copy-state.js";
import type { PlannedOperation } from "./transaction.js";
import type { StoredReader } from "./transaction-indexes.js";
import type { LargeWork } from "./transaction-large.js";
import { planTransaction, type TransactionParts } from "./transaction-parts.js";

/** The version an explained transaction assumes of an entity given as stored that no read returned. */
const ASSUMED_ETAG = 'W/"assumed"';

/** Numbers the groups of steps sent in parallel, across the transactions of one plan (a bulk write's batches). */
export interface GroupCounter {
  next: number;
}

/**
 * The steps of one `db.transaction` (or bulk batch) as it runs from the state `assumed` gives,
 * planned by the code the transaction runs (`planTransaction`: its reads go to `assumed` instead of
 * the store) and rendered request by request, in the order `commitTransaction` sends them. The
 * requests of different entities that run together (their reads, uploads, intents and claims,
 * copies elsewhere) share a `group`: in any order among themselves.
 */
export async function explainTransactionSteps(
  runner: RequestContext,
  operations: readonly PlannedOperation[],
  assumed: (operation: PlannedOperation) => object | undefined,
  groups: GroupCounter,
): Promise<RenderedStep[]> {
  for (const { model } of operations) {
    // Its rows are replaced by what a read of their keys finds (wide-actions.ts), which is not planned here.
    if (model.wide && model.indexes.size === 0 && model.summaries.size === 0)
      throw new ValidationError(
        "explain",
        `${model.name}: a wide entity without indexes or summaries is not explained in a transaction`,
      );
  }
  const reads: StepTarget[] = [];
  const read: StoredReader = async (operation) => {
    const table = runner.tableName(operation.table);
    const { partitionKey, rowKey, model } = operation;
    const request = model.wide ? "query (current copies)" : "get (current copies)";
    reads.push({ request, table, partitionKey, rowKey });
    const entity = assumed(operation);
    return entity && storedRow(model, entity, runner);
  };
  const parts = await planTransaction(runner, operations, read);
  const { table, partitionKey, expanded, summaries, companions } = parts;
  const steps: RenderedStep[] = [];
  const together = (phase: RenderedStep["phase"], targets: readonly StepTarget[]) => {
    const group = targets.length > 1 ? ++groups.next : undefined;
    for (const target of targets) steps.push({ phase, ...target, ...(group === undefined ? {} : { group }) });
  };
  together("before", reads);
  together("before", largeReads(parts.large));
  together(
    "before",
    parts.large.flatMap((work) =>
      work.uploads.map((upload) => ({ request: `putBlob (${upload.field})`, table: work.large.container })),
    ),
  );
  const described = summaries.map((stage) => stage.describe());
  const isIntent = (step: StepTarget) => step.request === "insert summary intent";
  for (const description of described) together("before", description.before.filter(isIntent));
  together("before", remoteBegin(runner, operations, parts));
  // The summary rows are read (when not cached) as the commit is planned, each round.
  const rows = companions.map((companion) => companion.describe?.());
  together(
    "before",
    rows.flatMap((row) => (row?.before ?? []).filter((step) => !isIntent(step))),
  );
  const operationsOf: PlanOperation[] = expanded.operations.map((operation, at) => ({
    kind:
      at === 0 || expanded.owners[at - 1] !== expanded.owners[at]
        ? operation.action.kind
        : `${operation.action.kind} copy`,
    rowKey: operation.rowKey,
  }));
  companions.forEach((companion, at) => {
    const own = rows[at]?.operations;
    operationsOf.push(...(own ?? companion.rowKeys.map((rowKey) => ({ kind: "update", rowKey }))));
  });
  steps.push({ phase: "commit", request: "transaction", table, partitionKey, operations: operationsOf });
  together("after", remoteFinish(runner, operations, parts));
  for (const description of described) together("after", description.after);
  together("after", largeRemovals(parts.large, assumed));
  return steps;
}

/**
 * The entity as a read of it would have returned it: its row, under its tracked (or an assumed) ETag,
 * listing the copies tracked for it (an instance changed since its read still holds those).
 */
function storedRow(model: EntityModel<object>, entity: object, runner: RequestContext): StoredEntity {
  const refs = trackedCopies(entity, runner.scope);
  return {
    ...model.mapper.toWire(entity),
    ...(refs === undefined ? {} : { [COPY_REFS_PROPERTY]: encodeCopyRefs(refs) }),
    etag: etagIn(entity, runner.scope) ?? ASSUMED_ETAG,
  };
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

/** Each entity's intent, then its claims of unique values it does not hold yet (`beginRemoteWork`). */
function remoteBegin(
  runner: RequestContext,
  operations: readonly PlannedOperation[],
  { expanded }: TransactionParts,
): StepTarget[] {
  const intents = runner.tableName(INTENTS_TABLE);
  return expanded.remote.flatMap((copies, index) => {
    if (copies === undefined) return [];
    const { model } = operations[index] as PlannedOperation;
    const held = new Set(copies.before.map(refKey));
    const claims = copies.next.filter(
      (ref) => !indexOf(model, ref).list && indexOf(model, ref).unique && !held.has(refKey(ref)),
    );
    return [
      { request: "insert intent", table: intents },
      ...claims.map((ref) => target(`claim (${ref.index})`, ref)),
    ];
  });
}

/** Each entity's copies elsewhere written and stale ones removed, its lists, the race settled, the intent removed (`finishRemoteWork`). */
function remoteFinish(
  runner: RequestContext,
  operations: readonly PlannedOperation[],
  { expanded, isLocalChange, table }: TransactionParts,
): StepTarget[] {
  const intents = runner.tableName(INTENTS_TABLE);
  return expanded.remote.flatMap((copies, index) => {
    if (copies === undefined) return [];
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
    return [
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
      { request: "delete intent", table: intents },
    ];
  });
}

/** The blobs each operation's stored row points at that its written row no longer does (`LargeValues.replaced`). */
function largeRemovals(
  large: readonly LargeWork[],
  assumed: (operation: PlannedOperation) => object | undefined,
): StepTarget[] {
  return large.flatMap(({ large: values, operation }) => {
    const { action } = operation;
    if (action.kind === "insert") return [];
    const stored = assumed(operation) as Record<string, unknown> | undefined;
    const written = (operation.entity ?? {}) as Record<string, unknown>;
    const merge = action.kind !== "delete" && action.mode === "merge";
    return values.columns
      .filter((column) => stored?.[column.field] != null && !(merge && written[column.field] == null))
      .map((column) => ({ request: `deleteBlob (replaced ${column.field})`, table: values.container }));
  });
}

function target(request: string, ref: CopyRef): StepTarget {
  return { request, table: ref.table, partitionKey: ref.partitionKey, rowKey: ref.rowKey };
}
