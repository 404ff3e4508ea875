import { ValidationError } from "../../errors.js";
import { type EntityClass, type EntityModel, getEntityModel } from "../../schema/entity-model.js";
import type { TableStore } from "../../store/table-store.js";
import { registerPeriodTables } from "../core/period-tables.js";
import type { RepairKind, RepairReport } from "../core/repair-kind.js";
import type { RepairWorker, RepairWorkerOptions } from "../core/repair-worker.js";
import { StoreRunner } from "../core/store-runner.js";
import type { ChangeFeed } from "../feed/change-feed.js";
import { type RepairOptions, type RepairResult, repairIndexes } from "../index/index-repairer.js";
import { type IndexDrift, verifyIndexes } from "../index/index-verifier.js";
import type { LargeValueRepairOptions, LargeValueRepairResult } from "../large/large-value-repairer.js";
import type { SummaryDrift } from "../summary/summary-verifier.js";
import { claimEncryption, claimType, warnOnce } from "./context-claims.js";
import { changeFeedOf } from "./context-feeds.js";
import type { RepairAllOptions, TableContextOptions } from "./context-options.js";
import { repairKindsOf, repairLargeValuesOf, summariesOf } from "./context-repair.js";
import { ContextRepairs } from "./context-repairs.js";
import { type ContextStack, composeStack } from "./context-runner.js";
import { dropPeriodTables, ensureTablesOf, periodTablesOf } from "./context-tables.js";
import { DynamicRepository } from "./dynamic/dynamic-repository.js";
import { EventualTransaction } from "./eventual/eventual-transaction.js";
import {
  type EventualDeps,
  type EventualResult,
  type KnownClass,
  runEventually,
} from "./eventual/run-eventually.js";
import { type EventualBuild, explainEventual, explainTransaction } from "./explain-forms.js";
import type { ExplainOptions, WritePlan } from "./explain-write.js";
import { type EntityOf, MultiEntitySource } from "./multi-entity-source.js";
import { checkReencrypt, type ReencryptOptions, type ReencryptResult, reencrypt } from "./reencrypt.js";
import { Repository } from "./repository.js";
import { rewriteBlindValues } from "./rewrite-blind-values.js";
import { runTransaction } from "./run-transaction.js";
import { type SweepOptions, type SweepResult, sweepExpired } from "./sweep-expired.js";
import { Transaction } from "./transaction.js";
import type { TransactionResult } from "./transaction-commit.js";

export type { RepairAllOptions, TableContextOptions } from "./context-options.js";
export type { TransactionResult } from "./transaction-commit.js";

/**
 * The entry point: binds entity classes to a store.
 * @example
 * const db = new TableContext({ store: new MemoryStore() });
 * await db.ensureTables(Employee);
 * const employees = db.repository(Employee);
 */
export class TableContext {
  readonly store: TableStore;
  readonly #runner: StoreRunner;
  /** The store stack's pieces handed out: encryption, encrypted row types, period tables (context-runner.ts). */
  readonly #stack: ContextStack;
  readonly #repositories = new Map<Function, Repository<object>>();
  /** The class holding each (table, type) pair used in this context: rows are told apart by type. */
  readonly #types = new Map<string, EntityModel>();
  /** Entity classes whose schema warnings this context has reported. */
  readonly #warned = new Set<Function>();
  readonly #now: () => number;
  /** The kinds of unfinished work `repair` finishes, in order, its passes and workers. */
  readonly #repairs: ContextRepairs;
  /** Whether the context was given `encryption` keys. */
  readonly #encrypts: boolean;

  constructor(options: TableContextOptions) {
    if (!options?.store)
      throw new ValidationError("store", "TableContext needs a store: new MemoryStore() or AzureStore");
    this.store = options.store;
    const stack = composeStack(options, (report) => this.#runner.emit({ type: "throughput", ...report }));
    this.#runner = new StoreRunner(
      stack.target,
      stack.retry,
      options.onEvent,
      stack.prefix,
      stack.scope,
      stack.limits,
      stack.periodTables,
      options.store,
      stack.encryption.blobSealer,
      stack.encryption.blindIndex,
    );
    this.#stack = stack;
    this.#encrypts = options.encryption !== undefined;
    this.#now = options.now ?? Date.now;
    // Index intents are dated and aged by the same clock as eventual transactions.
    this.#runner.now = this.#now;
    this.#runner.feed = { tables: stack.feedTables, directory: stack.feedDirectory };
    const kinds = repairKindsOf({
      runner: this.#runner,
      periodTables: this.#stack.periodTables,
      types: this.#types,
      eventual: () => this.#eventualDeps(),
      store: options.store,
      feedDirectory: stack.feedDirectory,
    });
    this.#repairs = new ContextRepairs(kinds, (event) => this.#runner.emit(event));
    const message = stack.telemetryWarning;
    if (message !== undefined)
      this.#runner.emit({ type: "warning", code: "opentelemetry-unloadable", message });
    // Each call a span: the context's methods run on this object, the proxy only opens their spans.
    // biome-ignore lint/correctness/noConstructorReturn: the traced proxy of this very context, with its class and private state
    if (stack.telemetry !== undefined) return stack.telemetry.trace(this);
  }

  /** The repository of an entity class (one per class per context). */
  repository<T extends object>(entityClass: EntityClass<T>): Repository<T> {
    let repository = this.#repositories.get(entityClass);
    if (!repository) {
      const model = getEntityModel(entityClass);
      this.#claimType(model);
      this.#warn(model);
      repository = Repository.build(
        model,
        this.#runner,
        this.store,
        this.#stack.periodTables,
      ) as unknown as Repository<object>;
      this.#repositories.set(entityClass, repository);
    }
    return repository as unknown as Repository<T>;
  }

  /** The change feed of a class declared with `changeFeed` (docs/change-feed.md): `read` pages, `consume` groups. */
  changes<T extends object>(entityClass: EntityClass<T>): ChangeFeed<T> {
    this.repository(entityClass);
    return changeFeedOf(getEntityModel(entityClass), this.#runner, this.#stack);
  }

  /**
   * An untyped repository over any table (its name gets this context's `tablePrefix`): rows are
   * plain objects `{ partitionKey, rowKey, ...properties }` with typed wire values.
   * @example
   * const row = await db.dynamic("Events").get("device-7", "0001");
   */
  dynamic(table: string): DynamicRepository {
    return DynamicRepository.build(this.#runner, table);
  }

  /**
   * Several entity classes sharing one table, read together with a typed union result: every class
   * must share the table and the partitionKey template (else `SchemaError`), so `find` is one
   * partition query; each row is resolved to its class by its `EntityType`.
   * @example
   * const rows = await db.query(Department, Employee).find({ department: "Sales" }).toArray(); // Array<Department | Employee>
   */
  query<const C extends readonly [EntityClass, ...EntityClass[]]>(
    ...entityClasses: C
  ): MultiEntitySource<EntityOf<C[number]>> {
    const repositories = entityClasses.map((entityClass) => this.repository(entityClass));
    const wide = repositories.find((repository) => repository.model.wide);
    if (wide !== undefined) {
      throw new ValidationError(
        "wide-rows",
        `${wide.model.name} is a wide entity: each of its rows holds only part of it, so db.query cannot read it row by row; read it with its repository's get, find or scan`,
      );
    }
    return MultiEntitySource.build(repositories, this.#runner);
  }

  /**
   * Deletes the entities of an `expiresAt` class that are due, reading only the due part of its expiry index.
   * @example
   * const { deleted } = await db.sweepExpired(Session, { limit: 500 });
   */
  sweepExpired<T extends object>(entityClass: EntityClass<T>, options?: SweepOptions): Promise<SweepResult> {
    return sweepExpired(this.repository(entityClass), this.#runner, options);
  }

  /** Models are built at decoration time, without a context, so their warnings are reported on first use here. */
  #warn(model: EntityModel): void {
    warnOnce(this.#warned, model, (event) => this.#runner.emit(event));
  }

  /** The classes this context has seen, by logical table and type (what repair replays through). */
  #known(table: string, type: string, model?: EntityModel<object>): KnownClass | undefined {
    const found = model ?? this.#types.get(`${table.toLowerCase()}\u0000${type}`);
    if (!found) return undefined;
    return { repository: this.repository(found.ctor) as unknown as Repository<object>, model: found };
  }

  #eventualDeps(): EventualDeps {
    return {
      runner: this.#runner,
      encryption: this.#stack.encryption,
      repositoryOf: (table, type, model) => this.#known(table, type, model),
      now: this.#now,
    };
  }

  /**
   * Finishes every kind of unfinished work this context knows: index intents (`indexes`), eventual
   * transactions (`eventually`), summaries in another partition left behind (`summaries`), and kinds
   * added by other features. Resolves the counts of each
   * kind by name; if some item failed, the whole pass still runs and then rejects with the first error.
   * @example
   * const report = await db.repair({ minIntentAgeMs: 60_000 }); // { indexes: {…}, eventually: { replayed: 1, … } }
   */
  async repair(options: RepairAllOptions = {}): Promise<RepairReport> {
    for (const entityClass of options?.entities ?? []) this.repository(entityClass);
    return this.#repairs.repair(options?.minIntentAgeMs);
  }

  /**
   * Runs `repair` in the background: a pass at once, then `intervalMs` after each pass ends. Passes
   * of one context never overlap (also across workers and `repair` calls); each pass emits a
   * `repair-pass` event with its counts and errors, and a failing pass does not stop the worker.
   * @example
   * const worker = db.startRepairWorker({ intervalMs: 60_000, minIntentAgeMs: 30_000 });
   * await worker.stop(); // waits for a running pass
   */
  startRepairWorker(options: RepairWorkerOptions): RepairWorker {
    return this.#repairs.startWorker(options);
  }

  /**
   * Stops every repair worker this context started, waiting for their running passes (e.g. on
   * shutdown; the NestJS module calls it when its module is destroyed). The context stays usable.
   * @example
   * await db.close();
   */
  async close(): Promise<void> {
    await this.#repairs.stopWorkers();
  }

  /** @internal Adds a kind of unfinished work to `repair` (e.g. large-value blobs). */
  addRepairKind(kind: RepairKind): void {
    this.#repairs.add(kind);
  }

  /**
   * Runs an eventually consistent transaction over any tables and partitions: the callback adds
   * steps (checked whole before any request), the set is recorded as one intent, each step is
   * applied idempotently, and the intent is removed. A step refused by a conflict rejects the call
   * with `EventualStepError` naming it, after the other steps were applied; after a crash,
   * `repair()` finishes the set.
   * @example
   * await db.eventually((tx) => { tx.delete(CurrentEmployee, key); tx.insert(archived); });
   */
  async eventually(build: (tx: EventualTransaction) => unknown): Promise<EventualResult> {
    const tx = EventualTransaction.build(this.#runner.scope, (table) => this.#runner.tableName(table));
    await build(tx);
    return runEventually(this.#eventualDeps(), tx);
  }

  /** Several classes may share a table only with distinct `type` values; encrypted columns need keys. */
  #claimType(model: EntityModel): void {
    this.#claimEncryption(model);
    claimType(this.#types, model);
  }

  #claimEncryption(model: EntityModel): void {
    claimEncryption(this.#encrypts, this.#stack.encryptedTypes, model, this.#stack.encryption.blindIndex);
  }

  /**
   * Rewrites the encrypted values of every row of the entity (and of its index copies) that is not
   * sealed under the key resolver's current key, so an old key can be retired. Each row is a Merge of
   * its encrypted properties only, conditional on the ETag it was read with: a concurrent write wins
   * (it is under the current key anyway) and is counted as `skipped`. A table scan: `{ scan: true }`.
   * Blind values stay, unless `previousBlindIndexKeys` are given (rewrite-blind-values.ts). Resolves counts.
   * @example
   * const db = new TableContext({ store, encryption: { keys: localKeys({ k2: newKey, k1: oldKey }, "k2") } });
   * await db.reencrypt(Employee, { scan: true }); // { scanned, reencrypted, skipped, blobsResealed }
   */
  async reencrypt<T extends object>(
    entityClass: EntityClass<T>,
    options: ReencryptOptions,
  ): Promise<ReencryptResult> {
    const model = getEntityModel(entityClass);
    checkReencrypt(model, options);
    this.#claimEncryption(model);
    const tables = new Set<string>();
    if (model.tableTemplate === undefined) tables.add(this.#runner.tableName(model.table));
    else for (const name of await this.tablesOf(entityClass)) tables.add(name);
    for (const index of model.indexes.values()) tables.add(this.#runner.tableName(index.table));
    const result = await reencrypt(model, this.#runner, this.#stack.encryption, [...tables]);
    return rewriteBlindValues(this.repository(entityClass), this.#runner, result);
  }

  /**
   * Creates the tables of these entity classes and of their indexes, where missing. A table per
   * period (of an entity or of an index) gets none here: each period's table is created by its first write.
   */
  async ensureTables(...entityClasses: EntityClass[]): Promise<void> {
    const models = entityClasses.map((entityClass) => getEntityModel(entityClass));
    for (const model of models) {
      this.#warn(model);
      this.#claimType(model);
    }
    await ensureTablesOf(this.#runner, models);
  }

  /**
   * The existing tables of an entity with a table per period (`table: "Logs{at:month}"`), ascending
   * (which is chronological), as physical names (with the context's `tablePrefix`). One listing request.
   * @example
   * const months = await db.tablesOf(LogEntry); // ["Logs202610", "Logs202611"]
   */
  async tablesOf(entityClass: EntityClass): Promise<string[]> {
    return (await periodTablesOf(this.#runner, entityClass, "tablesOf")).map((table) => table.name);
  }

  /**
   * Deletes every period table of the entity that ends at or before `before` (its whole period is
   * earlier), one request per table whatever it holds, and resolves to the names dropped, ascending
   * (then those of its indexes' own period tables, dropped by the same rule).
   * @example
   * await db.dropTables(LogEntry, { before: new Date("2026-01-01T00:00:00Z") }); // drops 2025's months
   */
  async dropTables(entityClass: EntityClass, options: { before: Date }): Promise<string[]> {
    return dropPeriodTables(this.#runner, this.#stack.periodTables, entityClass, options);
  }

  /**
   * Reads every entity of the class and every copy of its indexes and reports drift, changing
   * nothing: copies that should exist and do not (`missing`), copies whose content is out of date
   * (`stale`), and copies this library wrote whose entity no longer exists or no longer maps to
   * them (`orphans`).
   */
  verifyIndexes<T extends object>(entityClass: EntityClass<T>): Promise<IndexDrift> {
    const model = getEntityModel(entityClass);
    registerPeriodTables(this.#stack.periodTables, model);
    return verifyIndexes(model, this.#runner);
  }

  /**
   * Finishes index work left unfinished by a crash (replays the intent log: cost proportional to
   * that work, not to the table). With `{ scan: true }` it also fixes everything `verifyIndexes`
   * reports. Resolves counts of what it changed.
   */
  repairIndexes<T extends object>(
    entityClass: EntityClass<T>,
    options: RepairOptions = {},
  ): Promise<RepairResult> {
    const model = getEntityModel(entityClass);
    // Repair writes copies: a period's copy table missing meanwhile is created like on any write.
    registerPeriodTables(this.#stack.periodTables, model);
    return repairIndexes(model, this.#runner, this.#stack.periodTables, options);
  }

  /**
   * Recounts every summary (`@Entity({ summaries })`) of the class from its rows (one scan of its
   * table) and resolves to the summary rows that disagree, empty when every summary is exact. Reads only.
   * @example
   * const drift = await db.verifySummaries(Employee); // [] when exact
   */
  verifySummaries<T extends object>(entityClass: EntityClass<T>): Promise<SummaryDrift[]> {
    return summariesOf(this.#runner, entityClass, false);
  }

  /**
   * Rewrites every summary row of the class that disagrees with a recount of its partition (drift left by
   * writes that bypassed the repository, e.g. another client or `db.dynamic`), and resolves to the drift it
   * corrected. Safe beside running writers: each row is recounted between two reads of it and written
   * conditional on its ETag.
   * @example
   * const corrected = await db.repairSummaries(Employee);
   */
  repairSummaries<T extends object>(entityClass: EntityClass<T>): Promise<SummaryDrift[]> {
    return summariesOf(this.#runner, entityClass, true);
  }

  /**
   * @internal Removes the blobs of the class's large columns that no row points at (what a crash
   * between a write's requests leaves), in its table or every period's table; blobs younger than
   * `minIntentAgeMs` are left alone. The large-value part of `db.repair()`.
   */
  repairLargeValues<T extends object>(
    entityClass: EntityClass<T>,
    options: LargeValueRepairOptions = {},
  ): Promise<LargeValueRepairResult> {
    return repairLargeValuesOf(this.#runner, entityClass, options);
  }

  /**
   * Runs one entity group transaction: the callback adds operations, then they are checked
   * against the service rules (a `ValidationError` sends nothing) and committed atomically. The
   * callback's return value is ignored (it is awaited when it is a promise), so `tx => tx.insert(e)` is fine.
   * @example
   * await db.transaction((tx) => { tx.insert(employee); tx.delete(Employee, { department: "Sales", employeeId: 7 }); });
   */
  async transaction(build: (tx: Transaction) => unknown): Promise<TransactionResult> {
    const tx = Transaction.build(this.#runner.scope);
    await build(tx);
    for (const operation of tx.operations) this.#claimEncryption(operation.model);
    return runTransaction(this.#runner, this.#runner, this.store, this.#stack.periodTables, tx.operations);
  }

  /** The plan of `eventually(build)` from the state `options.current` gives, nothing sent (see `explainWrite`). */
  explainEventually(build: EventualBuild, options: ExplainOptions = {}): Promise<WritePlan> {
    return explainEventual(this.#eventualDeps(), this.#runner, build, options);
  }

  /** The plan of `transaction(build)` from the state `options.current` gives, nothing sent (see `explainWrite`). */
  explainTransaction(build: (tx: Transaction) => unknown, options: ExplainOptions = {}): Promise<WritePlan> {
    return explainTransaction(this.#runner, this.store, build, options, (m) => this.#claimEncryption(m));
  }
}
