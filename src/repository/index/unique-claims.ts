import {
  ConcurrencyError,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  UniqueConstraintError,
} from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import type { StoredEntity, WireEntity } from "../../store/table-store.js";
import { COPY_SOURCE_PK_PROPERTY, COPY_SOURCE_RK_PROPERTY, type CopyRef } from "../core/copy-ref.js";
import type { Requests } from "../core/requests.js";
import { buildCopy } from "./copy-builder.js";
import { isCopyOf } from "./copy-rows.js";
import { type Removable, type Stamp, stampOf } from "./copy-stamp.js";

/** How often a claim is retried when the value's holder vanished between the 409 and the read. */
const MAX_CLAIM_ROUNDS = 10;

/**
 * One unique value's claim, before the entity is written: its copy inserted (an insert is the
 * service's only atomic "take this key"), stamped as this write's claim (`stamp`). Resolves the
 * claim's ETag (its write after the commit is conditional on it, see `writeUniqueCopy`). A value this
 * entity's copy holds already (an earlier version, an earlier attempt) is taken over by a replace
 * conditional on that copy's ETag, never by an unconditional write: a claim is atomic either way, so
 * a value freed meanwhile and claimed by another entity is never overwritten (that would make two holders).
 */
export async function claimOne(
  model: EntityModel<object>,
  runner: Requests,
  row: WireEntity,
  ref: CopyRef,
  stamp: Stamp,
): Promise<string> {
  const copy = buildCopy(model, row, ref, stamp);
  for (let round = 1; ; round++) {
    try {
      const written = await runner.run("claim", ref.table, (s) => s.insert(ref.table, copy));
      return written.etag;
    } catch (error) {
      if (!(error instanceof EntityAlreadyExistsError)) throw error;
      // Held already: by this very entity (an earlier, interrupted or lost attempt, or a concurrent
      // write of it) is fine; by another is a conflict; by nobody any more (released meanwhile): claim again.
      const holder = await runner.run("get", ref.table, (s) =>
        s.getEntity(ref.table, ref.partitionKey, ref.rowKey),
      );
      if (!holder && round < MAX_CLAIM_ROUNDS) continue;
      const ours =
        holder &&
        holder[COPY_SOURCE_PK_PROPERTY] === row.partitionKey &&
        holder[COPY_SOURCE_RK_PROPERTY] === row.rowKey;
      if (ours && stampOf(holder) === stamp) return holder.etag;
      const taken = ours ? await takeOver(runner, ref, copy, holder) : undefined;
      if (taken !== undefined) return taken;
      if (ours && round < MAX_CLAIM_ROUNDS) continue;
      throw new UniqueConstraintError(
        { index: ref.index, table: ref.table, partitionKey: ref.partitionKey, rowKey: ref.rowKey },
        { cause: error },
      );
    }
  }
}

/** This entity's copy, as read (`holder`), stamped as this write's claim: its new ETag; `undefined` when it changed or went meanwhile. */
async function takeOver(
  runner: Requests,
  ref: CopyRef,
  copy: WireEntity,
  holder: StoredEntity,
): Promise<string | undefined> {
  try {
    const written = await runner.run("claim", ref.table, (s) =>
      s.update(ref.table, copy, "replace", holder.etag),
    );
    return written.etag;
  } catch (error) {
    if (error instanceof ConcurrencyError || error instanceof EntityNotFoundError) return undefined;
    throw error;
  }
}

/** Reads the copy row at `ref` (a kept or replaced copy, read after the commit). */
export function readCopy(runner: Requests, ref: CopyRef): Promise<StoredEntity | undefined> {
  return runner.run("get", ref.table, (s) => s.getEntity(ref.table, ref.partitionKey, ref.rowKey));
}

/**
 * Removes one copy elsewhere the entity (`row`'s keys) no longer has, by the rule of copy-stamp.ts:
 * the copy as read (`copy`) deleted only when it is still this entity's copy made by a write
 * `removable` names (for a write's cleanup: the version it replaced), conditional on the ETag read
 * with that stamp. A copy another write made or claimed meanwhile is left to that write.
 */
export async function removeCopy(
  model: EntityModel<object>,
  runner: Requests,
  row: Pick<WireEntity, "partitionKey" | "rowKey">,
  ref: CopyRef,
  copy: StoredEntity | undefined,
  removable: Removable,
): Promise<void> {
  if (!copy || !isCopyOf(model, copy, ref.index, row.partitionKey, row.rowKey)) return;
  if (!removable(stampOf(copy))) return;
  try {
    await runner.run("uncopy", ref.table, (s) =>
      s.delete(ref.table, ref.partitionKey, ref.rowKey, copy.etag),
    );
  } catch (error) {
    // Changed or removed since the read: another write's doing, its own settle read follows it.
    if (error instanceof ConcurrencyError || error instanceof EntityNotFoundError) return;
    throw error;
  }
}

/**
 * What a write knows of a unique value's copy when it writes it after its commit: the ETag of its
 * own claim (a new value), or the copy as read after the commit (a value kept from the replaced
 * version, which is not claimed again; `undefined`: absent).
 */
export type UniqueCopySeen = { claimEtag: string } | { read: StoredEntity | undefined };

/**
 * Writes a unique value's copy after the commit, stamped with the version committed (`stamp`),
 * without ever taking the value from another holder (issue 34). The copy row is the value's lock:
 * - it is replaced, conditional on its ETag, only while it is this entity's copy stamped by this
 *   write (`mine`: its claim, its version) or by the version it replaced, or unstamped: held for this
 *   entity by this write's chain of versions;
 * - when it is gone it is inserted: the insert fails when another entity claimed the value meanwhile;
 * - any other row is left: another entity's copy (the value was freed, by a newer version of this
 *   entity or a cleanup, and claimed), or this entity's copy stamped by another write (a newer write's
 *   claim or version, or an older write still in flight, which reads the entity once more after its
 *   copy requests and brings the copy in line with the version stored).
 * A refused condition reads the copy again and decides again. An unconditional upsert here would
 * overwrite a value claimed meanwhile (two holders), or a newer write's claim that this write's settle
 * read would then remove as its own (a lost copy). When the copy inserted or replaced here reflects a
 * version no longer stored, this write's settle read finds the newer one and removes or restamps it.
 */
export async function writeUniqueCopy(
  model: EntityModel<object>,
  runner: Requests,
  row: WireEntity,
  ref: CopyRef,
  stamp: Stamp,
  mine: Removable,
  seen: UniqueCopySeen,
): Promise<void> {
  const copy = buildCopy(model, row, ref, stamp);
  // The ETag to replace, `undefined` to insert, `null` to leave the row to its holder.
  const replaceable = (found: StoredEntity | undefined): string | undefined | null => {
    if (!found) return undefined;
    const ours = isCopyOf(model, found, ref.index, row.partitionKey, row.rowKey);
    return ours && mine(stampOf(found)) ? found.etag : null;
  };
  let etag = "claimEtag" in seen ? seen.claimEtag : replaceable(seen.read);
  for (let round = 1; etag !== null && round <= MAX_CLAIM_ROUNDS; round++) {
    const ifMatch = etag;
    try {
      await runner.run("copy", ref.table, (s) =>
        ifMatch === undefined ? s.insert(ref.table, copy) : s.update(ref.table, copy, "replace", ifMatch),
      );
      return;
    } catch (error) {
      const raced =
        error instanceof EntityAlreadyExistsError ||
        error instanceof ConcurrencyError ||
        error instanceof EntityNotFoundError;
      if (!raced) throw error;
      etag = replaceable(await readCopy(runner, ref));
    }
  }
}

/** Writes one copy elsewhere (the entity's current values), stamped with the write that made it. */
export async function upsertCopy(
  model: EntityModel<object>,
  runner: Requests,
  row: WireEntity,
  ref: CopyRef,
  stamp: Stamp | undefined,
): Promise<void> {
  const copy = buildCopy(model, row, ref, stamp);
  await runner.run("copy", ref.table, (s) => s.upsert(ref.table, copy, "replace"));
}
