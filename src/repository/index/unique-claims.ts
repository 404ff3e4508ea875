import { EntityAlreadyExistsError, UniqueConstraintError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import type { WireEntity } from "../../store/table-store.js";
import {
  COPY_SOURCE_PK_PROPERTY,
  COPY_SOURCE_RK_PROPERTY,
  type CopyRef,
  indexOf,
  refKey,
} from "../core/copy-ref.js";
import type { Requests } from "../core/requests.js";
import { buildCopy } from "./copy-builder.js";

/**
 * Claims new values of unique remote indexes before the entity is written, by inserting their
 * copies (an insert is the service's only atomic "take this key"); each claim made is pushed to
 * `claimed`, so the caller can release them when the write is refused.
 */
export async function claimUnique(
  model: EntityModel<object>,
  runner: Requests,
  row: WireEntity,
  next: readonly CopyRef[],
  before: readonly CopyRef[],
  claimed: CopyRef[],
): Promise<void> {
  const held = new Set(before.map(refKey));
  for (const ref of next) {
    if (held.has(refKey(ref)) || !indexOf(model, ref).unique) continue;
    if (await claim(model, runner, row, ref)) claimed.push(ref);
  }
}

/** How often a claim is retried when the value's holder vanished between the 409 and the read. */
const MAX_CLAIM_ROUNDS = 10;

/** Inserts the copy; resolves whether this call wrote it (false: this very entity held it already). */
async function claim(
  model: EntityModel<object>,
  runner: Requests,
  row: WireEntity,
  ref: CopyRef,
): Promise<boolean> {
  const copy = buildCopy(model, row, ref);
  for (let round = 1; ; round++) {
    try {
      await runner.run("claim", ref.table, (s) => s.insert(ref.table, copy));
      return true;
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
      if (ours) return false;
      throw new UniqueConstraintError(
        { index: ref.index, table: ref.table, partitionKey: ref.partitionKey, rowKey: ref.rowKey },
        { cause: error },
      );
    }
  }
}

/** Deletes copies (unconditionally: each is this entity's own, and a delete of a missing one is a no-op). */
export async function releaseCopies(runner: Requests, refs: readonly CopyRef[]): Promise<void> {
  for (const ref of refs) {
    await runner.run("uncopy", ref.table, (s) => s.delete(ref.table, ref.partitionKey, ref.rowKey, "*"));
  }
}

/** Writes the remote copies the entity derives now (claims are written already) and removes those it no longer does. */
export async function syncRemoteCopies(
  model: EntityModel<object>,
  runner: Requests,
  row: WireEntity,
  next: readonly CopyRef[],
  before: readonly CopyRef[],
  claimed: readonly CopyRef[],
): Promise<void> {
  const fresh = new Set(claimed.map(refKey));
  for (const ref of next) {
    if (fresh.has(refKey(ref))) continue;
    const copy = buildCopy(model, row, ref);
    await runner.run("copy", ref.table, (s) => s.upsert(ref.table, copy, "replace"));
  }
  const keep = new Set(next.map(refKey));
  await releaseCopies(
    runner,
    before.filter((r) => !keep.has(refKey(r))),
  );
}

/**
 * One unique value's claim as a step of a write's plan: the copy inserted, or, when this very entity
 * holds it already (an earlier attempt), brought up to date.
 */
export async function claimOne(
  model: EntityModel<object>,
  runner: Requests,
  row: WireEntity,
  ref: CopyRef,
): Promise<void> {
  if (!(await claim(model, runner, row, ref))) await upsertCopy(model, runner, row, ref);
}

/** Writes one copy elsewhere (the entity's current values). */
export async function upsertCopy(
  model: EntityModel<object>,
  runner: Requests,
  row: WireEntity,
  ref: CopyRef,
): Promise<void> {
  const copy = buildCopy(model, row, ref);
  await runner.run("copy", ref.table, (s) => s.upsert(ref.table, copy, "replace"));
}
