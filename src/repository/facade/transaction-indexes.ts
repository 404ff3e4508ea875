import { ValidationError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import { etagIn } from "../../serialization/entity-etag.js";
import type { StoredEntity } from "../../store/table-store.js";
import {
  COPY_REFS_PROPERTY,
  type CopyRef,
  decodeCopyRefs,
  deriveCopyRefs,
  isLocal,
} from "../core/copy-ref.js";
import { readEntity } from "../core/entity-layout.js";
import { isExpiredRow } from "../core/expiry.js";
import type { CompanionWrite } from "../core/group-companion.js";
import { isTableNotFound } from "../core/period-tables.js";
import type { Clock, Limited, PeriodTableLookup, Requests, Scoped, TableNaming } from "../core/requests.js";
import { trackedCopies } from "../index/copy-state.js";
import type { ListChange } from "../index/list-membership.js";
import type { PlannedOperation } from "./transaction.js";
import { expandOperation, type PriorState, type RemoteCopies } from "./transaction-operation-expansion.js";

/** A transaction with each indexed entity's same-partition copies added, and how to map back. */
export interface ExpandedTransaction {
  operations: PlannedOperation[];
  /** For each expanded operation, the index of the caller's operation it came from. */
  owners: number[];
  /** For each caller operation, the copies its entity has after the commit (undefined: no indexes). */
  copies: Array<CopyRef[] | undefined>;
  /** For each caller operation, its copies elsewhere (kept through an intent, as for single writes). */
  remote: Array<RemoteCopies | undefined>;
  /** For each caller operation of an entity with summaries, the write as its summary rows see it. */
  summarized: Array<CompanionWrite | undefined>;
  /** For each caller operation, its membership changes of list indexes' index entities. */
  lists: ListChange[][];
}

/**
 * Adds index copies to a transaction so they commit atomically with their entities, and makes the
 * action of every entity with summaries conditional on the version its summary delta is computed
 * from. Copies in other partitions cannot join an entity group transaction: they are listed per
 * operation (`remote`), for the intent written before the commit and the copy writes after it.
 */
export async function expandIndexCopies(
  operations: readonly PlannedOperation[],
  runner: Requests & TableNaming & Scoped & Limited & PeriodTableLookup & Clock,
  table: string,
  read: StoredReader = (operation) => readStored(operation, runner, table),
): Promise<ExpandedTransaction> {
  const expanded: ExpandedTransaction = {
    operations: [],
    owners: [],
    copies: [],
    lists: [],
    remote: [],
    summarized: [],
  };
  assertCopiesFit(operations, runner, table);
  // Reads of the entities' current copies, in parallel, only after every rule that needs none has passed.
  const priors = await Promise.all(
    operations.map((operation) =>
      operation.model.indexes.size === 0 && operation.model.summaries.size === 0
        ? undefined
        : priorState(operation, runner, read),
    ),
  );
  for (const [index, operation] of operations.entries()) {
    const { model } = operation;
    const prior = priors[index];
    if (!model.wide && model.indexes.size === 0 && model.summaries.size === 0) {
      // A plain entity's operation goes as the caller gave it (no read: still one request), and
      // without the expansion of entities with features (the common case, run for every operation).
      push(expanded, index, [operation]);
      expanded.copies.push(undefined);
      expanded.remote.push(undefined);
      expanded.summarized.push(undefined);
      continue;
    }
    const expansion = await expandOperation(operation, prior, runner, table);
    push(expanded, index, expansion.operations);
    expanded.copies.push(expansion.copies);
    expanded.remote.push(expansion.remote);
    expanded.summarized.push(expansion.summarized);
    if (expansion.lists !== undefined) expanded.lists[index] = expansion.lists;
  }
  for (let index = 0; index < operations.length; index++) expanded.lists[index] ??= [];
  return expanded;
}

/**
 * The operation limit counted with index copies, before any read: every entity brings at least
 * the copies its values derive in its own partition (stale ones to delete can only add more).
 */
function assertCopiesFit(
  operations: readonly PlannedOperation[],
  runner: TableNaming & Limited,
  table: string,
): void {
  let total = 0;
  for (const operation of operations) {
    total += 1;
    const { model, action } = operation;
    if (model.indexes.size === 0 || action.kind === "delete") continue;
    const entity = model.mapper.fromWire({ ...action.entity, etag: "" });
    const refs = deriveCopyRefs(model, entity, runner, true);
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

/** Reads the entity an operation writes as stored now (undefined: absent): the transaction's only read before its plan. */
export type StoredReader = (operation: PlannedOperation) => Promise<StoredEntity | undefined>;

function readStored(
  operation: PlannedOperation,
  runner: Requests & TableNaming & PeriodTableLookup,
  table: string,
): Promise<StoredEntity | undefined> {
  return readEntity(operation.model, runner, table, operation.partitionKey, operation.rowKey).catch(
    (error: unknown) => {
      // A period's table nobody has written to yet holds no entity (the commit creates it).
      if (isTableNotFound(error) && runner.periodTables.has(table)) return undefined;
      throw error;
    },
  );
}

async function priorState(
  operation: PlannedOperation,
  runner: TableNaming & Scoped & Clock,
  read: StoredReader,
): Promise<PriorState | undefined> {
  // An insert of an entity that expires reads what is stored: an expired row there is absent, and the
  // insert replaces it on its ETag (its copies and summaries see it leave); a live one refuses the insert.
  if (operation.action.kind === "insert" && operation.model.expiry !== undefined) {
    const stored = await read(operation);
    if (!stored || !isExpiredRow(operation.model, stored, runner.now())) return undefined;
    return { etag: stored.etag, refs: storedRefs(operation.model, stored, runner), stored };
  }
  const source = operation.entity;
  // A merge needs the whole row; so does a summary's delta (the row's values before the write).
  const mergeNeedsRow =
    operation.model.summaries.size > 0 ||
    (operation.action.kind !== "delete" &&
      operation.action.kind !== "insert" &&
      operation.action.mode === "merge");
  if (operation.action.kind === "insert") return undefined;
  if (source && !mergeNeedsRow) {
    const etag = etagIn(source, runner.scope);
    const refs = trackedCopies(source, runner.scope);
    if (etag !== undefined && refs !== undefined) return { etag, refs };
  }
  const stored = await read(operation);
  if (!stored) return undefined;
  return { etag: stored.etag, refs: storedRefs(operation.model, stored, runner), stored };
}

/** The copies a stored row says it has (or, for rows written without them, what its values derive). */
function storedRefs(model: EntityModel, stored: StoredEntity, runner: TableNaming & Scoped): CopyRef[] {
  return (
    decodeCopyRefs(stored[COPY_REFS_PROPERTY]) ??
    deriveCopyRefs(model, model.mapper.fromWire(stored), runner, true)
  );
}
