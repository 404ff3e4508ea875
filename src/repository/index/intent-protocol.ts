import type { WireEntity } from "../../store/table-store.js";
import { type CopyRef, indexOf } from "../core/copy-ref.js";
import type { Intent } from "../core/intent-log.js";
import { runPlan } from "../core/write-plan.js";
import { claimStamp, stampedBy, versionStamp } from "./copy-stamp.js";
import { planEntityDelete } from "./entity-delete-plan.js";
import { type Existing, type IndexedTarget, type Prior, planEntityWrite } from "./entity-plan.js";
import { type ListChange, syncList } from "./list-membership.js";
import { claimUnique, syncRemoteCopies } from "./unique-claims.js";
import { isDefinitive } from "./write-errors.js";
import { abandonIntent, settleRace, union, writeRemovable } from "./write-settling.js";

export { planEntityDelete } from "./entity-delete-plan.js";
export type { Existing, IndexedTarget, Prior } from "./entity-plan.js";
export { planEntityWrite } from "./entity-plan.js";

/**
 * Writes an entity and its copies. Copies in the entity's own table and partition ride in the
 * entity's entity group transaction (atomic: the design guide's intra-partition index). Copies
 * elsewhere follow the eventually-consistent-transactions pattern: an intent is recorded first,
 * unique values are claimed, the entity is written, copies are brought in line, the intent is
 * removed; `repairIndexes` replays intents left by a crash (or by a write whose outcome is unknown).
 * Resolves the entity's new ETag and the copies it now has.
 */
export function commitEntity(
  target: IndexedTarget,
  wire: WireEntity,
  prior: Prior,
  ifMatch: string | undefined,
): Promise<{ etag: string; refs: CopyRef[] }> {
  return runPlan(planEntityWrite(target, wire, prior, ifMatch));
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
  /** The version the write replaces (its condition), when it replaces one: its copies are the ones removed. */
  readonly priorEtag: string | undefined;
  /** Each claim's ETag (by `refKey`): its write after the commit is conditional on it. */
  readonly claimEtags: Map<string, string>;
}

/** Records the intent and claims the unique values of a write (`row`) whose copies elsewhere change. */
export async function beginRemoteWork(
  target: IndexedTarget,
  row: WireEntity,
  remoteBefore: readonly CopyRef[],
  remoteNext: readonly CopyRef[],
  priorEtag: string | undefined,
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
  const claimEtags = new Map<string, string>();
  const work = { row, intent, claimed, before: remoteBefore, next: remoteNext, priorEtag, claimEtags };
  try {
    await claimUnique(
      model,
      runner,
      row,
      remoteNext.filter((r) => !isList(r)),
      remoteBefore,
      claimed,
      claimStamp(intent),
      claimEtags,
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
  if (work && isDefinitive(error)) await abandonIntent(target, work.row, work.intent);
}

/**
 * The steps after the commit: the remote copies written (stamped with the version committed; a
 * unique value's only over this write's own, see `writeUniqueCopy`) and
 * the stale ones the replaced version made removed, list entities elsewhere brought in line, a race
 * with another writer settled, then the intent removed.
 */
export async function finishRemoteWork(
  target: IndexedTarget,
  work: RemoteWork | undefined,
  etag: string | undefined,
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
    etag === undefined ? undefined : versionStamp(etag),
    stampedBy(work.priorEtag === undefined ? undefined : versionStamp(work.priorEtag)),
    writeRemovable(work.intent, etag, work.priorEtag),
    work.claimEtags,
  );
  for (const change of remoteListChanges) await syncList(model, runner, change);
  await settleRace(target, work.row.partitionKey, work.row.rowKey, etag, work.intent, work.priorEtag);
  await intents.complete(work.intent);
}

/** Deletes an entity and its copies (the same protocol as `commitEntity`, with no claims). */
export async function commitDelete(
  target: IndexedTarget,
  partitionKey: string,
  rowKey: string,
  prior: Existing,
): Promise<void> {
  await runPlan(planEntityDelete(target, partitionKey, rowKey, prior));
}
