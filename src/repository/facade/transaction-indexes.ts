import { ValidationError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import { etagIn } from "../../serialization/entity-etag.js";
import { partRowKey } from "../../serialization/wide-rows.js";
import type { StoredEntity, WireEntity } from "../../store/table-store.js";
import { ABSENT_ETAG } from "../core/absent-etag.js";
import {
  COPY_REFS_PROPERTY,
  type CopyRef,
  decodeCopyRefs,
  deriveCopyRefs,
  encodeCopyRefs,
  indexOf,
  isLocal,
} from "../core/copy-ref.js";
import { entityLayout, readEntity } from "../core/entity-layout.js";
import { isExpiredRow } from "../core/expiry.js";
import type { CompanionWrite } from "../core/group-companion.js";
import { isTableNotFound } from "../core/period-tables.js";
import type { Clock, Limited, PeriodTableLookup, Requests, Scoped, TableNaming } from "../core/requests.js";
import { trackedCopies } from "../index/copy-state.js";
import { foreignProperties } from "../index/foreign-properties.js";
import { entityMember } from "../index/list-index.js";
import { type ListChange, membershipChanges } from "../index/list-membership.js";
import { planLocalActions } from "../index/local-plan.js";
import { wideTransactionActions } from "../wide/wide-actions.js";
import type { PlannedOperation } from "./transaction.js";

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

/** An operation's copies in other partitions or tables: those it has before the commit and after. */
export interface RemoteCopies {
  /** The entity's row as written (only its keys for a delete). */
  row: WireEntity;
  before: CopyRef[];
  next: CopyRef[];
  /** The version replaced (the operation's condition), when one is: the copies it made are the ones removed. */
  priorEtag: string | undefined;
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
    const { model, action } = operation;
    const prior = priors[index];
    if (!model.wide && model.indexes.size === 0 && model.summaries.size === 0) {
      // A plain entity's operation goes as the caller gave it (no read: still one request), and
      // without the per-operation closures below (the common case, run for every operation).
      push(expanded, index, [operation]);
      expanded.copies.push(undefined);
      expanded.remote.push(undefined);
      expanded.summarized.push(undefined);
      continue;
    }
    const summarized = (write: Omit<CompanionWrite, "partitionKey" | "rowKey">) =>
      model.summaries.size === 0
        ? undefined
        : { partitionKey: operation.partitionKey, rowKey: operation.rowKey, ...write };
    const layout = model.wide ? entityLayout(model, runner, table) : undefined;
    if (model.wide && model.indexes.size === 0 && model.summaries.size === 0) {
      // Its rows, replacing what is stored.
      const actions = await wideTransactionActions(model, runner, table, action);
      push(
        expanded,
        index,
        actions.map((a) => copyOperation(operation, a)),
      );
      expanded.copies.push(undefined);
      expanded.remote.push(undefined);
      expanded.summarized.push(undefined);
      continue;
    }
    if (model.indexes.size === 0 && !layout) {
      // Without summaries the operation goes as the caller gave it (no read: still one request).
      const conditioned =
        model.summaries.size === 0
          ? { operation, condition: undefined, after: undefined }
          : conditionOn(operation, prior);
      push(expanded, index, [conditioned.operation]);
      expanded.copies.push(undefined);
      expanded.remote.push(undefined);
      expanded.summarized.push(
        summarized({ condition: conditioned.condition, before: prior?.stored, after: conditioned.after }),
      );
      continue;
    }
    const local = (ref: CopyRef) => isLocal(ref, table, operation.partitionKey);
    // List indexes keep index entities (one per value, listing members), not copies: see list-membership.ts.
    const isList = (ref: CopyRef) => indexOf(model, ref).list;
    const member = entityMember(model, runner, table, operation.partitionKey, operation.rowKey);
    if (action.kind === "delete") {
      if (!prior) {
        // Absent when planned: 404 as the service answers, or 412 (planned again) if it appeared meanwhile.
        const ifMatch = action.ifMatch === "*" ? ABSENT_ETAG : action.ifMatch;
        push(expanded, index, [{ ...operation, action: { ...action, ifMatch } }]);
        expanded.copies.push(undefined);
        expanded.remote.push(undefined);
        expanded.summarized.push(
          summarized({ condition: action.ifMatch, before: undefined, after: undefined }),
        );
        continue;
      }
      const ifMatch = action.ifMatch === "*" ? prior.etag : action.ifMatch;
      expanded.lists[index] = membershipChanges(prior.refs.filter(isList), [], member);
      const removal = layout
        ? layout
            .remove(operation.partitionKey, operation.rowKey, ifMatch)
            .map((a) => copyOperation(operation, a))
        : [{ ...operation, action: { ...action, ifMatch } }];
      const deletes = prior.refs
        .filter((ref) => local(ref) && !isList(ref))
        .map((ref) =>
          copyOperation(operation, {
            kind: "delete",
            partitionKey: ref.partitionKey,
            rowKey: ref.rowKey,
            ifMatch: "*",
          }),
        );
      push(expanded, index, [...removal, ...deletes]);
      expanded.copies.push([]);
      const remoteBefore = prior.refs.filter((ref) => !local(ref));
      expanded.remote.push(
        remoteBefore.length === 0
          ? undefined
          : {
              row: { partitionKey: operation.partitionKey, rowKey: operation.rowKey },
              before: remoteBefore,
              next: [],
              priorEtag: ifMatch,
            },
      );
      expanded.summarized.push(summarized({ condition: ifMatch, before: prior.stored, after: undefined }));
      continue;
    }
    if (!prior && action.kind === "update") {
      // The service will answer 404 for the whole transaction, as it would without indexes (a wide
      // entity: a merge of its first row's keys only, which cannot break a row limit first).
      const keysOnly = { partitionKey: operation.partitionKey, rowKey: partRowKey(operation.rowKey, 0) };
      const ifMatch = action.ifMatch === "*" ? ABSENT_ETAG : action.ifMatch;
      const missing: PlannedOperation["action"] = layout
        ? { kind: "update", entity: keysOnly, mode: "merge", ifMatch }
        : { ...action, ifMatch };
      push(expanded, index, [copyOperation(operation, missing)]);
      expanded.copies.push(undefined);
      expanded.remote.push(undefined);
      expanded.summarized.push(
        summarized({ condition: action.ifMatch, before: undefined, after: undefined }),
      );
      continue;
    }
    let wire: WireEntity = action.entity;
    if (prior && action.kind !== "insert" && action.mode === "merge") {
      // Copies need the whole entity: merge onto the stored properties here and replace.
      const stored = prior.stored ?? { ...wire, etag: prior.etag };
      const current = model.mapper.toWire(model.mapper.fromWire(stored));
      wire = { ...foreignProperties(model, stored), ...current, ...wire };
    }
    const next = deriveCopyRefs(model, model.mapper.fromWire({ ...wire, etag: "" }), runner);
    const row: WireEntity = { ...wire, [COPY_REFS_PROPERTY]: encodeCopyRefs(next) };
    const ifMatch = !prior
      ? undefined
      : action.kind === "update" && action.ifMatch !== "*"
        ? action.ifMatch
        : prior.etag;
    const copies = (refs: readonly CopyRef[]) => refs.filter((ref) => !isList(ref));
    expanded.lists[index] = membershipChanges(
      (prior?.refs ?? []).filter(isList),
      next.filter(isList),
      member,
    );
    const actions = planLocalActions(
      model,
      row,
      ifMatch,
      copies(prior?.refs ?? []),
      copies(next),
      local,
      layout?.write(row, ifMatch),
    );
    push(
      expanded,
      index,
      actions.map((a) => copyOperation(operation, a)),
    );
    expanded.copies.push(next);
    const remoteBefore = (prior?.refs ?? []).filter((ref) => !local(ref));
    const remoteNext = next.filter((ref) => !local(ref));
    expanded.remote.push(
      remoteBefore.length === 0 && remoteNext.length === 0
        ? undefined
        : { row, before: remoteBefore, next: remoteNext, priorEtag: ifMatch },
    );
    expanded.summarized.push(summarized({ condition: ifMatch, before: prior?.stored, after: row }));
  }
  for (let index = 0; index < operations.length; index++) expanded.lists[index] ??= [];
  return expanded;
}

/**
 * The operation of an entity without indexes, made conditional on the version read (an entity with
 * summaries: its summary delta is computed from that version); the ETag it is conditional on and
 * the row it leaves. Without a prior read (no summaries), the operation as the caller gave it.
 */
function conditionOn(
  operation: PlannedOperation,
  prior: PriorState | undefined,
): { operation: PlannedOperation; condition: string | undefined; after: WireEntity | undefined } {
  const { action } = operation;
  if (action.kind === "delete") {
    const ifMatch = action.ifMatch === "*" ? (prior?.etag ?? ABSENT_ETAG) : action.ifMatch;
    return {
      operation: { ...operation, action: { ...action, ifMatch } },
      condition: ifMatch,
      after: undefined,
    };
  }
  if (action.kind === "insert") return { operation, condition: undefined, after: action.entity };
  if (!prior) {
    // Absent: an upsert inserts (failing if the entity appears meanwhile); an update fails with 404
    // (an update with "*" stays conditional on the absence it was planned from: see ABSENT_ETAG).
    if (action.kind === "update") {
      const ifMatch = action.ifMatch === "*" ? ABSENT_ETAG : action.ifMatch;
      return {
        operation: { ...operation, action: { ...action, ifMatch } },
        condition: ifMatch,
        after: undefined,
      };
    }
    return {
      operation: { ...operation, action: { kind: "insert", entity: action.entity } },
      condition: undefined,
      after: action.entity,
    };
  }
  const ifMatch = action.kind === "update" && action.ifMatch !== "*" ? action.ifMatch : prior.etag;
  const after =
    action.mode === "merge" && prior.stored ? mergedRow(prior.stored, action.entity) : action.entity;
  return {
    operation: {
      ...operation,
      action: { kind: "update", entity: action.entity, mode: action.mode, ifMatch },
    },
    condition: ifMatch,
    after,
  };
}

/** A merge's result as the service stores it: the stored row with the sent properties laid over it. */
function mergedRow(stored: StoredEntity, sent: WireEntity): WireEntity {
  const { etag: _etag, ...row } = stored;
  for (const [name, value] of Object.entries(sent)) {
    if (value !== undefined && value !== null) row[name] = value;
  }
  return row as WireEntity;
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

function copyOperation(source: PlannedOperation, action: PlannedOperation["action"]): PlannedOperation {
  const keys = action.kind === "delete" ? action : action.entity;
  return { ...source, action, partitionKey: keys.partitionKey, rowKey: keys.rowKey };
}

/** The entity's stored ETag and copies: tracked from the last read or write, else read now. */
interface PriorState {
  etag: string;
  refs: readonly CopyRef[];
  stored?: StoredEntity;
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
