import {
  ConcurrencyError,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  TransactionError,
  UniqueConstraintError,
} from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import { etagOf } from "../../serialization/entity-etag.js";
import type { StoredEntity, TransactionAction, WireEntity, WriteMode } from "../../store/table-store.js";
import type { StoreRunner } from "../store-runner.js";
import { submitTransaction } from "../submit-transaction.js";
import { buildCopy } from "./copy-builder.js";
import { reconcileEntity } from "./copy-reconciler.js";
import {
  COPY_REFS_PROPERTY,
  COPY_SOURCE_PK_PROPERTY,
  COPY_SOURCE_RK_PROPERTY,
  type CopyRef,
  decodeCopyRefs,
  deriveCopyRefs,
  encodeCopyRefs,
  indexOf,
  isLocal,
  refKey,
} from "./copy-ref.js";
import { rememberCopies, trackedCopies } from "./copy-state.js";
import { foreignProperties } from "./foreign-properties.js";
import type { Intent, IntentLog } from "./intent-log.js";
import { memberOf, planListChange, readList } from "./list-index.js";
import { planLocalActions } from "./local-plan.js";

/** What is stored now for an entity, as far as its copies are concerned. */
type Existing = { exists: true; etag: string; refs: readonly CopyRef[] };
type Prior = { exists: false } | Existing;

/** How many times a write re-reads and retries after losing a race on its own bookkeeping. */
const MAX_ROUNDS = 10;

/**
 * Writes entities that have secondary indexes. Copies in the entity's own table and partition
 * ride in the entity's entity group transaction (atomic: the design guide's intra-partition
 * index). Copies elsewhere follow the eventually-consistent-transactions pattern: an intent is
 * recorded first, unique values are claimed, the entity is written, copies are brought in line,
 * the intent is removed; `repairIndexes` replays intents left by a crash.
 */
export class IndexedWriter<T extends object> {
  readonly #model: EntityModel<T>;
  readonly #table: string;
  readonly #runner: StoreRunner;
  readonly #intents: IntentLog;

  constructor(model: EntityModel<T>, table: string, runner: StoreRunner, intents: IntentLog) {
    this.#model = model;
    this.#table = table;
    this.#runner = runner;
    this.#intents = intents;
  }

  /** Inserts the entity and its copies; `EntityAlreadyExistsError` or `UniqueConstraintError` otherwise. */
  async insert(entity: T): Promise<string> {
    return this.#commit(entity, this.#model.mapper.toWire(entity), { exists: false }, undefined);
  }

  /** Insert or replace (or merge), keeping copies exact; re-reads and retries when it loses a race. */
  async upsert(entity: T, mode: WriteMode): Promise<string> {
    const wire = this.#model.mapper.toWire(entity);
    let prior: Prior = this.#trackedPrior(entity) ?? { exists: false };
    for (let round = 1; ; round++) {
      try {
        if (mode === "merge") {
          // Copies derive from the whole entity: merge onto what is stored, then write it all.
          const merged = await this.#merged(wire);
          if (merged) {
            prior = merged.prior;
            return await this.#commit(entity, merged.wire, merged.prior, merged.prior.etag);
          }
          prior = { exists: false };
        }
        return await this.#commit(entity, wire, prior, prior.exists ? prior.etag : undefined);
      } catch (error) {
        // Our picture of the stored entity was stale (or it appeared meanwhile): read it and go again.
        const lostRace =
          (error instanceof EntityAlreadyExistsError && !prior.exists) ||
          (error instanceof ConcurrencyError && prior.exists) ||
          (error instanceof EntityNotFoundError && prior.exists);
        if (!lostRace || round >= MAX_ROUNDS) throw error;
        prior = await this.#read(wire.partitionKey, wire.rowKey);
      }
    }
  }

  /** Replaces or merges an existing entity conditional on `ifMatch` (`"*"`: any version). */
  async update(entity: T, mode: WriteMode, ifMatch: string): Promise<string> {
    const wire = this.#model.mapper.toWire(entity);
    for (let round = 1; ; round++) {
      const tracked = this.#trackedPrior(entity);
      const prior =
        tracked && (ifMatch === "*" || tracked.etag === ifMatch) && round === 1
          ? tracked
          : await this.#read(wire.partitionKey, wire.rowKey);
      if (!prior.exists)
        throw new EntityNotFoundError({
          table: this.#table,
          partitionKey: wire.partitionKey,
          rowKey: wire.rowKey,
        });
      if (ifMatch !== "*" && prior.etag !== ifMatch) {
        throw new ConcurrencyError({
          table: this.#table,
          partitionKey: wire.partitionKey,
          rowKey: wire.rowKey,
        });
      }
      try {
        if (mode === "merge") {
          const merged = await this.#merged(wire);
          if (!merged)
            throw new EntityNotFoundError({
              table: this.#table,
              partitionKey: wire.partitionKey,
              rowKey: wire.rowKey,
            });
          if (ifMatch !== "*" && merged.prior.etag !== ifMatch) {
            throw new ConcurrencyError({
              table: this.#table,
              partitionKey: wire.partitionKey,
              rowKey: wire.rowKey,
            });
          }
          return await this.#commit(entity, merged.wire, merged.prior, merged.prior.etag);
        }
        return await this.#commit(entity, wire, prior, prior.etag);
      } catch (error) {
        // With "*" the caller accepts any version: a race on our own condition is retried.
        if (ifMatch !== "*" || !(error instanceof ConcurrencyError) || round >= MAX_ROUNDS) throw error;
      }
    }
  }

  /** Deletes the entity and its copies; resolves whether it existed. */
  async delete(
    key: Partial<T>,
    partitionKey: string,
    rowKey: string,
    ifMatch: string | undefined,
  ): Promise<boolean> {
    for (let round = 1; ; round++) {
      const tracked = round === 1 ? this.#trackedPrior(key as T) : undefined;
      const prior = tracked ?? (await this.#read(partitionKey, rowKey));
      if (!prior.exists) return false;
      if (ifMatch !== undefined && ifMatch !== "*" && prior.etag !== ifMatch) {
        throw new ConcurrencyError({ table: this.#table, partitionKey, rowKey });
      }
      try {
        await this.#commitDelete(partitionKey, rowKey, prior);
        rememberCopies(key, undefined);
        return true;
      } catch (error) {
        if (error instanceof EntityNotFoundError) return false;
        if (
          !(error instanceof ConcurrencyError) ||
          (ifMatch !== undefined && ifMatch !== "*") ||
          round >= MAX_ROUNDS
        )
          throw error;
      }
    }
  }

  /** Reads the stored entity's ETag and copy refs. */
  async #read(partitionKey: string, rowKey: string): Promise<Prior> {
    const stored = await this.#runner.run("get", this.#table, (s) =>
      s.getEntity(this.#table, partitionKey, rowKey),
    );
    return stored ? { exists: true, etag: stored.etag, refs: this.refsOfStored(stored) } : { exists: false };
  }

  /** The copies a stored row says it has (or, for rows written without them, what its values derive). */
  refsOfStored(stored: StoredEntity): CopyRef[] {
    return (
      decodeCopyRefs(stored[COPY_REFS_PROPERTY]) ??
      deriveCopyRefs(this.#model, this.#model.mapper.fromWire(stored), (t) => this.#runner.tableName(t), true)
    );
  }

  #trackedPrior(entity: T): Existing | undefined {
    const etag = etagOf(entity);
    const refs = trackedCopies(entity);
    return etag !== undefined && refs !== undefined ? { exists: true, etag, refs } : undefined;
  }

  /** Merge with copies needs the whole entity: read, overlay the sent properties, write it all back. */
  async #merged(wire: WireEntity): Promise<{ wire: WireEntity; prior: Existing } | undefined> {
    const stored = await this.#runner.run("get", this.#table, (s) =>
      s.getEntity(this.#table, wire.partitionKey, wire.rowKey),
    );
    if (!stored) return undefined;
    const current = this.#model.mapper.toWire(this.#model.mapper.fromWire(stored));
    return {
      // Properties the class does not know are kept as stored, as a service-side merge would.
      wire: { ...foreignProperties(this.#model, stored), ...current, ...wire },
      prior: { exists: true, etag: stored.etag, refs: this.refsOfStored(stored) },
    };
  }

  async #commit(entity: T, wire: WireEntity, prior: Prior, ifMatch: string | undefined): Promise<string> {
    const model = this.#model;
    const next = deriveCopyRefs(model, model.mapper.fromWire({ ...wire, etag: "" }), (t) =>
      this.#runner.tableName(t),
    );
    const before = prior.exists ? prior.refs : [];
    const local = (ref: CopyRef) => isLocal(ref, this.#table, wire.partitionKey);
    const remoteBefore = before.filter((r) => !local(r));
    const remoteNext = next.filter((r) => !local(r));
    const row: WireEntity = { ...wire, [COPY_REFS_PROPERTY]: encodeCopyRefs(next) };
    const isList = (ref: CopyRef) => indexOf(model, ref).list;
    const member = memberOf(wire.partitionKey, wire.rowKey);
    const listChanges = membershipChanges(before.filter(isList), next.filter(isList), member);

    let intent: Intent | undefined;
    const claimed: CopyRef[] = [];
    if (remoteBefore.length > 0 || remoteNext.length > 0) {
      intent = await this.#intents.record(
        model.type,
        this.#table,
        wire.partitionKey,
        wire.rowKey,
        union(remoteBefore, remoteNext),
      );
      try {
        await this.#claim(
          row,
          remoteNext.filter((r) => !isList(r)),
          remoteBefore,
          claimed,
        );
      } catch (error) {
        // A claim whose answer was lost may have been written: leave it and the intent to repair.
        if (isDefinitive(error)) {
          await this.#release(claimed);
          await this.#intents.complete(intent);
        }
        throw error;
      }
    }

    const actions = planLocalActions(
      model,
      row,
      ifMatch,
      before.filter((r) => !isList(r)),
      next.filter((r) => !isList(r)),
      local,
    );

    let etag: string;
    try {
      etag = await this.#submitWithLists(
        wire.partitionKey,
        actions,
        listChanges.filter((c) => local(c.ref)),
        next,
      );
    } catch (error) {
      // Only when the service definitely refused the write: otherwise it may have applied, and the intent must stay for repair.
      if (intent && isDefinitive(error)) {
        await this.#release(claimed);
        await this.#intents.complete(intent);
      }
      throw error;
    }
    if (intent) {
      await this.#syncRemote(
        row,
        remoteNext.filter((r) => !isList(r)),
        remoteBefore.filter((r) => !isList(r)),
        claimed,
      );
      for (const change of listChanges) if (!local(change.ref)) await this.#syncList(change);
      await this.#settleRace(wire.partitionKey, wire.rowKey, etag, intent);
      await this.#intents.complete(intent);
    }
    rememberCopies(entity, next);
    return etag;
  }

  async #commitDelete(partitionKey: string, rowKey: string, prior: Existing): Promise<void> {
    const local = (ref: CopyRef) => isLocal(ref, this.#table, partitionKey);
    const remote = prior.refs.filter((r) => !local(r));
    const intent =
      remote.length > 0
        ? await this.#intents.record(this.#model.type, this.#table, partitionKey, rowKey, remote)
        : undefined;
    const isList = (ref: CopyRef) => indexOf(this.#model, ref).list;
    const listChanges = membershipChanges(prior.refs.filter(isList), [], memberOf(partitionKey, rowKey));
    const actions: TransactionAction[] = [{ kind: "delete", partitionKey, rowKey, ifMatch: prior.etag }];
    for (const ref of prior.refs)
      if (local(ref) && !isList(ref))
        actions.push({ kind: "delete", partitionKey: ref.partitionKey, rowKey: ref.rowKey, ifMatch: "*" });
    try {
      await this.#submitWithLists(
        partitionKey,
        actions,
        listChanges.filter((c) => local(c.ref)),
        prior.refs,
      );
    } catch (error) {
      if (intent && isDefinitive(error)) await this.#intents.complete(intent);
      throw error;
    }
    if (intent) {
      await this.#release(remote.filter((r) => !isList(r)));
      for (const change of listChanges) if (!local(change.ref)) await this.#syncList(change);
      await this.#intents.complete(intent);
    }
  }

  /**
   * Submits the entity's transaction together with its changes to same-partition index entities.
   * Those are conditional on the lists' ETags: when another writer changed a list meanwhile, the
   * whole transaction fails (nothing written), the lists are read again and it is resent.
   */
  async #submitWithLists(
    partitionKey: string,
    actions: TransactionAction[],
    changes: readonly ListChange[],
    refs: readonly CopyRef[],
  ): Promise<string> {
    if (changes.length === 0) return this.#submit(partitionKey, actions, refs);
    for (let round = 1; ; round++) {
      const listActions = (await Promise.all(changes.map((c) => this.#planList(c)))).flat();
      try {
        return await this.#submit(partitionKey, [...actions, ...listActions], refs, actions.length);
      } catch (error) {
        if (!(error instanceof ListConflict) || round >= MAX_LIST_ROUNDS)
          throw error instanceof ListConflict ? error.cause : error;
        await backoff(round);
      }
    }
  }

  /** Applies one membership change to an index entity in another partition (its own transaction, ETag-checked). */
  async #syncList(change: ListChange): Promise<void> {
    for (let round = 1; ; round++) {
      const actions = await this.#planList(change);
      if (actions.length === 0) return;
      try {
        await submitTransaction(this.#runner, change.ref.table, change.ref.partitionKey, actions);
        return;
      } catch (error) {
        const conflict =
          error instanceof TransactionError && (error.statusCode === 412 || error.statusCode === 409);
        if (!conflict || round >= MAX_LIST_ROUNDS) throw error;
        await backoff(round);
      }
    }
  }

  async #planList(change: ListChange): Promise<TransactionAction[]> {
    const state = await readList(this.#runner, change.ref);
    return planListChange(state, `${this.#model.type}@${this.#model.version}`, change);
  }

  /**
   * Another writer may have changed the entity while this one was writing its remote copies, and
   * the two writers' copy writes may have landed out of order. If the entity is no longer the
   * version this write produced, its copies are brought in line with what it is now.
   */
  async #settleRace(partitionKey: string, rowKey: string, etag: string, intent: Intent): Promise<void> {
    const now = await this.#runner.run("get", this.#table, (s) =>
      s.getEntity(this.#table, partitionKey, rowKey),
    );
    if (now?.etag === etag) return;
    await reconcileEntity(
      this.#model,
      this.#runner,
      this.#table,
      partitionKey,
      rowKey,
      intent.refs,
      "remote",
    );
  }

  /** Submits the entity's transaction, translating failures of its first action and of copies. */
  async #submit(
    partitionKey: string,
    actions: TransactionAction[],
    refs: readonly CopyRef[],
    listStart = actions.length,
  ): Promise<string> {
    let pending = actions;
    let lists = listStart;
    for (;;) {
      try {
        const { results } = await submitTransaction(this.#runner, this.#table, partitionKey, pending);
        return results[0]?.etag ?? "";
      } catch (error) {
        if (!(error instanceof TransactionError)) throw error;
        // An index entity changed since it was read: the caller reads the lists again.
        if (error.index >= lists) throw new ListConflict(error);
        const failed = pending[error.index];
        const keys = { table: this.#table, partitionKey, rowKey: error.rowKey ?? "" };
        if (error.index === 0) {
          if (error.statusCode === 409) throw new EntityAlreadyExistsError(keys, { cause: error });
          if (error.statusCode === 412) throw new ConcurrencyError(keys, { cause: error });
          if (error.statusCode === 404) throw new EntityNotFoundError(keys, { cause: error });
          throw error;
        }
        // A stale copy that is already gone needs no deleting: drop it and send the rest.
        if (failed?.kind === "delete" && error.statusCode === 404) {
          pending = pending.filter((_, i) => i !== error.index);
          lists--;
          continue;
        }
        if (failed?.kind === "insert" && error.statusCode === 409) {
          const ref = refs.find((r) => r.rowKey === failed.entity.rowKey);
          throw new UniqueConstraintError(
            { index: ref?.index ?? "?", ...keys, rowKey: failed.entity.rowKey },
            { cause: error },
          );
        }
        throw error;
      }
    }
  }

  /** Claims new values of unique remote indexes before the entity is written (released on failure). */
  async #claim(
    row: WireEntity,
    next: readonly CopyRef[],
    before: readonly CopyRef[],
    claimed: CopyRef[],
  ): Promise<void> {
    const held = new Set(before.map(refKey));
    for (const ref of next) {
      if (held.has(refKey(ref)) || !indexOf(this.#model, ref).unique) continue;
      const copy = buildCopy(this.#model, row, ref);
      try {
        await this.#runner.run("claim", ref.table, (s) => s.insert(ref.table, copy));
        claimed.push(ref);
      } catch (error) {
        if (!(error instanceof EntityAlreadyExistsError)) throw error;
        // Held already: by this very entity (an earlier, interrupted write) is fine; by another is a conflict.
        const holder = await this.#runner.run("get", ref.table, (s) =>
          s.getEntity(ref.table, ref.partitionKey, ref.rowKey),
        );
        const ours =
          holder &&
          holder[COPY_SOURCE_PK_PROPERTY] === row.partitionKey &&
          holder[COPY_SOURCE_RK_PROPERTY] === row.rowKey;
        if (!ours)
          throw new UniqueConstraintError(
            { index: ref.index, table: ref.table, partitionKey: ref.partitionKey, rowKey: ref.rowKey },
            { cause: error },
          );
      }
    }
  }

  /** Writes the remote copies the entity derives now and removes those it no longer does (idempotent steps). */
  async #syncRemote(
    row: WireEntity,
    next: readonly CopyRef[],
    before: readonly CopyRef[],
    claimed: readonly CopyRef[],
  ): Promise<void> {
    const fresh = new Set(claimed.map(refKey));
    for (const ref of next) {
      if (fresh.has(refKey(ref))) continue;
      const copy = buildCopy(this.#model, row, ref);
      await this.#runner.run("copy", ref.table, (s) => s.upsert(ref.table, copy, "replace"));
    }
    const keep = new Set(next.map(refKey));
    await this.#release(before.filter((r) => !keep.has(refKey(r))));
  }

  async #release(refs: readonly CopyRef[]): Promise<void> {
    for (const ref of refs) {
      await this.#runner.run("uncopy", ref.table, (s) =>
        s.delete(ref.table, ref.partitionKey, ref.rowKey, "*"),
      );
    }
  }
}

/** How many times a write re-reads index entities after losing a race on them (concurrent writers). */
const MAX_LIST_ROUNDS = 60;

/** One membership change to the index entity of one value. */
interface ListChange {
  ref: CopyRef;
  add?: string;
  remove?: string;
}

/** A transaction failed on an index entity another writer changed first. */
class ListConflict extends Error {
  constructor(override readonly cause: TransactionError) {
    super("index entity changed concurrently");
  }
}

/** The member additions and removals going from one set of list refs to another. */
function membershipChanges(
  before: readonly CopyRef[],
  next: readonly CopyRef[],
  member: string,
): ListChange[] {
  const nextKeys = new Set(next.map(refKey));
  const beforeKeys = new Set(before.map(refKey));
  return [
    ...before.filter((r) => !nextKeys.has(refKey(r))).map((ref) => ({ ref, remove: member })),
    ...next.filter((r) => !beforeKeys.has(refKey(r))).map((ref) => ({ ref, add: member })),
  ];
}

/** Whether the service definitely refused a write (as opposed to a fault after which it may have applied). */
function isDefinitive(error: unknown): boolean {
  return (
    error instanceof TransactionError ||
    error instanceof EntityAlreadyExistsError ||
    error instanceof EntityNotFoundError ||
    error instanceof ConcurrencyError ||
    error instanceof UniqueConstraintError
  );
}

/** A short random pause before retrying a lost race, so contending writers spread out. */
function backoff(round: number): Promise<void> {
  const ms = Math.random() * Math.min(50, 2 * round);
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function union(a: readonly CopyRef[], b: readonly CopyRef[]): CopyRef[] {
  const seen = new Map<string, CopyRef>();
  for (const ref of [...a, ...b]) seen.set(refKey(ref), ref);
  return [...seen.values()];
}
