import { ValidationError } from "../errors.js";
import { etagIn } from "../serialization/entity-etag.js";
import type { StoredEntity, WireEntity } from "../store/table-store.js";
import {
  COPY_REFS_PROPERTY,
  type CopyRef,
  decodeCopyRefs,
  deriveCopyRefs,
  encodeCopyRefs,
  isLocal,
} from "./index/copy-ref.js";
import { trackedCopies } from "./index/copy-state.js";
import { foreignProperties } from "./index/foreign-properties.js";
import { planLocalActions } from "./index/local-plan.js";
import { isTableNotFound } from "./period-tables.js";
import type { StoreRunner } from "./store-runner.js";
import type { PlannedOperation } from "./transaction.js";

/** A transaction with each indexed entity's same-partition copies added, and how to map back. */
export interface ExpandedTransaction {
  operations: PlannedOperation[];
  /** For each expanded operation, the index of the caller's operation it came from. */
  owners: number[];
  /** For each caller operation, the copies its entity has after the commit (undefined: no indexes). */
  copies: Array<CopyRef[] | undefined>;
}

/**
 * Adds index copies to a transaction so they commit atomically with their entities. Copies in
 * other partitions cannot join an entity group transaction: entities with such indexes are
 * rejected here (write them through the repository, which keeps those copies consistent).
 */
export async function expandIndexCopies(
  operations: readonly PlannedOperation[],
  runner: StoreRunner,
  table: string,
): Promise<ExpandedTransaction> {
  const expanded: ExpandedTransaction = { operations: [], owners: [], copies: [] };
  assertCopiesFit(operations, runner, table);
  // Reads of the entities' current copies, in parallel, only after every rule that needs none has passed.
  const priors = await Promise.all(
    operations.map((operation) =>
      operation.model.indexes.size === 0 ? undefined : priorState(operation, runner, table),
    ),
  );
  for (const [index, operation] of operations.entries()) {
    const { model, action } = operation;
    if (model.indexes.size === 0) {
      push(expanded, index, [operation]);
      expanded.copies.push(undefined);
      continue;
    }
    for (const indexModel of model.indexes.values()) {
      if (!indexModel.intraPartition) {
        throw new ValidationError(
          "transaction-remote-index",
          `operation ${index} (${operation.describe}): index ${indexModel.name} keeps copies in another partition or table, which cannot join a transaction; write this entity through its repository`,
        );
      }
    }
    const local = (ref: CopyRef) => isLocal(ref, table, operation.partitionKey);
    const tableName = (t: string) => runner.tableName(t);
    const prior = priors[index];
    if (action.kind === "delete") {
      if (!prior) {
        push(expanded, index, [operation]);
        expanded.copies.push(undefined);
        continue;
      }
      const ifMatch = action.ifMatch === "*" ? prior.etag : action.ifMatch;
      const deletes = prior.refs.filter(local).map((ref) =>
        copyOperation(operation, {
          kind: "delete",
          partitionKey: ref.partitionKey,
          rowKey: ref.rowKey,
          ifMatch: "*",
        }),
      );
      push(expanded, index, [{ ...operation, action: { ...action, ifMatch } }, ...deletes]);
      expanded.copies.push([]);
      continue;
    }
    if (!prior && action.kind === "update") {
      // The service will answer 404 for the whole transaction, as it would without indexes.
      push(expanded, index, [operation]);
      expanded.copies.push(undefined);
      continue;
    }
    let wire: WireEntity = action.entity;
    if (prior && action.kind !== "insert" && action.mode === "merge") {
      // Copies need the whole entity: merge onto the stored properties here and replace.
      const stored = prior.stored ?? { ...wire, etag: prior.etag };
      const current = model.mapper.toWire(model.mapper.fromWire(stored));
      wire = { ...foreignProperties(model, stored), ...current, ...wire };
    }
    const next = deriveCopyRefs(model, model.mapper.fromWire({ ...wire, etag: "" }), tableName);
    const row: WireEntity = { ...wire, [COPY_REFS_PROPERTY]: encodeCopyRefs(next) };
    const ifMatch = !prior
      ? undefined
      : action.kind === "update" && action.ifMatch !== "*"
        ? action.ifMatch
        : prior.etag;
    const actions = planLocalActions(model, row, ifMatch, prior?.refs ?? [], next, local);
    push(
      expanded,
      index,
      actions.map((a) => copyOperation(operation, a)),
    );
    expanded.copies.push(next);
  }
  return expanded;
}

/**
 * The operation limit counted with index copies, before any read: every entity brings at least
 * the copies its values derive in its own partition (stale ones to delete can only add more).
 */
function assertCopiesFit(operations: readonly PlannedOperation[], runner: StoreRunner, table: string): void {
  let total = 0;
  for (const operation of operations) {
    total += 1;
    const { model, action } = operation;
    if (model.indexes.size === 0 || action.kind === "delete") continue;
    const entity = model.mapper.fromWire({ ...action.entity, etag: "" });
    const refs = deriveCopyRefs(model, entity, (t) => runner.tableName(t), true);
    total += refs.filter((ref) => isLocal(ref, table, operation.partitionKey)).length;
  }
  if (total > runner.limits.maxTransactionOperations) {
    throw new ValidationError(
      "transaction-operations",
      `A transaction holds at most ${runner.limits.maxTransactionOperations} operations including index copies; these ${operations.length} operations need at least ${total}`,
    );
  }
}

function push(expanded: ExpandedTransaction, owner: number, operations: PlannedOperation[]): void {
  for (const operation of operations) {
    expanded.operations.push(operation);
    expanded.owners.push(owner);
  }
}

function copyOperation(source: PlannedOperation, action: PlannedOperation["action"]): PlannedOperation {
  const keys = action.kind === "delete" ? action : action.entity;
  return { ...source, action, partitionKey: keys.partitionKey, rowKey: keys.rowKey };
}

/** The entity's stored ETag and copies: tracked from the last read or write, else read now. */
async function priorState(
  operation: PlannedOperation,
  runner: StoreRunner,
  table: string,
): Promise<{ etag: string; refs: readonly CopyRef[]; stored?: StoredEntity } | undefined> {
  const source = operation.entity;
  const mergeNeedsRow =
    operation.action.kind !== "delete" &&
    operation.action.kind !== "insert" &&
    operation.action.mode === "merge";
  if (operation.action.kind === "insert") return undefined;
  if (source && !mergeNeedsRow) {
    const etag = etagIn(source, runner.scope);
    const refs = trackedCopies(source, runner.scope);
    if (etag !== undefined && refs !== undefined) return { etag, refs };
  }
  const stored = await runner
    .run("get", table, (s) => s.getEntity(table, operation.partitionKey, operation.rowKey))
    .catch((error: unknown) => {
      // A period's table nobody has written to yet holds no entity (the commit creates it).
      if (isTableNotFound(error) && runner.periodTables.has(table)) return undefined;
      throw error;
    });
  if (!stored) return undefined;
  const model = operation.model;
  const refs =
    decodeCopyRefs(stored[COPY_REFS_PROPERTY]) ??
    deriveCopyRefs(model, model.mapper.fromWire(stored), (t) => runner.tableName(t), true);
  return { etag: stored.etag, refs, stored };
}
