import { ConcurrencyError, EntityAlreadyExistsError, EntityNotFoundError, StoreError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import { assembleWide, parsePart, wideEtag } from "../../serialization/wide-rows.js";
import type { StoredEntity, WireEntity } from "../../store/table-store.js";
import {
  COPY_REFS_PROPERTY,
  type CopyRef,
  decodeCopyRefs,
  encodeCopyRefs,
  isLocal,
  refKey,
} from "../core/copy-ref.js";
import { readEntity } from "../core/entity-layout.js";
import { isTableNotFound } from "../core/period-tables.js";
import type { PeriodTableLookup, Requests, TableNaming } from "../core/requests.js";
import { readPartRows } from "../core/wide-reads.js";
import { buildCopy } from "./copy-builder.js";
import {
  entityStateOf,
  holdsCopy,
  isCopyOf,
  isCopyRef,
  isCopyRowOf,
  isEntityRowOf,
  isNewerRow,
  ownerOf,
  sameRefSet,
} from "./copy-rows.js";
import {
  COPY_STAMP_PROPERTY,
  isOthersClaim,
  notClaimedByOthers,
  type Removable,
  type Stamp,
  stampOf,
  versionStamp,
} from "./copy-stamp.js";

/** Which of an entity's derived copies a reconciliation writes. */
export type ReconcileScope =
  /** Copies outside the entity's own partition (the ones an intent covers), plus local ones when the row's copy list is wrong. */
  | "remote"
  /** Every copy. */
  | "all";

/** What one reconciliation changed, and the copies it could not write because another live entity holds their key. */
export interface ReconcileOutcome {
  written: number;
  deleted: number;
  conflicts: CopyRef[];
  /** The entity was written by a newer version of the class: nothing was done, its copies are that version's business. */
  deferred: boolean;
}

/** How often a reconciliation starts over because the entity (or a copy) changed under it. */
const MAX_ROUNDS = 8;

/** Thrown when an entity keeps changing while its copies are reconciled (a replay counts it as a failed attempt). */
export class ReconcileRaceError extends StoreError {
  constructor(table: string, partitionKey: string, rowKey: string) {
    super(
      `index copies of ${table} '${partitionKey}'/'${rowKey}' could not be reconciled: the entity kept changing (${MAX_ROUNDS} rounds)`,
    );
  }
}

type Step = "same" | "written" | "deleted" | "absent" | "foreign" | "raced" | "kept";

/**
 * Brings the index copies of one entity in line with the entity's state as read now (never with
 * what an intent or a scan saw earlier):
 * - every derived copy in scope is written where it is missing or differs (insert when absent,
 *   a replace conditional on the copy's ETag otherwise), never over another live entity's copy;
 * - every candidate ref (an intent's refs, a scan's orphans, the row's own copy list) that the
 *   entity no longer derives is deleted, if it is still this entity's copy and its stamp is one the
 *   caller may remove (`removable`, see copy-stamp.ts; ETag-conditional);
 * - an entity row whose copy list (`_tkIndexKeys`) disagrees with its values gets the right list
 *   first (a new version of the entity: its copies elsewhere are stamped with it).
 * Copies elsewhere are stamped with the version read; another write's claim in progress is left
 * as it is when it holds the right values (that write stamps it after its commit).
 * If anything was changed, the entity is read again: when its ETag moved meanwhile (a concurrent
 * write), everything is redone against the new state, counting what was written earlier as
 * candidates, so no copy of a value the entity no longer holds survives and no copy it derives is
 * left deleted. Each step is idempotent; the cost is a few requests per ref.
 */
export async function reconcileEntity<T extends object>(
  model: EntityModel<T>,
  runner: Requests & TableNaming & PeriodTableLookup,
  table: string,
  partitionKey: string,
  rowKey: string,
  candidates: readonly CopyRef[],
  scope: ReconcileScope,
  removable: Removable = notClaimedByOthers(),
): Promise<ReconcileOutcome> {
  const outcome: ReconcileOutcome = { written: 0, deleted: 0, conflicts: [], deferred: false };
  const touched = new Map<string, CopyRef>();
  for (const ref of candidates) if (isCopyRef(model, ref)) touched.set(refKey(ref), ref);
  // The stamps of the copies this reconciliation wrote (or sent): the rule's "the write that made it"
  // (a version read in an earlier round, replaced meanwhile by a write whose cleanup came first).
  const made = new Set<Stamp>();
  const mayRemove: Removable = (stamp) => removable(stamp) || (stamp !== undefined && made.has(stamp));

  for (let round = 1; round <= MAX_ROUNDS; round++) {
    const stored = await readWhole(model, runner, table, partitionKey, rowKey);
    let baseline = stored?.etag;
    const entity = stored && isEntityRowOf(model, stored) ? stored : undefined;
    if (entity && isNewerRow(model, entity)) {
      outcome.deferred = true;
      return outcome;
    }
    const state = entity ? entityStateOf(model, runner, entity) : undefined;
    const derived = state?.copies ?? [];
    const recorded = entity ? decodeCopyRefs(entity[COPY_REFS_PROPERTY]) : undefined;
    const listOk = !entity || (recorded !== undefined && sameRefSet(recorded, state?.refs ?? []));
    const inScope = (ref: CopyRef) => scope === "all" || !listOk || !isLocal(ref, table, partitionKey);
    for (const ref of recorded ?? [])
      if (inScope(ref) && isCopyRef(model, ref)) touched.set(refKey(ref), ref);

    let changed = false;
    let raced = false;
    const conflicts: CopyRef[] = [];
    if (state && entity && !listOk) {
      // First the right list, a new version: the copies elsewhere below are stamped with it. What
      // this version derives stays a candidate if the rewrite loses to a write (read again).
      for (const ref of derived) touched.set(refKey(ref), ref);
      const etag = await rewriteCopyList(model, runner, table, partitionKey, rowKey, entity.etag, state.refs);
      if (etag === undefined) continue;
      baseline = etag;
      changed = true;
    }
    if (state) {
      const version = baseline === undefined ? undefined : versionStamp(baseline);
      for (const ref of derived) {
        if (!inScope(ref)) continue;
        touched.set(refKey(ref), ref);
        // Copies in the entity's own partition change in its transactions only: no stamp.
        const stamp = isLocal(ref, table, partitionKey) ? undefined : version;
        const copy = buildCopy(model, state.wire, ref, stamp);
        const step = await writeCopy(model, runner, ref, copy, partitionKey, rowKey, removable);
        // A write sent ("raced": refused, or its answer lost and its retry refused) may have landed.
        if ((step === "written" || step === "raced") && stamp !== undefined) made.add(stamp);
        if (step === "written") {
          outcome.written++;
          changed = true;
        } else if (step === "raced") raced = true;
        else if (step === "foreign") conflicts.push(ref);
      }
    }
    const keep = new Set(derived.map(refKey));
    for (const [key, ref] of touched) {
      if (keep.has(key)) continue;
      const step = await deleteCopy(model, runner, ref, partitionKey, rowKey, mayRemove);
      if (step === "deleted") {
        outcome.deleted++;
        changed = true;
      } else if (step === "raced") raced = true;
    }
    if (raced) continue;
    outcome.conflicts = conflicts;
    // Nothing changed: nothing of ours can contradict a newer state of the entity.
    if (!changed) return outcome;
    const after = await readWhole(model, runner, table, partitionKey, rowKey);
    if (after?.etag === baseline) return outcome;
  }
  throw new ReconcileRaceError(table, partitionKey, rowKey);
}

/**
 * Writes the entity's right copy list (`_tkIndexKeys`) onto the row that holds it, a merge of that
 * property alone conditional on the row's ETag, and gives the entity's new ETag; `undefined` when the
 * entity is no longer the version `etag` (a concurrent write wins, the caller reads again). A wide
 * entity's list is on whichever of its rows the split put it (the last column: the last row when it
 * is absent); only that row is merged, so the entity keeps its values, its rows and its write id, and
 * any write of it replaces every row (its condition on that row fails after this one, as for one row).
 */
async function rewriteCopyList<T extends object>(
  model: EntityModel<T>,
  runner: Requests,
  table: string,
  partitionKey: string,
  rowKey: string,
  etag: string,
  refs: readonly CopyRef[],
): Promise<string | undefined> {
  const list = { [COPY_REFS_PROPERTY]: encodeCopyRefs(refs) };
  let row = { key: rowKey, etag };
  let wholeEtag = (written: string): string => written;
  if (model.wide) {
    const rows = (await readPartRows(runner, table, partitionKey, rowKey))
      .filter((r) => parsePart(r)?.base === rowKey)
      .sort((a, b) => (parsePart(a)?.index ?? 0) - (parsePart(b)?.index ?? 0));
    // Rows of another version than the one judged (or not one whole write): a write came in between.
    if (assembleWide(rows)?.etag !== etag) return undefined;
    const found = rows.findIndex((r) => r[COPY_REFS_PROPERTY] !== undefined);
    const at = found >= 0 ? found : rows.length - 1;
    const holder = rows[at] as StoredEntity;
    row = { key: holder.rowKey, etag: holder.etag };
    wholeEtag = (written) => wideEtag(rows.map((r, index) => (index === at ? written : r.etag)));
  }
  try {
    const written = await runner.run("repairCopyList", table, (s) =>
      s.update(table, { partitionKey, rowKey: row.key, ...list }, "merge", row.etag),
    );
    return wholeEtag(written.etag);
  } catch (error) {
    if (error instanceof ConcurrencyError || error instanceof EntityNotFoundError) return undefined;
    throw error;
  }
}

/** The entity whole (a wide entity's rows assembled); a period's table not created yet holds nothing. */
async function readWhole<T extends object>(
  model: EntityModel<T>,
  runner: Requests & PeriodTableLookup,
  table: string,
  partitionKey: string,
  rowKey: string,
): Promise<StoredEntity | undefined> {
  if (!model.wide) return readRow(runner, table, partitionKey, rowKey);
  try {
    return await readEntity(model as unknown as EntityModel<object>, runner, table, partitionKey, rowKey);
  } catch (error) {
    if (isTableNotFound(error) && runner.periodTables.has(table)) return undefined;
    throw error;
  }
}

async function readRow(
  runner: Requests & PeriodTableLookup,
  table: string,
  partitionKey: string,
  rowKey: string,
): Promise<StoredEntity | undefined> {
  try {
    return await runner.run("get", table, (s) => s.getEntity(table, partitionKey, rowKey));
  } catch (error) {
    // A period's table not created yet (or dropped) holds nothing.
    if (isTableNotFound(error) && runner.periodTables.has(table)) return undefined;
    throw error;
  }
}

/**
 * Writes one derived copy where it is missing, differs, or (elsewhere) carries another version's
 * stamp; never overwrites another live entity's copy. A copy written before stamps, or claimed by
 * another write in progress, that holds the right values is left as it is.
 */
async function writeCopy<T extends object>(
  model: EntityModel<T>,
  runner: Requests & TableNaming & PeriodTableLookup,
  ref: CopyRef,
  copy: WireEntity,
  partitionKey: string,
  rowKey: string,
  removable: Removable,
): Promise<Step> {
  const row = await readRow(runner, ref.table, ref.partitionKey, ref.rowKey);
  try {
    if (!row) {
      await runner.run("repairCopy", ref.table, (s) => s.insert(ref.table, copy));
      return "written";
    }
    const ours = isCopyOf(model, row, ref.index, partitionKey, rowKey);
    const stamp = stampOf(row);
    const stampOk =
      stamp === undefined || stamp === copy[COPY_STAMP_PROPERTY] || isOthersClaim(stamp, removable);
    if (ours && holdsCopy(copy, row) && stampOk) return "same";
    if (!ours && !(await abandoned(model, runner, row, ref))) return "foreign";
    await runner.run("repairCopy", ref.table, (s) => s.update(ref.table, copy, "replace", row.etag));
    return "written";
  } catch (error) {
    if (
      error instanceof EntityAlreadyExistsError ||
      error instanceof ConcurrencyError ||
      error instanceof EntityNotFoundError
    )
      return "raced";
    throw error;
  }
}

/**
 * Whether a copy row at a key this entity derives may be taken over: it is a copy of this model
 * whose entity is gone or no longer derives that key (left behind), not a live entity's copy
 * (a unique violation, which is reported instead) nor a row of anything else.
 */
async function abandoned<T extends object>(
  model: EntityModel<T>,
  runner: Requests & TableNaming & PeriodTableLookup,
  row: StoredEntity,
  ref: CopyRef,
): Promise<boolean> {
  if (!isCopyRowOf(model, row)) return false;
  // The owner's table: the entity's, or for a table per period the one its period names.
  const owner = ownerOf(model, runner, ref.table, row);
  if (!owner) return true;
  const stored = await readRow(runner, owner.table, owner.partitionKey, owner.rowKey);
  if (!stored || !isEntityRowOf(model, stored)) return true;
  if (isNewerRow(model, stored)) return false;
  const key = refKey(ref);
  return !entityStateOf(model, runner, stored).refs.some((r) => refKey(r) === key);
}

/**
 * Deletes a copy the entity no longer derives, if it is still this entity's and stamped by a write
 * `removable` names (ETag-conditional); another write's copy or claim is that write's to remove.
 */
async function deleteCopy<T extends object>(
  model: EntityModel<T>,
  runner: Requests & PeriodTableLookup,
  ref: CopyRef,
  partitionKey: string,
  rowKey: string,
  removable: Removable,
): Promise<Step> {
  const row = await readRow(runner, ref.table, ref.partitionKey, ref.rowKey);
  if (!row) return "absent";
  if (!isCopyOf(model, row, ref.index, partitionKey, rowKey)) return "foreign";
  if (!removable(stampOf(row))) return "kept";
  try {
    const existed = await runner.run("repairUncopy", ref.table, (s) =>
      s.delete(ref.table, ref.partitionKey, ref.rowKey, row.etag),
    );
    return existed ? "deleted" : "absent";
  } catch (error) {
    if (error instanceof ConcurrencyError) return "raced";
    throw error;
  }
}
