import type { EntityModel } from "../../schema/entity-model.js";
import type { TransactionAction, WireEntity } from "../../store/table-store.js";
import { type CopyRef, deriveCopyRefs, indexOf, isLocal, withCopyRefs } from "../core/copy-ref.js";
import { keepsCopies } from "../core/entity-features.js";
import { assertEntityGroupFits, type EntityRows } from "../core/entity-layout.js";
import type { BlindIndexing, Limited, TableNaming } from "../core/requests.js";
import {
  type PlanCommit,
  type PlanOperation,
  type PlanStep,
  type StagePart,
  stageSteps,
  type WritePlan,
} from "../core/write-plan.js";
import type { Prior } from "./indexed-target.js";
import { entityMember } from "./list-index.js";
import { type ListChange, listReads, membershipChanges } from "./list-membership.js";
import { planLocalActions } from "./local-plan.js";
import { planRemoteProtocol, type RemoteProtocol, type RemoteStep } from "./remote-protocol.js";

export type { Existing, Prior } from "./indexed-target.js";

/**
 * What the plans of an entity's writes are made from (no store): its model and physical table, the
 * naming of tables and the limits of one transaction, how it lies in rows, and the room its stages'
 * rows take in a transaction (`CompanionSource.reserved`).
 */
export interface EntityPlanning {
  readonly model: EntityModel<object>;
  readonly table: string;
  readonly naming: TableNaming & Partial<BlindIndexing> & Limited;
  readonly layout: EntityRows;
  readonly reserved: number;
}

/**
 * The commit of an entity's plan, as data: the transaction's actions (the entity's own first, then
 * its same-partition copies), the same-partition list changes and the stages' rows planned each round,
 * the copies it concerns (those the write leaves, or a delete's), and how many actions are the
 * entity's own (`OwnActions` without its layout: the executor has it).
 */
export interface EntityCommit extends PlanCommit {
  readonly partitionKey: string;
  readonly actions: readonly TransactionAction[];
  readonly localLists: readonly ListChange[];
  readonly refs: readonly CopyRef[];
  readonly own: { readonly count: number; readonly rowKey: string };
}

/**
 * The plan of one entity write or delete, as data (`EntityPlanRun` runs it): the steps, the commit,
 * the remote-copy protocol its `remote` steps index into, the row as written (a delete's keys) and
 * whether the write leaves no entity (a delete).
 */
export interface EntityPlan extends WritePlan {
  commit: EntityCommit;
  readonly protocol: RemoteProtocol | undefined;
  readonly row: WireEntity;
  readonly deletes: boolean;
}

/**
 * The plan of `commitEntity` (from `group`, `planEntityGroup`'s): the intent and claims before, one
 * transaction (the entity, its same-partition copies and list entities, the stage's rows), copies
 * elsewhere and the intent's removal after. `stage`: what the write's stage (its summaries) says of
 * itself (`stagePart`). `prior` undefined: not known (an explained write), the steps that depend on it
 * are described by index instead of by copy; `operation` names the entity's action then.
 */
export function planEntityWrite(
  planning: EntityPlanning,
  group: EntityGroup,
  prior: Prior | undefined,
  stage: StagePart | undefined,
  operation?: string,
): EntityPlan {
  const { model, table, naming } = planning;
  const { next, before, local, row, listChanges, actions, own, localLists } = group;
  const protocol = planRemoteProtocol({
    model,
    naming,
    table,
    partitionKey: row.partitionKey,
    rowKey: row.rowKey,
    before: before.filter((r) => !local(r)),
    next: next.filter((r) => !local(r)),
    lists: listChanges.filter((c) => !local(c.ref)),
    priorEtag: prior?.exists ? prior.etag : undefined,
    unknown: prior === undefined,
  });
  const remote = protocolSteps(protocol);
  const staged = stage && stageSteps(stage);
  return {
    before: [...remote.before, ...roundBefore(listReads(localLists), staged)],
    // The commit: one entity group transaction in the entity's partition (even of one action). Its
    // fields are listed, not spread: a spread before them costs a single write ~10% of its client CPU.
    commit: {
      request: "transaction",
      table,
      operations: [
        ...describeActions(actions, own.count, [...before, ...next], operation),
        ...localLists.map((c) => ({ kind: `update list (${c.ref.index})`, rowKey: c.ref.rowKey })),
        ...(staged?.operations ?? []),
      ],
      partitionKey: row.partitionKey,
      actions,
      localLists,
      refs: next,
      own,
    },
    after: [...(staged?.after ?? []), ...remote.after],
    protocol,
    row,
    deletes: false,
  };
}

/** The remote-copy protocol as plan steps of a single write: each step sent on its own, by its index. */
export function protocolSteps(protocol: RemoteProtocol | undefined): {
  before: PlanStep[];
  after: PlanStep[];
} {
  if (protocol === undefined) return { before: [], after: [] };
  const steps = (phase: "before" | "after", remote: readonly RemoteStep[]) =>
    remote.map((step, at): PlanStep => ({ ...step.target, action: { kind: "remote", phase, at } }));
  return { before: steps("before", protocol.before), after: steps("after", protocol.after) };
}

/** What one entity write puts in its partition's transaction (`planEntityGroup`). */
export interface EntityGroup {
  /** The copies the written entity has, and those the stored one had. */
  next: CopyRef[];
  before: readonly CopyRef[];
  /** Whether a copy is in the entity's own table and partition. */
  local: (ref: CopyRef) => boolean;
  /** The entity's row as written (with its copy refs, when it has indexes). */
  row: WireEntity;
  listChanges: ListChange[];
  localLists: ListChange[];
  actions: TransactionAction[];
  own: { count: number; rowKey: string };
}

/**
 * The actions of one entity write in its partition's transaction: the entity's row (or a wide
 * entity's rows), its same-partition copies and list entities; checked, with the stages' rows it
 * reserves room for, against one entity group transaction's limits (`ValidationError` before any
 * request). Also what a write checks before its first read.
 */
export function planEntityGroup(
  planning: EntityPlanning,
  wire: WireEntity,
  prior: Prior | undefined,
  ifMatch: string | undefined,
): EntityGroup {
  const { model, table, naming, layout } = planning;
  // An entity without indexes (a wide or summarized one) has no copies: its row is written as it is.
  const indexed = keepsCopies(model);
  const next = indexed ? deriveCopyRefs(model, model.mapper.fromWire({ ...wire, etag: "" }), naming) : [];
  const before = prior?.exists ? prior.refs : [];
  const local = (ref: CopyRef) => isLocal(ref, table, wire.partitionKey);
  const isList = (ref: CopyRef) => indexOf(model, ref).list;
  const row = withCopyRefs(model, wire, next);
  const listChanges = indexed
    ? membershipChanges(
        before.filter(isList),
        next.filter(isList),
        entityMember(model, naming, table, wire.partitionKey, wire.rowKey),
      )
    : [];
  const entityActions = layout.write(row, ifMatch);
  const actions = indexed
    ? planLocalActions(
        model,
        row,
        ifMatch,
        before.filter((r) => !isList(r)),
        next.filter((r) => !isList(r)),
        local,
        entityActions,
      )
    : entityActions;
  const own = { count: entityActions.length, rowKey: wire.rowKey };
  const localLists = listChanges.filter((c) => local(c.ref));
  // Everything that rides in the transaction, counted before any request (a wide entity's rows too).
  assertEntityGroupFits(
    naming,
    model.name,
    table,
    wire.rowKey,
    actions,
    localLists.length + planning.reserved,
  );
  return { next, before, local, row, listChanges, localLists, actions, own };
}

/** The entity's and its same-partition copies' actions, as rendered (`operation`: the entity's, when given). */
export function describeActions(
  actions: readonly TransactionAction[],
  own: number,
  refs: readonly CopyRef[],
  operation: string | undefined,
): PlanOperation[] {
  return actions.map((action, i) => {
    const rowKey = action.kind === "delete" ? action.rowKey : action.entity.rowKey;
    if (i === 0) return { kind: operation ?? action.kind, rowKey };
    // A wide entity's further rows.
    if (i < own) return { kind: `${action.kind} part`, rowKey };
    const index = refs.find((r) => r.rowKey === rowKey)?.index ?? "?";
    return { kind: `${action.kind} copy (${index})`, rowKey };
  });
}

/**
 * The before-steps of a write's commit, in the order they are sent: the stage's own (a summary kept
 * elsewhere records its intent), then the first round's reads as it is planned: the list rows', then the
 * stage's (`StageDescription.reads`).
 */
export function roundBefore(
  lists: readonly PlanStep[],
  stage: { before: readonly PlanStep[]; reads: readonly PlanStep[] } | undefined,
): PlanStep[] {
  return [...(stage?.before ?? []), ...lists, ...(stage?.reads ?? [])];
}
