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
import { dependsOnStored, isPlainRow, keepsCopies } from "../core/entity-features.js";
import { isExpiredRow } from "../core/expiry.js";
import type { CompanionWrite } from "../core/group-companion.js";
import type { BlindIndexing, Clock, Limited, Planning, Scoped, TableNaming } from "../core/requests.js";
import { trackedCopies } from "../index/copy-state.js";
import type { ListChange } from "../index/list-membership.js";
import { wideTransactionRead } from "../wide/wide-actions.js";
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

/** What the reads step reads of one operation's entity before its plan: the entity whole, or a wide entity's rows. */
export type StoredRead = { kind: "entity" } | { kind: "wide rows"; select: readonly string[] | undefined };

/** What planning knows of each operation's entity before any request, and what the reads step reads. */
export interface PlannedReads {
  /** Per operation: the state tracked from its instance's last read or write, when its plan needs no more. */
  tracked: Array<PriorState | undefined>;
  /** Per operation: what is read of it (undefined: nothing). */
  reads: Array<StoredRead | undefined>;
}

/**
 * The reads a transaction's plan needs (one per entity whose copies or summary delta depend on what is
 * stored and whose instance does not track it; a wide entity's rows it replaces), once every rule that
 * needs none has passed. A pure planner: the executor reads, `expandIndexCopies` plans from the answers.
 */
export function plannedReads(
  operations: readonly PlannedOperation[],
  planning: Planning,
  table: string,
): PlannedReads {
  assertCopiesFit(operations, planning, table);
  const tracked: Array<PriorState | undefined> = [];
  const reads: Array<StoredRead | undefined> = [];
  for (const operation of operations) {
    const { model, action } = operation;
    // Without indexes or summaries nothing depends on what is stored (a wide entity's rows are replaced).
    const unkept = !dependsOnStored(model);
    const known = unkept ? undefined : trackedState(operation, planning);
    tracked.push(known);
    if (unkept) {
      const wide = model.wide ? wideTransactionRead(model, action) : undefined;
      reads.push(wide && { kind: "wide rows", select: wide.select });
    } else if (action.kind === "insert") {
      // An insert of an entity that expires reads what is stored: an expired row there is absent, and the
      // insert replaces it on its ETag (its copies and summaries see it leave); a live one refuses the insert.
      reads.push(model.expiry === undefined ? undefined : { kind: "entity" });
    } else reads.push(known === undefined ? { kind: "entity" } : undefined);
  }
  return { tracked, reads };
}

/**
 * Adds index copies to a transaction so they commit atomically with their entities, and makes the
 * action of every entity with summaries conditional on the version its summary delta is computed
 * from. Copies in other partitions cannot join an entity group transaction: they are listed per
 * operation (`remote`), for the intent written before the commit and the copy writes after it.
 * A pure planner: `stored` is what the reads of `planned` returned (undefined: absent, or not read).
 */
export function expandIndexCopies(
  operations: readonly PlannedOperation[],
  planning: Planning,
  table: string,
  planned: PlannedReads,
  stored: ReadonlyArray<StoredEntity | undefined>,
): ExpandedTransaction {
  const expanded: ExpandedTransaction = {
    operations: [],
    owners: [],
    copies: [],
    lists: [],
    remote: [],
    summarized: [],
  };
  for (const [index, operation] of operations.entries()) {
    const { model } = operation;
    if (isPlainRow(model)) {
      // A plain entity's operation goes as the caller gave it (no read: still one request), and
      // without the expansion of entities with features (the common case, run for every operation).
      push(expanded, index, [operation]);
      expanded.copies.push(undefined);
      expanded.remote.push(undefined);
      expanded.summarized.push(undefined);
      continue;
    }
    const prior = dependsOnStored(model)
      ? priorState(operation, planning, planned.tracked[index], stored[index])
      : undefined;
    const expansion = expandOperation(operation, prior, stored[index], planning, table);
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
  planning: TableNaming & Limited & Partial<BlindIndexing>,
  table: string,
): void {
  let total = 0;
  for (const operation of operations) {
    total += 1;
    const { model, action } = operation;
    if (!keepsCopies(model) || action.kind === "delete") continue;
    const entity = model.mapper.fromWire({ ...action.entity, etag: "" });
    const refs = deriveCopyRefs(model, entity, planning, true);
    total += refs.filter((ref) => isLocal(ref, table, operation.partitionKey)).length;
  }
  if (total > planning.limits.maxTransactionOperations) {
    throw new ValidationError(
      "transaction-operations",
      `A transaction holds at most ${planning.limits.maxTransactionOperations} operations including index copies; these ${operations.length} operations need at least ${total}`,
    );
  }
}

function push(expanded: ExpandedTransaction, owner: number, operations: PlannedOperation[]): void {
  for (const operation of operations) {
    expanded.operations.push(operation);
    expanded.owners.push(owner);
  }
}

/**
 * The entity's stored ETag and copies as tracked from its instance's last read or write, when its plan
 * needs no more (an insert needs none; a merge needs the whole row, so does a summary's delta).
 */
function trackedState(operation: PlannedOperation, planning: Scoped): PriorState | undefined {
  const { action, entity: source } = operation;
  if (action.kind === "insert" || !source) return undefined;
  const mergeNeedsRow =
    operation.model.summaries.size > 0 || (action.kind !== "delete" && action.mode === "merge");
  if (mergeNeedsRow) return undefined;
  const etag = etagIn(source, planning.scope);
  const refs = trackedCopies(source, planning.scope);
  return etag !== undefined && refs !== undefined ? { etag, refs } : undefined;
}

/** The entity's state the plan starts from: tracked, or as read (`stored`; undefined: absent). */
function priorState(
  operation: PlannedOperation,
  planning: TableNaming & Clock & Partial<BlindIndexing>,
  tracked: PriorState | undefined,
  stored: StoredEntity | undefined,
): PriorState | undefined {
  if (operation.action.kind === "insert") {
    // An expired row is absent to the insert, which replaces it on its ETag; a live one refuses it.
    if (!stored || !isExpiredRow(operation.model, stored, planning.now())) return undefined;
  } else if (tracked !== undefined) return tracked;
  if (!stored) return undefined;
  return { etag: stored.etag, refs: storedRefs(operation.model, stored, planning), stored };
}

/** The copies a stored row says it has (or, for rows written without them, what its values derive). */
function storedRefs(
  model: EntityModel,
  stored: StoredEntity,
  naming: TableNaming & Partial<BlindIndexing>,
): CopyRef[] {
  return (
    decodeCopyRefs(stored[COPY_REFS_PROPERTY]) ??
    deriveCopyRefs(model, model.mapper.fromWire(stored), naming, true)
  );
}
