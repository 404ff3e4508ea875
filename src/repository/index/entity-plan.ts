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
import { assertEntityGroupFits, entityLayout, readEntity } from "../core/entity-layout.js";
import type { CompanionSource } from "../core/group-companion.js";
import { INTENTS_TABLE, type Intent, type IntentLog } from "../core/intent-log.js";
import type { Backoff, Limited, PeriodTableLookup, Requests, TableNaming } from "../core/requests.js";
import {
  type PlanOperation,
  type PlanStep,
  type StepTarget,
  stageSteps,
  type WritePlan,
} from "../core/write-plan.js";
import { reconcileEntity } from "./copy-reconciler.js";
import { claimStamp, type Removable, stampedBy, versionStamp } from "./copy-stamp.js";
import { submitEntityTransaction } from "./entity-transaction.js";
import { entityMember } from "./list-index.js";
import { type ListChange, membershipChanges, syncList } from "./list-membership.js";
import { reconcileList } from "./list-reconciler.js";
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

/** What is stored now for an entity, as far as its copies are concerned (and the row itself, when it was read). */
export type Existing = { exists: true; etag: string; refs: readonly CopyRef[]; row?: StoredEntity };
/** The entity as stored before a write: absent, or its version and copies. */
export type Prior = { exists: false } | Existing;

/** Where an indexed write goes: the entity's model and table, the runner, the intent log, and rows riding along (summaries). */
export interface IndexedTarget {
  model: EntityModel<object>;
  table: string;
  runner: Requests & TableNaming & Backoff & PeriodTableLookup & Limited;
  intents: IntentLog;
  companions?: CompanionSource | undefined;
}

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

/**
 * The write was refused: nothing of it stands but the copies it claimed. Those cannot simply be
 * deleted: a concurrent write of the same entity may hold the same values (a claim that found the
 * entity's own copy), and a claim whose answer was lost is in no list. The copies the intent names
 * are brought in line with the entity as stored now instead (removing only this write's claims), then
 * the intent is dropped; if that fails, the intent stays for `repairIndexes`.
 */
export async function abandonIntent(target: IndexedTarget, wire: WireEntity, intent: Intent): Promise<void> {
  const { model, table, runner, intents } = target;
  try {
    await reconcileEntity(
      model,
      runner,
      table,
      wire.partitionKey,
      wire.rowKey,
      intent.refs,
      "remote",
      stampedBy(claimStamp(intent)),
    );
  } catch {
    return;
  }
  await intents.complete(intent);
}

/**
 * The rule that ends every write's work on copies elsewhere (a write's or a delete's): after its last
 * copy request, the entity is read again. Unless it is still the state this write left (`etag`; for
 * a delete `undefined`, no entity), another writer changed it meanwhile, and this write's copy
 * requests may have landed after that writer's (a removal of a copy the newer version made again, a
 * list membership taken back): every copy and index entity elsewhere the intent names is brought
 * in line with the entity as read now (each reconciler reads again after it writes). The writer of
 * the newest version finds its own; any older writer's late request is followed by its own read.
 * The copies it removes are only those this write made or claimed, or that the version it replaced
 * (`priorEtag`) made: a copy another write made or claimed is that write's (copy-stamp.ts).
 */
export async function settleRace(
  target: IndexedTarget,
  partitionKey: string,
  rowKey: string,
  etag: string | undefined,
  intent: Intent,
  priorEtag: string | undefined,
): Promise<void> {
  const { model, table, runner } = target;
  const now = await readEntity(model, runner, table, partitionKey, rowKey);
  if (now?.etag === etag) return;
  await reconcileEntity(
    model,
    runner,
    table,
    partitionKey,
    rowKey,
    intent.refs,
    "remote",
    writeRemovable(intent, etag, priorEtag),
  );
  const member = entityMember(model, runner, table, partitionKey, rowKey);
  for (const ref of intent.refs)
    if (indexOf(model, ref).list) await reconcileList(model, runner, ref, [member]);
}

/** What a write's settling may remove: its claims and its version's copies, and the replaced version's. */
export function writeRemovable(
  intent: Intent,
  etag: string | undefined,
  priorEtag: string | undefined,
): Removable {
  return stampedBy(
    claimStamp(intent),
    etag === undefined ? undefined : versionStamp(etag),
    priorEtag === undefined ? undefined : versionStamp(priorEtag),
  );
}

export function union(a: readonly CopyRef[], b: readonly CopyRef[]): CopyRef[] {
  const seen = new Map<string, CopyRef>();
  for (const ref of [...a, ...b]) seen.set(refKey(ref), ref);
  return [...seen.values()];
}
