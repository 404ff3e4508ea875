import { partRowKey } from "../../serialization/wide-rows.js";
import type { StoredEntity, WireEntity } from "../../store/table-store.js";
import { ABSENT_ETAG } from "../core/absent-etag.js";
import { type CopyRef, deriveCopyRefs, indexOf, isLocal, withCopyRefs } from "../core/copy-ref.js";
import { dependsOnStored, keepsCopies } from "../core/entity-features.js";
import { type EntityRows, entityRows } from "../core/entity-layout.js";
import type { CompanionWrite } from "../core/group-companion.js";
import type { Planning } from "../core/requests.js";
import { foreignProperties } from "../index/foreign-properties.js";
import { entityMember } from "../index/list-index.js";
import { type ListChange, membershipChanges } from "../index/list-membership.js";
import { planLocalActions } from "../index/local-plan.js";
import { wideTransactionActions } from "../wide/wide-actions.js";
import type { PlannedOperation } from "./transaction.js";

/** An operation's copies in other partitions or tables: those it has before the commit and after. */
export interface RemoteCopies {
  /** The entity's row as written (only its keys for a delete). */
  row: WireEntity;
  before: CopyRef[];
  next: CopyRef[];
  /** The version replaced (the operation's condition), when one is: the copies it made are the ones removed. */
  priorEtag: string | undefined;
}

/** The entity's stored ETag and copies: tracked from the last read or write, else read now. */
export interface PriorState {
  etag: string;
  refs: readonly CopyRef[];
  stored?: StoredEntity;
}

/** What one caller operation of an entity with features becomes in the transaction. */
export interface OperationExpansion {
  /** The operations sent for it in the entity group transaction. */
  operations: PlannedOperation[];
  /** The copies its entity has after the commit (undefined: none kept). */
  copies: CopyRef[] | undefined;
  /** Its copies elsewhere (kept through an intent, as for single writes). */
  remote: RemoteCopies | undefined;
  /** For an entity with summaries, the write as its summary rows see it. */
  summarized: CompanionWrite | undefined;
  /** Its membership changes of list indexes' index entities (undefined: none). */
  lists: ListChange[] | undefined;
}

/** What the steps of one operation's expansion share. */
interface Expanding {
  operation: PlannedOperation;
  prior: PriorState | undefined;
  planning: Planning;
  table: string;
  layout: EntityRows | undefined;
}

/**
 * One operation of an entity that is wide, indexed or summarized, expanded: its rows, its
 * same-partition copies, its condition on the version its summary delta is computed from. A pure
 * planner: what is stored comes as data (`prior`; a wide entity's rows as read, `current`).
 */
export function expandOperation(
  operation: PlannedOperation,
  prior: PriorState | undefined,
  current: StoredEntity | undefined,
  planning: Planning,
  table: string,
): OperationExpansion {
  const { model } = operation;
  const layout = model.wide ? entityRows(model, planning) : undefined;
  if (model.wide && !dependsOnStored(model)) {
    // Its rows, replacing what is stored.
    const actions = wideTransactionActions(model, planning, operation.action, current);
    return plain(actions.map((a) => copyOperation(operation, a)));
  }
  const expanding: Expanding = { operation, prior, planning, table, layout };
  if (!keepsCopies(model) && !layout) return summarizedOnly(expanding);
  if (operation.action.kind === "delete") return expandDelete(expanding);
  if (!prior && operation.action.kind === "update") return missingUpdate(expanding);
  return expandWrite(expanding);
}

/** Operations with nothing kept around them. */
function plain(operations: PlannedOperation[]): OperationExpansion {
  return { operations, copies: undefined, remote: undefined, summarized: undefined, lists: undefined };
}

/** The write as its summary rows see it (undefined when the entity has no summaries). */
function summarizedAs(
  operation: PlannedOperation,
  write: Omit<CompanionWrite, "partitionKey" | "rowKey">,
): CompanionWrite | undefined {
  return operation.model.summaries.size === 0
    ? undefined
    : { partitionKey: operation.partitionKey, rowKey: operation.rowKey, ...write };
}

/** A copy in the operation's own partition of its own table (it joins the transaction). */
const isLocalTo = (operation: PlannedOperation, table: string) => (ref: CopyRef) =>
  isLocal(ref, table, operation.partitionKey);

/** List indexes keep index entities (one per value, listing members), not copies: see list-membership.ts. */
const isListOf = (operation: PlannedOperation) => (ref: CopyRef) => indexOf(operation.model, ref).list;

function memberOf({ operation, planning, table }: Expanding) {
  return entityMember(operation.model, planning, table, operation.partitionKey, operation.rowKey);
}

/** An entity with summaries and no indexes: its operation conditioned on the version read. */
function summarizedOnly({ operation, prior }: Expanding): OperationExpansion {
  // Without summaries the operation goes as the caller gave it (no read: still one request).
  const conditioned =
    operation.model.summaries.size === 0
      ? { operation, condition: undefined, after: undefined }
      : conditionOn(operation, prior);
  return {
    ...plain([conditioned.operation]),
    summarized: summarizedAs(operation, {
      condition: conditioned.condition,
      before: prior?.stored,
      after: conditioned.after,
    }),
  };
}

/** A delete: its rows and same-partition copies removed; its copies elsewhere removed after the commit. */
function expandDelete(expanding: Expanding): OperationExpansion {
  const { operation, prior, layout, table } = expanding;
  const action = operation.action as Extract<PlannedOperation["action"], { kind: "delete" }>;
  if (!prior) {
    // Absent when planned: 404 as the service answers, or 412 (planned again) if it appeared meanwhile.
    const ifMatch = action.ifMatch === "*" ? ABSENT_ETAG : action.ifMatch;
    return {
      ...plain([{ ...operation, action: { ...action, ifMatch } }]),
      summarized: summarizedAs(operation, { condition: action.ifMatch, before: undefined, after: undefined }),
    };
  }
  const local = isLocalTo(operation, table);
  const isList = isListOf(operation);
  const ifMatch = action.ifMatch === "*" ? prior.etag : action.ifMatch;
  const lists = membershipChanges(prior.refs.filter(isList), [], memberOf(expanding));
  const removal = layout
    ? layout.remove(operation.partitionKey, operation.rowKey, ifMatch).map((a) => copyOperation(operation, a))
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
  const remoteBefore = prior.refs.filter((ref) => !local(ref));
  return {
    operations: [...removal, ...deletes],
    copies: [],
    remote:
      remoteBefore.length === 0
        ? undefined
        : {
            row: { partitionKey: operation.partitionKey, rowKey: operation.rowKey },
            before: remoteBefore,
            next: [],
            priorEtag: ifMatch,
          },
    summarized: summarizedAs(operation, { condition: ifMatch, before: prior.stored, after: undefined }),
    lists,
  };
}

/**
 * An update of an absent entity: the service will answer 404 for the whole transaction, as it would
 * without indexes (a wide entity: a merge of its first row's keys only, which cannot break a row limit first).
 */
function missingUpdate(expanding: Expanding): OperationExpansion {
  const { operation, layout } = expanding;
  const action = operation.action as Extract<PlannedOperation["action"], { kind: "update" }>;
  const keysOnly = { partitionKey: operation.partitionKey, rowKey: partRowKey(operation.rowKey, 0) };
  const ifMatch = action.ifMatch === "*" ? ABSENT_ETAG : action.ifMatch;
  const missing: PlannedOperation["action"] = layout
    ? { kind: "update", entity: keysOnly, mode: "merge", ifMatch }
    : { ...action, ifMatch };
  return {
    ...plain([copyOperation(operation, missing)]),
    summarized: summarizedAs(operation, { condition: action.ifMatch, before: undefined, after: undefined }),
  };
}

/** An insert, upsert or update: the whole row with its copy refs, its same-partition copies written and stale ones removed. */
function expandWrite(expanding: Expanding): OperationExpansion {
  const { operation, prior, planning, table, layout } = expanding;
  const { model } = operation;
  const action = operation.action as Exclude<PlannedOperation["action"], { kind: "delete" }>;
  const member = memberOf(expanding);
  const local = isLocalTo(operation, table);
  const isList = isListOf(operation);
  const wire = wholeRow(operation, action, prior);
  const next = deriveCopyRefs(model, model.mapper.fromWire({ ...wire, etag: "" }), planning);
  const row = withCopyRefs(model, wire, next);
  const ifMatch = !prior
    ? undefined
    : action.kind === "update" && action.ifMatch !== "*"
      ? action.ifMatch
      : prior.etag;
  const copies = (refs: readonly CopyRef[]) => refs.filter((ref) => !isList(ref));
  const lists = membershipChanges((prior?.refs ?? []).filter(isList), next.filter(isList), member);
  const actions = planLocalActions(
    model,
    row,
    ifMatch,
    copies(prior?.refs ?? []),
    copies(next),
    local,
    layout?.write(row, ifMatch),
  );
  const remoteBefore = (prior?.refs ?? []).filter((ref) => !local(ref));
  const remoteNext = next.filter((ref) => !local(ref));
  return {
    operations: actions.map((a) => copyOperation(operation, a)),
    copies: next,
    remote:
      remoteBefore.length === 0 && remoteNext.length === 0
        ? undefined
        : { row, before: remoteBefore, next: remoteNext, priorEtag: ifMatch },
    summarized: summarizedAs(operation, { condition: ifMatch, before: prior?.stored, after: row }),
    lists,
  };
}

/** The entity as written; copies need the whole entity: a merge is laid onto the stored properties here and replaces. */
function wholeRow(
  { model }: PlannedOperation,
  action: Exclude<PlannedOperation["action"], { kind: "delete" }>,
  prior: PriorState | undefined,
): WireEntity {
  let wire: WireEntity = action.entity;
  if (prior && action.kind !== "insert" && action.mode === "merge") {
    const stored = prior.stored ?? { ...wire, etag: prior.etag };
    const current = model.mapper.toWire(model.mapper.fromWire(stored));
    wire = { ...foreignProperties(model, stored), ...current, ...wire };
  }
  return wire;
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

export function copyOperation(
  source: PlannedOperation,
  action: PlannedOperation["action"],
): PlannedOperation {
  const keys = action.kind === "delete" ? action : action.entity;
  return { ...source, action, partitionKey: keys.partitionKey, rowKey: keys.rowKey };
}
