import { ConcurrencyError, EntityNotFoundError, StoreError, ValidationError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import { type CopyRef, encodeCopyRefs } from "../core/copy-ref.js";
import { type Intent, IntentLog } from "../core/intent-log.js";
import { registerPeriodTables } from "../core/period-tables.js";
import type { Backoff, Clock, PeriodTableLookup, Requests, TableNaming } from "../core/requests.js";
import type { PeriodTableNames } from "../pipeline/period-table-store.js";
import { reconcileEntity } from "./copy-reconciler.js";
import { keepsCopies } from "./copy-rows.js";
import { notClaimedByOthers } from "./copy-stamp.js";
import { scanIndexes } from "./index-verifier.js";
import { entityMember } from "./list-index.js";
import { reconcileList } from "./list-reconciler.js";

/** Options of `repairIndexes`. */
export interface RepairOptions {
  /** Also scan and fix every drift `verifyIndexes` would report (cost proportional to the tables). */
  scan?: boolean | undefined;
  /**
   * Leave intents younger than this alone (default 0: replay all). A running writer's intent is
   * indistinguishable from a crashed one's; while repairs run next to live writers, give their
   * longest write time here so repair never undoes a write still in progress.
   */
  minIntentAgeMs?: number | undefined;
}

/** What `repairIndexes` changed. */
export interface RepairResult {
  /** Unfinished intents replayed and removed. */
  intentsReplayed: number;
  /** Copies written (missing or stale); a shard row of an index entity (list index) rewritten counts as one. */
  copiesWritten: number;
  /** Copies deleted (stale keys or orphans); a shard row of an index entity emptied and deleted counts as one. */
  copiesDeleted: number;
  /** Intents set aside after too many failed replays. */
  poisoned: number;
}

/** Failed replays of one intent before it is set aside. */
export const MAX_REPLAY_ATTEMPTS = 5;

/** The intents-table partition where intents of a type that failed too often are kept for inspection. */
export function poisonPartition(type: string): string {
  return `poison~${type}`;
}

/**
 * Replays unfinished index work; with `scan`, also fixes drift.
 *
 * Replay reads only the intent log (one query per intent shard) and, per intent, the entity and
 * the copies the intent names: each intent's entity is reconciled with its state as read now
 * (see `reconcileEntity`), then the intent is removed. A replay that fails counts an attempt on
 * the intent; after `MAX_REPLAY_ATTEMPTS` the intent moves to the `poison~<type>` partition of
 * the intents table (counted in `poisoned`) instead of being retried forever.
 */
export async function repairIndexes<T extends object>(
  model: EntityModel<T>,
  runner: Requests & TableNaming & Clock & Backoff & PeriodTableLookup,
  periodTables: PeriodTableNames,
  options: RepairOptions,
): Promise<RepairResult> {
  // Replays write copies: a period's copy table missing meanwhile is created like on any write.
  registerPeriodTables(periodTables, model);
  const result: RepairResult = { intentsReplayed: 0, copiesWritten: 0, copiesDeleted: 0, poisoned: 0 };
  const minAge = options.minIntentAgeMs ?? 0;
  if (!Number.isSafeInteger(minAge) || minAge < 0) {
    throw new ValidationError(
      "repair-options",
      `minIntentAgeMs must be a non-negative integer, got ${String(minAge)}`,
      {
        field: "minIntentAgeMs",
      },
    );
  }
  const log = new IntentLog(runner);
  const intents = log.pending(model.type)[Symbol.asyncIterator]();
  for (;;) {
    let next: IteratorResult<Intent>;
    try {
      next = await intents.next();
    } catch (error) {
      // No intents table: no entity of this type ever had copies in other partitions to look after.
      if (error instanceof StoreError && error.statusCode === 404) break;
      throw error;
    }
    if (next.done) break;
    if (minAge > 0 && runner.now() - intentTime(next.value) < minAge) continue;
    await replay(model, runner, log, next.value, result);
  }
  if (options.scan) await repairScan(model, runner, result);
  return result;
}

/** When an intent was recorded: its RowKey starts with the time in milliseconds. */
function intentTime(intent: Intent): number {
  const time = Number(intent.rowKey.slice(0, intent.rowKey.indexOf("_")));
  return Number.isFinite(time) ? time : 0;
}

async function replay<T extends object>(
  model: EntityModel<T>,
  runner: Requests & TableNaming & Backoff & PeriodTableLookup,
  log: IntentLog,
  intent: Intent,
  result: RepairResult,
): Promise<void> {
  if (intent.attempts >= MAX_REPLAY_ATTEMPTS) {
    await setAside(model, runner, log, intent, undefined);
    result.poisoned++;
    return;
  }
  try {
    const outcome = await reconcileEntity(
      model,
      runner,
      intent.table,
      intent.sourcePartitionKey,
      intent.sourceRowKey,
      intent.refs,
      "remote",
      // The write replayed may take back its own claims; another write's claim is that write's.
      notClaimedByOthers(intent),
    );
    // Written by a newer version of the class: its intent is left for that version's repair.
    if (outcome.deferred) return;
    if (outcome.conflicts.length > 0) {
      const [first] = outcome.conflicts;
      // Replaying cannot fix this: the intent counts a failed attempt and is set aside after five.
      throw new StoreError(
        `index ${first?.index} key '${first?.partitionKey}'/'${first?.rowKey}' in ${first?.table} is held by another entity`,
      );
    }
    // Index entities (list indexes) elsewhere the intent names: the entity's membership in each.
    const lists = await replayLists(model, runner, intent);
    await log.complete(intent);
    result.intentsReplayed++;
    result.copiesWritten += outcome.written + lists.written;
    result.copiesDeleted += outcome.deleted + lists.deleted;
  } catch (error) {
    const attempts = intent.attempts + 1;
    if (attempts >= MAX_REPLAY_ATTEMPTS) {
      await setAside(model, runner, log, { ...intent, attempts }, error);
      result.poisoned++;
      return;
    }
    try {
      await log.recordAttempt(intent);
    } catch (recordError) {
      // Finished meanwhile by its writer or another repair: nothing left to count.
      if (!(recordError instanceof EntityNotFoundError || recordError instanceof ConcurrencyError))
        throw recordError;
    }
  }
}

/** Brings the intent's entity's membership in line in every index entity (list index) the intent names. */
async function replayLists<T extends object>(
  model: EntityModel<T>,
  runner: Requests & TableNaming & Backoff & PeriodTableLookup,
  intent: Intent,
): Promise<{ written: number; deleted: number }> {
  const total = { written: 0, deleted: 0 };
  const any = model as unknown as EntityModel<object>;
  const member = entityMember(any, runner, intent.table, intent.sourcePartitionKey, intent.sourceRowKey);
  const isList = (ref: CopyRef) => model.indexes.has(ref.index) && !keepsCopies(model.indexes.get(ref.index));
  for (const ref of intent.refs.filter(isList)) {
    const outcome = await reconcileList(any, runner, ref, [member]);
    total.written += outcome.written;
    total.deleted += outcome.deleted;
  }
  return total;
}

/** Moves an intent to the poison partition (written there first, then removed from its shard). */
async function setAside<T extends object>(
  model: EntityModel<T>,
  runner: Requests,
  log: IntentLog,
  intent: Intent,
  error: unknown,
): Promise<void> {
  const table = log.table;
  const reason =
    error instanceof Error ? `${error.name}: ${error.message}` : error === undefined ? "" : String(error);
  await runner.run("poisonIntent", table, (s) =>
    s.upsert(
      table,
      {
        partitionKey: poisonPartition(model.type),
        rowKey: intent.rowKey,
        table: intent.table,
        sourcePartitionKey: intent.sourcePartitionKey,
        sourceRowKey: intent.sourceRowKey,
        refs: encodeCopyRefs(intent.refs),
        attempts: intent.attempts,
        shard: intent.partitionKey,
        error: reason.slice(0, 4000),
      },
      "replace",
    ),
  );
  await log.complete(intent);
}

/** Fixes everything a scan finds: each drifting entity is reconciled with its current state. */
async function repairScan<T extends object>(
  model: EntityModel<T>,
  runner: Requests & TableNaming & Backoff & PeriodTableLookup,
  result: RepairResult,
): Promise<void> {
  const scan = await scanIndexes(model, runner);
  for (const entity of scan.entities) {
    const outcome = await reconcileEntity(
      model,
      runner,
      entity.table,
      entity.partitionKey,
      entity.rowKey,
      entity.refs,
      "all",
    );
    result.copiesWritten += outcome.written;
    result.copiesDeleted += outcome.deleted;
  }
  for (const { ref, members } of scan.lists) {
    const outcome = await reconcileList(model as unknown as EntityModel<object>, runner, ref, members);
    result.copiesWritten += outcome.written;
    result.copiesDeleted += outcome.deleted;
  }
  for (const { ref, etag } of scan.unowned) {
    try {
      const deleted = await runner.run("repairUncopy", ref.table, (s) =>
        s.delete(ref.table, ref.partitionKey, ref.rowKey, etag),
      );
      if (deleted) result.copiesDeleted++;
    } catch (error) {
      // Rewritten since the scan: no longer the orphan that was seen.
      if (!(error instanceof ConcurrencyError)) throw error;
    }
  }
}
