import type { TransactionAction, WireEntity } from "../../store/table-store.js";
import { type CopyRef, deriveCopyRefs, indexOf, isLocal, withCopyRefs } from "../core/copy-ref.js";
import { assertEntityGroupFits, entityLayout } from "../core/entity-layout.js";
import {
  type PlanOperation,
  type PlanStep,
  type StepTarget,
  stageSteps,
  type WritePlan,
} from "../core/write-plan.js";
import { type OwnActions, submitEntityTransaction } from "./entity-transaction.js";
import type { IndexedTarget, Prior } from "./indexed-target.js";
import { entityMember } from "./list-index.js";
import { type ListChange, listReads, membershipChanges } from "./list-membership.js";
import { planLocalActions } from "./local-plan.js";
import { planRemoteProtocol } from "./remote-protocol.js";
import { RemoteProtocolRun } from "./remote-protocol-run.js";

export type { Existing, IndexedTarget, Prior } from "./indexed-target.js";

/**
 * The plan of `commitEntity`: the intent and claims before, one transaction (the entity, its
 * same-partition copies and list entities, the stages' rows), copies elsewhere and the intent's
 * removal after. `prior` undefined: not known (an explained write), the steps that depend on it are
 * described by index instead of by copy; `operation` names the entity's action then.
 */
export function planEntityWrite(
  target: IndexedTarget,
  wire: WireEntity,
  prior: Prior | undefined,
  ifMatch: string | undefined,
  operation?: string,
): WritePlan<{ etag: string; refs: CopyRef[] }> {
  const { model, table, runner } = target;
  const { next, before, local, row, listChanges, actions, own, localLists } = planEntityGroup(
    target,
    wire,
    prior,
    ifMatch,
  );
  const remoteBefore = before.filter((r) => !local(r));
  const remoteNext = next.filter((r) => !local(r));
  const companion = target.companions?.companion({
    partitionKey: wire.partitionKey,
    rowKey: wire.rowKey,
    condition: ifMatch,
    before: prior?.exists ? prior.row : undefined,
    after: row,
  });
  const committed = { etag: "" };
  const protocol = planRemoteProtocol({
    model,
    naming: runner,
    table,
    partitionKey: wire.partitionKey,
    rowKey: wire.rowKey,
    before: remoteBefore,
    next: remoteNext,
    lists: listChanges.filter((c) => !local(c.ref)),
    priorEtag: prior?.exists ? prior.etag : undefined,
    unknown: prior === undefined,
  });
  const remote = protocol
    ? new RemoteProtocolRun(target, row, protocol, () => committed.etag).planSteps()
    : { before: [], after: [] };
  const stage = companion && stageSteps(companion);
  return {
    before: [...remote.before, ...roundBefore(listReads(localLists), stage)],
    commit: {
      ...commitTarget(table, wire.partitionKey),
      operations: [
        ...describeActions(actions, own.count, [...before, ...next], operation),
        ...localLists.map((c) => ({ kind: `update list (${c.ref.index})`, rowKey: c.ref.rowKey })),
        ...(stage?.operations ?? []),
      ],
      send: async () => {
        committed.etag = await submitEntityTransaction(
          model,
          runner,
          table,
          wire.partitionKey,
          actions,
          localLists,
          next,
          own,
          companion,
        );
        return { etag: committed.etag, refs: next };
      },
    },
    after: [...(stage?.after ?? []), ...remote.after],
  };
}

/** What one entity write puts in its partition's transaction (`planEntityGroup`). */
interface EntityGroup {
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
  own: OwnActions;
}

/**
 * The actions of one entity write in its partition's transaction: the entity's row (or a wide
 * entity's rows), its same-partition copies and list entities; checked, with the stages' rows it
 * reserves room for, against one entity group transaction's limits (`ValidationError` before any
 * request). Also what a write checks before its first read.
 */
export function planEntityGroup(
  target: IndexedTarget,
  wire: WireEntity,
  prior: Prior | undefined,
  ifMatch: string | undefined,
): EntityGroup {
  const { model, table, runner } = target;
  // An entity without indexes (a wide or summarized one) has no copies: its row is written as it is.
  const indexed = model.indexes.size > 0;
  const next = indexed ? deriveCopyRefs(model, model.mapper.fromWire({ ...wire, etag: "" }), runner) : [];
  const before = prior?.exists ? prior.refs : [];
  const local = (ref: CopyRef) => isLocal(ref, table, wire.partitionKey);
  const isList = (ref: CopyRef) => indexOf(model, ref).list;
  const row = withCopyRefs(model, wire, next);
  const listChanges = indexed
    ? membershipChanges(
        before.filter(isList),
        next.filter(isList),
        entityMember(model, runner, table, wire.partitionKey, wire.rowKey),
      )
    : [];
  const layout = target.layout ?? entityLayout(model, runner, table);
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
  const own = { layout, count: entityActions.length, rowKey: wire.rowKey };
  const localLists = listChanges.filter((c) => local(c.ref));
  // Everything that rides in the transaction, counted before any request (a wide entity's rows too).
  assertEntityGroupFits(
    runner,
    model.name,
    table,
    wire.rowKey,
    actions,
    localLists.length + (target.companions?.reserved ?? 0),
  );
  return { next, before, local, row, listChanges, localLists, actions, own };
}

/** The commit's target: one entity group transaction in the entity's partition (even of one action). */
export function commitTarget(table: string, partitionKey: string): StepTarget {
  return { request: "transaction", table, partitionKey };
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
