import { ConcurrencyError, EntityAlreadyExistsError, EntityNotFoundError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import { etagIn, rememberEtag } from "../../serialization/entity-etag.js";
import { wideEtag } from "../../serialization/wide-rows.js";
import type { StoredEntity, WireEntity, WriteMode } from "../../store/table-store.js";
import { COPY_REFS_PROPERTY, type CopyRef, decodeCopyRefs, deriveCopyRefs } from "../core/copy-ref.js";
import { keepsCopies, readOfStored } from "../core/entity-features.js";
import { type EntityLayout, entityLayout, KEYS_ONLY } from "../core/entity-layout.js";
import type { EntityWriter } from "../core/entity-writer.js";
import { isExpiredRow, rememberExpiry, trackedVersionExpired } from "../core/expiry.js";
import type { CompanionSource } from "../core/group-companion.js";
import { IntentLog } from "../core/intent-log.js";
import { deleteExisted, isOutcomeUnknown } from "../core/lost-answers.js";
import type {
  Backoff,
  Clock,
  Limited,
  PeriodTableLookup,
  Requests,
  Scoped,
  TableNaming,
} from "../core/requests.js";
import type {
  AssumedState,
  ExplainedOperation,
  ExplainedPlan,
  ReadsOnly,
  StepTarget,
} from "../core/write-plan.js";
import { refsOfStored, rememberCopies, trackedCopies, trackedPrior } from "./copy-state.js";
import { type EntityPlanning, planEntityGroup } from "./entity-plan.js";
import { foreignProperties } from "./foreign-properties.js";
import {
  commitDelete,
  commitEntity,
  type Existing,
  entityPlanning,
  type IndexedTarget,
  type Prior,
  planDelete,
  planWrite,
} from "./intent-protocol.js";

/** How many times a write re-reads and retries after losing a race on its own bookkeeping. */
const MAX_ROUNDS = 10;
/** The version an explained write assumes of an entity given as stored that no read returned. */
const ASSUMED_ETAG = 'W/"assumed"';
/**
 * Writes entities that have secondary indexes, keeping their copies exact (see `commitEntity`),
 * entities with summaries (their summary rows ride in each write's transaction, `companions`), and
 * every wide entity (its rows in place of the one row, see entity-layout.ts):
 * the rounds of each write (read what is stored, commit, re-read after a lost race) and the
 * bookkeeping of what an instance's copies are.
 */
export class IndexedWriter<T extends object> implements EntityWriter<T> {
  readonly #model: EntityModel<T>;
  readonly #table: string;
  readonly #runner: Requests & TableNaming & Scoped & Limited & Clock;
  readonly #target: IndexedTarget;
  /** What its plans are made from (no store: `planWrite`). */
  readonly #planning: EntityPlanning;
  readonly #companions: CompanionSource | undefined;
  /** One row per entity, or a wide entity's rows: how the entity is read whole. */
  readonly #layout: EntityLayout;
  /** A wide entity without indexes or companions: a write needs only its rows' ETags (their keys are read). */
  readonly #versionOnly: boolean;

  /** `companions`: rows that ride in each write's transaction besides the copies (the entity's summaries). */
  constructor(
    model: EntityModel<T>,
    table: string,
    runner: Requests & TableNaming & Scoped & Clock & Backoff & PeriodTableLookup & Limited,
    companions?: CompanionSource,
  ) {
    this.#model = model;
    this.#table = table;
    this.#runner = runner;
    this.#companions = companions;
    this.#layout = entityLayout(model as unknown as EntityModel<object>, runner, table);
    this.#versionOnly = model.wide && !keepsCopies(model) && companions === undefined;
    this.#target = {
      model: model as unknown as EntityModel<object>,
      table,
      runner,
      intents: new IntentLog(runner),
      companions,
      layout: this.#layout,
    };
    this.#planning = entityPlanning(this.#target);
  }

  async insert(entity: T, prepared?: WireEntity): Promise<void> {
    const wire = this.#toWire(entity, prepared);
    try {
      await this.#commit(entity, wire, { exists: false }, undefined);
    } catch (error) {
      if (!(error instanceof EntityAlreadyExistsError) || this.#model.expiry === undefined) throw error;
      // An expired entity is absent (`expiresAt`): the insert replaces it, on the condition of the
      // version read, so its copies and summaries see the old entity leave and the new one arrive.
      const prior = await this.#read(wire.partitionKey, wire.rowKey);
      if (!prior.exists || !this.#expired(prior)) throw error;
      await this.#commit(entity, wire, prior, prior.etag);
    }
  }

  /**
   * Whether an upsert of an untracked instance reads the stored version first instead of trying an
   * insert: a wide entity's (as its plain writer does: an insert of its rows would fail on any stored
   * version and cost a round), and an entity without indexes whose only bookkeeping is its stages'
   * rows (a summarized one: the read is the one its summary delta needs of a stored entity, so the
   * upsert costs the same stored or not, and a refused insert costs no round of intents).
   */
  get #readsBeforeUpsert(): boolean {
    return this.#model.wide || (!keepsCopies(this.#model) && this.#companions !== undefined);
  }

  /** True when the stored entity has expired (`expiresAt` at or before now): writes treat it as absent. */
  #expired(prior: Prior): boolean {
    const row = prior.exists ? prior.row : undefined;
    return row !== undefined && isExpiredRow(this.#model, row as StoredEntity, this.#runner.now());
  }

  /** Insert or replace (or merge); re-reads and retries when it loses a race (an upsert's end state is ours either way). */
  async upsert(entity: T, mode: WriteMode, prepared?: WireEntity): Promise<void> {
    const wire = this.#toWire(entity, prepared);
    let prior: Prior | undefined = this.#trackedPrior(entity);
    if (prior === undefined && this.#readsBeforeUpsert && mode !== "merge") {
      // Read first (see `#readsBeforeUpsert`). What rides in the transaction is checked before that
      // read: a plain wide entity's rows against one transaction's limits, an entity with stages by
      // planning the whole write (its stages' keys and rows too).
      if (this.#versionOnly) planEntityGroup(this.#planning, wire, undefined, "*");
      else planWrite(this.#target, this.#planning, wire, undefined, "*");
      prior = await this.#read(wire.partitionKey, wire.rowKey);
    }
    prior ??= { exists: false };
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
        // Our picture of the stored entity was stale (or it appeared meanwhile), or an earlier
        // attempt may have applied: read it and go again (writing the same state twice is harmless).
        const lostRace =
          isOutcomeUnknown(error) ||
          (error instanceof EntityAlreadyExistsError && !prior.exists) ||
          (error instanceof ConcurrencyError && prior.exists) ||
          (error instanceof EntityNotFoundError && prior.exists);
        if (!lostRace || round >= MAX_ROUNDS) throw error;
        prior = await this.#read(wire.partitionKey, wire.rowKey);
      }
    }
  }

  async update(entity: T, mode: WriteMode, ifMatch: string, prepared?: WireEntity): Promise<void> {
    const wire = this.#toWire(entity, prepared);
    const keys = { table: this.#table, partitionKey: wire.partitionKey, rowKey: wire.rowKey };
    for (let round = 1; ; round++) {
      try {
        if (mode === "merge") {
          // The read to merge onto is the version checked: nothing is read before it.
          const merged = await this.#merged(wire);
          if (!merged || this.#expired(merged.prior)) throw new EntityNotFoundError(keys);
          if (ifMatch !== "*" && merged.prior.etag !== ifMatch) throw new ConcurrencyError(keys);
          return await this.#commit(entity, merged.wire, merged.prior, merged.prior.etag);
        }
        const tracked = this.#trackedPrior(entity, ifMatch);
        const prior =
          tracked && (ifMatch === "*" || tracked.etag === ifMatch) && round === 1
            ? tracked
            : await this.#read(wire.partitionKey, wire.rowKey);
        // An expired version is absent, whether read now or tracked from a read before it expired.
        const expired =
          prior === tracked
            ? trackedVersionExpired(entity, this.#runner.scope, this.#runner.now())
            : this.#expired(prior);
        if (!prior.exists || expired) throw new EntityNotFoundError(keys);
        if (ifMatch !== "*" && prior.etag !== ifMatch) throw new ConcurrencyError(keys);
        return await this.#commit(entity, wire, prior, prior.etag);
      } catch (error) {
        // With "*" the caller accepts any version: a race on our own condition is retried (so is
        // an unknown outcome: the same state written again). With an ETag, an unknown outcome is the answer.
        if (ifMatch !== "*" || !(error instanceof ConcurrencyError) || round >= MAX_ROUNDS) throw error;
      }
    }
  }

  async delete(key: Partial<T>, ifMatch: string | undefined): Promise<boolean> {
    const condition = ifMatch ?? etagIn(key, this.#runner.scope);
    const partitionKey = this.#model.partitionKey.encode(key as Record<string, unknown>, "PartitionKey");
    const rowKey = this.#model.rowKey.encode(key as Record<string, unknown>, "RowKey");
    this.#companions?.assertKey(rowKey);
    let possiblyApplied = false;
    for (let round = 1; ; round++) {
      const tracked = round === 1 ? this.#trackedPrior(key as T, condition) : undefined;
      const prior = tracked ?? (await this.#read(partitionKey, rowKey));
      if (!prior.exists) return this.#forget(key, deleteExisted(false, possiblyApplied));
      if (condition !== undefined && condition !== "*" && prior.etag !== condition) {
        throw new ConcurrencyError({ table: this.#table, partitionKey, rowKey });
      }
      try {
        await commitDelete(this.#target, this.#planning, partitionKey, rowKey, prior);
        return this.#forget(key, true);
      } catch (error) {
        if (error instanceof EntityNotFoundError)
          return this.#forget(key, deleteExisted(false, possiblyApplied));
        const unconditional = condition === undefined || condition === "*";
        if (!(error instanceof ConcurrencyError) || !unconditional || round >= MAX_ROUNDS) throw error;
        possiblyApplied ||= error.outcomeUnknown;
      }
    }
  }

  /**
   * The plan of a write as it runs from the state `assumed` gives (what is tracked of the instance
   * comes first: an instance a read returned is its own current state). A write that does not know
   * the stored version reads it first (a step); the plan then commits from what that read returns,
   * or, when nothing is stored, ends there (a delete, an update) or inserts (a patch). An upsert of
   * an untracked instance is tried as an insert first, except a wide entity's, which reads its rows
   * first (any stored version would refuse the insert); a patch reads the row to merge onto.
   */
  explain(operation: ExplainedOperation, value: T, assumed: AssumedState): ExplainedPlan {
    const values = value as Record<string, unknown>;
    const partitionKey = this.#model.partitionKey.encode(values, "PartitionKey");
    const rowKey = this.#model.rowKey.encode(values, "RowKey");
    this.#companions?.assertKey(rowKey);
    const tracked = this.#trackedPrior(value);
    const stored = tracked ?? this.#assumedPrior(assumed(partitionKey, rowKey));
    const read = (plan: ExplainedPlan) => this.#readFirst(plan, partitionKey, rowKey, operation === "patch");
    const nothing: ReadsOnly = { before: [], after: [] };
    const write = (wire: WireEntity, prior: Prior, ifMatch: string | undefined) =>
      planWrite(this.#target, this.#planning, wire, prior, ifMatch).plan;
    if (operation === "delete") {
      const plan = stored.exists
        ? planDelete(this.#target, this.#planning, partitionKey, rowKey, stored).plan
        : nothing;
      return tracked ? plan : read(plan);
    }
    if (operation === "patch") {
      const wire = this.#toWire(value);
      if (!stored.exists) return read(write(wire, { exists: false }, undefined));
      return read(write(this.#mergedOnto(stored, wire), stored, stored.etag));
    }
    const wire = this.#toWire(value);
    if (
      operation === "insert" ||
      (operation === "upsert" && tracked === undefined && !this.#readsBeforeUpsert)
    )
      return write(wire, { exists: false }, undefined);
    if (tracked) return write(wire, tracked, tracked.etag);
    // Read first: an update of nothing stored ends with that read (EntityNotFoundError).
    if (!stored.exists) return read(operation === "update" ? nothing : write(wire, stored, undefined));
    return read(write(wire, stored, stored.etag));
  }

  /**
   * What the write would read back for an entity assumed stored: its ETag and copies as tracked
   * when a read returned it, else as its values derive them (under a placeholder ETag).
   */
  #assumedPrior(entity: object | undefined): Prior {
    if (entity === undefined) return { exists: false };
    const scope = this.#runner.scope;
    const etag = etagIn(entity, scope) ?? this.#assumedEtag(entity as T);
    const refs = trackedCopies(entity, scope) ?? deriveCopyRefs(this.#model, entity as T, this.#runner, true);
    return { exists: true, etag, refs, row: { ...this.#model.mapper.toWire(entity as T), etag } };
  }

  /** The placeholder version of an entity no read returned: a wide entity's lists one per row its values take. */
  #assumedEtag(entity: T): string {
    if (!this.#model.wide) return ASSUMED_ETAG;
    const rows = this.#layout.write(this.#model.mapper.toWire(entity), undefined).length;
    return wideEtag(Array.from({ length: rows }, () => ASSUMED_ETAG));
  }

  /** The row a merge writes onto `stored` (as `#merged` builds it from the row it reads). */
  #mergedOnto(stored: Existing, wire: WireEntity): WireEntity {
    const row = stored.row as StoredEntity;
    const current = this.#model.mapper.toWire(this.#model.mapper.fromWire(row));
    return { ...foreignProperties(this.#model, row), ...current, ...wire };
  }

  /**
   * A plan whose first step reads the stored row (its ETag and copies). That read also gives the
   * stages the row the write replaces: a stage's own read of it is not sent.
   */
  #readFirst(plan: ExplainedPlan, partitionKey: string, rowKey: string, merge: boolean): ExplainedPlan {
    // A wide entity's rows are read as one range query (without copies or stages' rows: their keys,
    // or whole to merge onto).
    const request = this.#versionOnly
      ? merge
        ? "query (stored rows)"
        : "query (stored rows' keys)"
      : readOfStored(this.#model);
    const read = { request, table: this.#table, partitionKey, rowKey };
    const same = (step: StepTarget) =>
      step.request.startsWith("get") && step.partitionKey === partitionKey && step.rowKey === rowKey;
    return { ...plan, before: [read, ...plan.before.filter((step) => !same(step))] };
  }

  /**
   * Remembers which copies a row read back has, so a later write of the instance needs no read.
   * Only a row's own copy list is trusted: values of a projected read could derive the wrong copies.
   */
  track(entity: T, stored: StoredEntity): void {
    // An entity without indexes has no copies (and its row no list, see `withCopyRefs`).
    const refs = keepsCopies(this.#model) ? decodeCopyRefs(stored[COPY_REFS_PROPERTY]) : [];
    rememberCopies(entity, refs, this.#runner.scope);
    rememberExpiry(this.#model, entity, stored, this.#runner.scope);
  }

  /** The copies a stored row says it has (or, for rows written without them, what its values derive). */
  #refsOfStored(stored: StoredEntity): readonly CopyRef[] {
    return refsOfStored(this.#model, stored, this.#runner);
  }

  async #commit(entity: T, wire: WireEntity, prior: Prior, ifMatch: string | undefined): Promise<void> {
    const { etag, refs } = await commitEntity(this.#target, this.#planning, wire, prior, ifMatch);
    rememberEtag(entity, etag, this.#runner.scope);
    rememberCopies(entity, refs, this.#runner.scope);
    rememberExpiry(this.#model, entity, wire, this.#runner.scope);
  }

  #forget(key: Partial<T>, existed: boolean): boolean {
    rememberEtag(key, undefined, this.#runner.scope);
    rememberCopies(key, undefined, this.#runner.scope);
    rememberExpiry(this.#model, key, undefined, this.#runner.scope);
    return existed;
  }

  /**
   * Reads the stored entity's ETag and copy refs (and the row, for the stages). Of a wide entity
   * without copies or stages' rows, only the rows' keys: their ETags are all its write needs.
   */
  async #read(partitionKey: string, rowKey: string): Promise<Prior> {
    const select = this.#versionOnly ? KEYS_ONLY : undefined;
    const stored = await this.#layout.read(partitionKey, rowKey, select);
    return stored
      ? { exists: true, etag: stored.etag, refs: this.#refsOfStored(stored), row: stored }
      : { exists: false };
  }

  /** The instance's version and copies as tracked (see `trackedPrior`; `stated`: the version the caller states). */
  #trackedPrior(entity: T, stated?: string): Existing | undefined {
    return trackedPrior(this.#model, entity, this.#runner.scope, this.#versionOnly ? stated : undefined);
  }

  /** Merge with copies needs the whole entity: read, overlay the sent properties, write it all back. */
  async #merged(wire: WireEntity): Promise<{ wire: WireEntity; prior: Existing } | undefined> {
    const stored = await this.#layout.read(wire.partitionKey, wire.rowKey);
    if (!stored) return undefined;
    const prior: Existing = {
      exists: true,
      etag: stored.etag,
      refs: this.#refsOfStored(stored),
      row: stored,
    };
    // An expired entity is absent: the merge writes the sent properties alone over it, as an insert would.
    if (this.#expired(prior)) return { wire, prior };
    const current = this.#model.mapper.toWire(this.#model.mapper.fromWire(stored));
    return {
      // Properties the class does not know are kept as stored, as a service-side merge would.
      wire: { ...foreignProperties(this.#model, stored), ...current, ...wire },
      prior: { exists: true, etag: stored.etag, refs: this.#refsOfStored(stored), row: stored },
    };
  }

  /**
   * The entity as written (`prepared`: the row a stage around the writer prepared, see `EntityWriter`);
   * refused before any request if its RowKey is a companion's (a summary row's).
   */
  #toWire(entity: T, prepared?: WireEntity): WireEntity {
    const wire = prepared ?? this.#model.mapper.toWire(entity);
    this.#companions?.assertKey(wire.rowKey);
    return wire;
  }
}
