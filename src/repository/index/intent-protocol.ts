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
import type { Intent, IntentLog } from "../core/intent-log.js";
import type { Backoff, Limited, PeriodTableLookup, Requests, TableNaming } from "../core/requests.js";
import { reconcileEntity } from "./copy-reconciler.js";
import { submitEntityTransaction } from "./entity-transaction.js";
import { entityMember } from "./list-index.js";
import { type ListChange, membershipChanges, syncList } from "./list-membership.js";
import { planLocalActions } from "./local-plan.js";
import { claimUnique, releaseCopies, syncRemoteCopies } from "./unique-claims.js";
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
 * Writes an entity and its copies. Copies in the entity's own table and partition ride in the
 * entity's entity group transaction (atomic: the design guide's intra-partition index). Copies
 * elsewhere follow the eventually-consistent-transactions pattern: an intent is recorded first,
 * unique values are claimed, the entity is written, copies are brought in line, the intent is
 * removed; `repairIndexes` replays intents left by a crash (or by a write whose outcome is unknown).
 * Resolves the entity's new ETag and the copies it now has.
 */
export async function commitEntity(
  target: IndexedTarget,
  wire: WireEntity,
  prior: Prior,
  ifMatch: string | undefined,
): Promise<{ etag: string; refs: CopyRef[] }> {
  const { model, table, runner } = target;
  const next = deriveCopyRefs(model, model.mapper.fromWire({ ...wire, etag: "" }), (t) =>
    runner.tableName(t),
  );
  const before = prior.exists ? prior.refs : [];
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
  const remote = await beginRemoteWork(target, row, remoteBefore, remoteNext);
  const companion = target.companions?.companion({
    partitionKey: wire.partitionKey,
    rowKey: wire.rowKey,
    condition: ifMatch,
    before: prior.exists ? prior.row : undefined,
    after: row,
  });
  try {
    await companion?.before?.();
  } catch (error) {
    await abandonRemoteWork(target, remote, error);
    throw error;
  }
  let etag: string;
  try {
    etag = await submitEntityTransaction(
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
  } catch (error) {
    await companion?.abandon?.(error);
    await abandonRemoteWork(target, remote, error);
    throw error;
  }
  await companion?.after?.();
  await finishRemoteWork(
    target,
    remote,
    etag,
    listChanges.filter((c) => !local(c.ref)),
  );
  return { etag, refs: next };
}

/**
 * The steps before the commit of an entity write whose copies live elsewhere: the intent naming
 * every remote copy that may exist after it (old and new), then the claims of new unique values.
 * `undefined` when the write has no copies elsewhere (no request).
 */
export interface RemoteWork {
  readonly row: WireEntity;
  readonly intent: Intent;
  readonly claimed: CopyRef[];
  readonly before: readonly CopyRef[];
  readonly next: readonly CopyRef[];
}

/** Records the intent and claims the unique values of a write (`row`) whose copies elsewhere change. */
export async function beginRemoteWork(
  target: IndexedTarget,
  row: WireEntity,
  remoteBefore: readonly CopyRef[],
  remoteNext: readonly CopyRef[],
): Promise<RemoteWork | undefined> {
  if (remoteBefore.length === 0 && remoteNext.length === 0) return undefined;
  const { model, table, runner, intents } = target;
  const isList = (ref: CopyRef) => indexOf(model, ref).list;
  const intent = await intents.record(
    model.type,
    table,
    row.partitionKey,
    row.rowKey,
    union(remoteBefore, remoteNext),
  );
  const claimed: CopyRef[] = [];
  const work = { row, intent, claimed, before: remoteBefore, next: remoteNext };
  try {
    await claimUnique(
      model,
      runner,
      row,
      remoteNext.filter((r) => !isList(r)),
      remoteBefore,
      claimed,
    );
  } catch (error) {
    // A claim whose answer was lost may have been written: leave it and the intent to repair.
    await abandonRemoteWork(target, work, error);
    throw error;
  }
  return work;
}

/**
 * The commit failed: only when the service definitely refused it are the claims brought back in
 * line and the intent dropped; otherwise the write may have applied, and the intent stays for repair.
 */
export async function abandonRemoteWork(
  target: IndexedTarget,
  work: RemoteWork | undefined,
  error: unknown,
): Promise<void> {
  if (work && isDefinitive(error)) await abandon(target, work.row, work.intent);
}

/**
 * The steps after the commit: the remote copies written and the stale ones removed, list entities
 * elsewhere brought in line, a race with another writer settled, then the intent removed.
 */
export async function finishRemoteWork(
  target: IndexedTarget,
  work: RemoteWork | undefined,
  etag: string,
  remoteListChanges: readonly ListChange[],
): Promise<void> {
  if (work === undefined) return;
  const { model, runner, intents } = target;
  const isList = (ref: CopyRef) => indexOf(model, ref).list;
  await syncRemoteCopies(
    model,
    runner,
    work.row,
    work.next.filter((r) => !isList(r)),
    work.before.filter((r) => !isList(r)),
    work.claimed,
  );
  for (const change of remoteListChanges) await syncList(model, runner, change);
  await settleRace(target, work.row.partitionKey, work.row.rowKey, etag, work.intent);
  await intents.complete(work.intent);
}

/** Deletes an entity and its copies (the same protocol as `commitEntity`, with no claims). */
export async function commitDelete(
  target: IndexedTarget,
  partitionKey: string,
  rowKey: string,
  prior: Existing,
): Promise<void> {
  const { model, table, runner, intents } = target;
  const local = (ref: CopyRef) => isLocal(ref, table, partitionKey);
  const isList = (ref: CopyRef) => indexOf(model, ref).list;
  const remote = prior.refs.filter((r) => !local(r));
  const intent =
    remote.length > 0 ? await intents.record(model.type, table, partitionKey, rowKey, remote) : undefined;
  const listChanges = membershipChanges(
    prior.refs.filter(isList),
    [],
    entityMember(model, runner, table, partitionKey, rowKey),
  );
  const layout = entityLayout(model, runner, table);
  const actions: TransactionAction[] = layout.remove(partitionKey, rowKey, prior.etag);
  const own = { layout, count: actions.length, rowKey };
  for (const ref of prior.refs)
    if (local(ref) && !isList(ref))
      actions.push({ kind: "delete", partitionKey: ref.partitionKey, rowKey: ref.rowKey, ifMatch: "*" });
  const companion = target.companions?.companion({
    partitionKey,
    rowKey,
    condition: prior.etag,
    before: prior.row,
    after: undefined,
  });
  try {
    await companion?.before?.();
    await submitEntityTransaction(
      model,
      runner,
      table,
      partitionKey,
      actions,
      listChanges.filter((c) => local(c.ref)),
      prior.refs,
      own,
      companion,
    );
  } catch (error) {
    await companion?.abandon?.(error);
    if (intent && isDefinitive(error)) await intents.complete(intent);
    throw error;
  }
  await companion?.after?.();
  if (intent) {
    await releaseCopies(
      runner,
      remote.filter((r) => !isList(r)),
    );
    for (const change of listChanges) if (!local(change.ref)) await syncList(model, runner, change);
    await intents.complete(intent);
  }
}

/**
 * The write was refused: nothing of it stands but the copies it claimed. Those cannot simply be
 * deleted: a concurrent write of the same entity may hold the same values (a claim that found the
 * entity's own copy), and a claim whose answer was lost is in no list. The copies the intent names
 * are brought in line with the entity as stored now instead, then the intent is dropped; if that
 * fails, the intent stays for `repairIndexes`.
 */
async function abandon(target: IndexedTarget, wire: WireEntity, intent: Intent): Promise<void> {
  const { model, table, runner, intents } = target;
  try {
    await reconcileEntity(model, runner, table, wire.partitionKey, wire.rowKey, intent.refs, "remote");
  } catch {
    return;
  }
  await intents.complete(intent);
}

/**
 * Another writer may have changed the entity while this one was writing its remote copies, and
 * the two writers' copy writes may have landed out of order. If the entity is no longer the
 * version this write produced, its copies are brought in line with what it is now.
 */
async function settleRace(
  target: IndexedTarget,
  partitionKey: string,
  rowKey: string,
  etag: string,
  intent: Intent,
): Promise<void> {
  const { model, table, runner } = target;
  const now = await readEntity(model, runner, table, partitionKey, rowKey);
  if (now?.etag === etag) return;
  await reconcileEntity(model, runner, table, partitionKey, rowKey, intent.refs, "remote");
}

function union(a: readonly CopyRef[], b: readonly CopyRef[]): CopyRef[] {
  const seen = new Map<string, CopyRef>();
  for (const ref of [...a, ...b]) seen.set(refKey(ref), ref);
  return [...seen.values()];
}
