import type { EntityModel } from "../../schema/entity-model.js";
import type { StoredEntity, TransactionAction, WireEntity } from "../../store/table-store.js";
import {
  COPY_REFS_PROPERTY,
  type CopyRef,
  deriveCopyRefs,
  encodeCopyRefs,
  indexOf,
  isLocal,
  refKey,
} from "../core/copy-ref.js";
import { assertEntityGroupFits, entityLayout } from "../core/entity-layout.js";
import { INTENTS_TABLE, type Intent } from "../core/intent-log.js";
import {
  type PlanOperation,
  type PlanStep,
  type StepTarget,
  stageSteps,
  type WritePlan,
} from "../core/write-plan.js";
import { claimStamp, type Removable, stampedBy, versionStamp } from "./copy-stamp.js";
import { submitEntityTransaction } from "./entity-transaction.js";
import type { IndexedTarget, Prior } from "./indexed-target.js";
import { entityMember } from "./list-index.js";
import { type ListChange, membershipChanges, syncList } from "./list-membership.js";
import { planLocalActions } from "./local-plan.js";
import {
  claimOne,
  readCopy,
  removeCopy,
  type UniqueCopySeen,
  upsertCopy,
  writeUniqueCopy,
} from "./unique-claims.js";
import { isDefinitive } from "./write-errors.js";
import { abandonIntent, settleRace, union, writeRemovable } from "./write-settling.js";

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
  const next = deriveCopyRefs(model, model.mapper.fromWire({ ...wire, etag: "" }), runner);
  const before = prior?.exists ? prior.refs : [];
  const local = (ref: CopyRef) => isLocal(ref, table, wire.partitionKey);
  const isList = (ref: CopyRef) => indexOf(model, ref).list;
  const remoteBefore = before.filter((r) => !local(r));
  const remoteNext = next.filter((r) => !local(r));
  const row: WireEntity = { ...wire, [COPY_REFS_PROPERTY]: encodeCopyRefs(next) };
  const listChanges = membershipChanges(
    before.filter(isList),
    next.filter(isList),
    entityMember(model, runner, table, wire.partitionKey, wire.rowKey),
  );
  const layout = entityLayout(model, runner, table);
  const entityActions = layout.write(row, ifMatch);
  const actions = planLocalActions(
    model,
    row,
    ifMatch,
    before.filter((r) => !isList(r)),
    next.filter((r) => !isList(r)),
    local,
    entityActions,
  );
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
  const companion = target.companions?.companion({
    partitionKey: wire.partitionKey,
    rowKey: wire.rowKey,
    condition: ifMatch,
    before: prior?.exists ? prior.row : undefined,
    after: row,
  });
  const committed = { etag: "" };
  const remote = remoteSteps(
    target,
    row,
    remoteBefore,
    remoteNext,
    listChanges.filter((c) => !local(c.ref)),
    prior === undefined,
    prior?.exists ? prior.etag : undefined,
    () => committed.etag,
  );
  const stage = companion && stageSteps(companion);
  return {
    before: [...remote.before, ...(stage?.before ?? [])],
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

/**
 * The two steps after the commit that remove one copy elsewhere the entity no longer has: the copy
 * read, then deleted if the rule of copy-stamp.ts allows (`removable`), conditional on its ETag.
 */
export function releaseSteps(
  model: EntityModel<object>,
  runner: IndexedTarget["runner"],
  row: Pick<WireEntity, "partitionKey" | "rowKey">,
  ref: CopyRef,
  removable: Removable,
  request: string,
): PlanStep[] {
  const at = { table: ref.table, partitionKey: ref.partitionKey, rowKey: ref.rowKey };
  let copy: StoredEntity | undefined;
  return [
    {
      request: `get replaced copy (${ref.index})`,
      ...at,
      run: async () => {
        copy = await readCopy(runner, ref);
      },
    },
    {
      request: `${request} (${ref.index})`,
      ...at,
      run: () => removeCopy(model, runner, row, ref, copy, removable),
    },
  ];
}

/** The commit's target: one entity group transaction in the entity's partition (even of one action). */
/** The step after the commit that brings one list entity kept elsewhere in line. */
export function listStep(
  model: EntityModel<object>,
  runner: IndexedTarget["runner"],
  change: ListChange,
): PlanStep {
  return {
    request: `update list (${change.ref.index})`,
    table: change.ref.table,
    partitionKey: change.ref.partitionKey,
    rowKey: change.ref.rowKey,
    run: () => syncList(model, runner, change),
  };
}

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
 * The steps of a write whose copies live elsewhere (none when it has none): before the commit, the
 * intent naming every remote copy that may exist after it (old and new), then the claims of new
 * unique values; after it, the remote copies written and the stale ones removed, list entities
 * elsewhere brought in line, a race with another writer settled, the intent removed. When the
 * commit is definitely refused, the intent's step brings the claims back in line and drops it;
 * otherwise the write may have applied, and the intent stays for repair. `unknown`: the copies the
 * entity held are not known (an explained write): each remote index may drop one. Claims are
 * stamped as this write's, every copy written after the commit with the version committed, and a
 * replaced copy is removed only if stamped with the version `priorEtag` (copy-stamp.ts).
 */
function remoteSteps(
  target: IndexedTarget,
  row: WireEntity,
  remoteBefore: readonly CopyRef[],
  remoteNext: readonly CopyRef[],
  remoteLists: readonly ListChange[],
  unknown: boolean,
  priorEtag: string | undefined,
  etag: () => string,
): { before: PlanStep[]; after: PlanStep[] } {
  const { model, table, runner, intents } = target;
  const remoteIndexes = [...model.indexes.values()].filter((index) => !index.intraPartition);
  if (remoteBefore.length === 0 && remoteNext.length === 0 && !(unknown && remoteIndexes.length > 0))
    return { before: [], after: [] };
  const isList = (ref: CopyRef) => indexOf(model, ref).list;
  const intentTable = runner.tableName(INTENTS_TABLE);
  const held = new Set(remoteBefore.map(refKey));
  let intent: Intent | undefined;
  const before: PlanStep[] = [
    {
      request: "insert intent",
      table: intentTable,
      run: async () => {
        intent = await intents.record(
          model.type,
          table,
          row.partitionKey,
          row.rowKey,
          union(remoteBefore, remoteNext),
        );
      },
      // A claim whose answer was lost may have been written: only a definite refusal abandons.
      abandon: async (error) => {
        if (intent && isDefinitive(error)) await abandonIntent(target, row, intent);
      },
    },
  ];
  const after: PlanStep[] = [];
  const claimOf = () => claimStamp(intent as Intent);
  const replaced = priorEtag === undefined ? undefined : versionStamp(priorEtag);
  for (const ref of remoteNext) {
    if (isList(ref)) continue;
    const at = { table: ref.table, partitionKey: ref.partitionKey, rowKey: ref.rowKey };
    if (!indexOf(model, ref).unique) {
      // A copy no other entity can hold (its key is this entity's): stamped with the version committed.
      after.push({
        request: `upsert copy (${ref.index})`,
        ...at,
        run: () => upsertCopy(model, runner, row, ref, versionStamp(etag())),
      });
      continue;
    }
    // A unique value's copy is stamped with the version committed too, but only over this write's own
    // (`writeUniqueCopy`): conditional on its claim's ETag, or, for a value the replaced version held
    // (not claimed again), on the copy as read after the commit.
    let seen: UniqueCopySeen = { read: undefined };
    if (!held.has(refKey(ref))) {
      // The claim: the copy inserted (or, when this entity holds it already, taken over).
      before.push({
        request: `claim (${ref.index})`,
        ...at,
        run: async () => {
          seen = { claimEtag: await claimOne(model, runner, row, ref, claimOf()) };
        },
      });
    } else {
      after.push({
        request: `get kept copy (${ref.index})`,
        ...at,
        run: async () => {
          seen = { read: await readCopy(runner, ref) };
        },
      });
    }
    after.push({
      request: `replace copy (${ref.index})`,
      ...at,
      run: () =>
        writeUniqueCopy(
          model,
          runner,
          row,
          ref,
          versionStamp(etag()),
          writeRemovable(intent as Intent, etag(), priorEtag),
          seen,
        ),
    });
  }
  const keep = new Set(remoteNext.map(refKey));
  for (const ref of remoteBefore) {
    if (isList(ref) || keep.has(refKey(ref))) continue;
    after.push(...releaseSteps(model, runner, row, ref, stampedBy(replaced), "delete replaced copy"));
  }
  if (unknown) {
    for (const index of remoteIndexes) {
      const at = { table: runner.tableName(index.table) };
      after.push({ request: `get replaced copy (${index.name})`, ...at });
      after.push({ request: `delete replaced copy (${index.name})`, ...at });
    }
  }
  for (const change of remoteLists) after.push(listStep(model, runner, change));
  after.push({
    request: "get (settle race)",
    table,
    partitionKey: row.partitionKey,
    rowKey: row.rowKey,
    run: () =>
      intent
        ? settleRace(target, row.partitionKey, row.rowKey, etag(), intent, priorEtag)
        : Promise.resolve(),
  });
  after.push({
    request: "delete intent",
    table: intentTable,
    run: () => (intent ? intents.complete(intent) : Promise.resolve()),
  });
  return { before, after };
}
