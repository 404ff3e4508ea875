import { SchemaError, ValidationError } from "../../errors.js";
import type { TableTemplate } from "../../keys/table-template.js";
import { type EntityClass, type EntityModel, getEntityModel } from "../../schema/entity-model.js";
import type { TableStore } from "../../store/table-store.js";
import { contextTelemetry } from "../../telemetry/context-telemetry.js";
import type { StateScope } from "../../util/scoped-state.js";
import { INTENTS_TABLE } from "../core/intent-log.js";
import { listPeriodTables, registerPeriodTables } from "../core/period-tables.js";
import { type RepairKind, RepairLock, type RepairReport, runRepairPass } from "../core/repair-kind.js";
import { type RepairWorker, type RepairWorkerOptions, startWorker } from "../core/repair-worker.js";
import { StoreRunner } from "../core/store-runner.js";
import type { TableKitEventListener } from "../core/table-kit-event.js";
import { repairAllIndexes } from "../index/index-repair-kind.js";
import { type RepairOptions, type RepairResult, repairIndexes } from "../index/index-repairer.js";
import { type IndexDrift, verifyIndexes } from "../index/index-verifier.js";
import { containerOf } from "../large/large-reference.js";
import {
  type LargeValueRepairOptions,
  type LargeValueRepairResult,
  repairLargeValues,
} from "../large/large-value-repairer.js";
import { assertBlobStore, blobsOf, largeColumnsOf } from "../large/large-values.js";
import { limitsOf } from "../pipeline/backend-limits.js";
import { EncryptedRowTypes } from "../pipeline/encryption/encrypted-row-types.js";
import { EncryptingStore } from "../pipeline/encryption/encrypting-store.js";
import {
  assertEncryptionOptions,
  type EncryptionOptions,
  type KeyResolver,
} from "../pipeline/encryption/key-resolver.js";
import { LimitCheckedStore } from "../pipeline/limit-checked-store.js";
import { PacedStore } from "../pipeline/pacing/paced-store.js";
import { Pacer } from "../pipeline/pacing/pacer.js";
import { readThroughput, type ThroughputOptions } from "../pipeline/pacing/throughput-options.js";
import { PeriodTableNames, PeriodTableStore } from "../pipeline/period-table-store.js";
import { RequestSlots } from "../pipeline/request-slots.js";
import { defaultSleep, type RetryOptions, RetryPolicy, type Sleep } from "../pipeline/retry-policy.js";
import { SlotLimitedStore } from "../pipeline/slot-limited-store.js";
import { repairSummaryIntents } from "../summary/repair-summary-intents.js";
import { repairSummaries } from "../summary/summary-repairer.js";
import { type SummaryDrift, verifySummaries } from "../summary/summary-verifier.js";
import { DynamicRepository } from "./dynamic/dynamic-repository.js";
import { EventualTransaction } from "./eventual/eventual-transaction.js";
import { checkMinAge, repairEventual } from "./eventual/repair-eventual.js";
import {
  type EventualDeps,
  type EventualResult,
  type KnownClass,
  runEventually,
} from "./eventual/run-eventually.js";
import { type EntityOf, MultiEntitySource } from "./multi-entity-source.js";
import { type ReencryptOptions, type ReencryptResult, reencrypt } from "./reencrypt.js";
import { Repository } from "./repository.js";
import { assertValidTransaction, type PlannedOperation, Transaction } from "./transaction.js";
import { commitTransaction, type TransactionResult } from "./transaction-commit.js";

export type { TransactionResult } from "./transaction-commit.js";

/** One scope token per (store, prefix): contexts on the same tables share what they know of an instance. */
const scopes = new WeakMap<TableStore, Map<string, StateScope>>();

function scopeOf(store: TableStore, prefix: string): StateScope {
  const byPrefix = scopes.get(store) ?? new Map<string, StateScope>();
  scopes.set(store, byPrefix);
  const scope = byPrefix.get(prefix) ?? Object.freeze({ prefix });
  byPrefix.set(prefix, scope);
  return scope;
}

/** The store stack of a context and the pieces of it that are handed out to what uses them. */
interface ComposedStores {
  /** Sends requests through the stack; plays the roles of requests.ts. */
  runner: StoreRunner;
  encryption: EncryptingStore;
  encryptedTypes: EncryptedRowTypes;
  periodTables: PeriodTableNames;
}

/**
 * Builds the request path of a context: the store wrapped in limit checks, request slots, pacing,
 * encryption and period-table creation (pipeline/), and the runner that sends through it.
 */
function composeStores(
  store: TableStore,
  retry: RetryPolicy,
  listener: TableKitEventListener | undefined,
  tablePrefix: string,
  maxConcurrentRequests: number | undefined,
  pacer: Pacer | undefined,
  keys: KeyResolver | undefined,
  instrument: ((store: TableStore) => TableStore) | undefined,
): ComposedStores {
  const limits = limitsOf(store);
  // Innermost: a request's span (telemetry) times the service call, not its wait for a slot or pace.
  const sent = instrument === undefined ? store : instrument(store);
  // Every row is checked as sent (copies, summaries and intents too), on every backend.
  const checked = new LimitCheckedStore(sent, limits);
  // Every request reaches the store through the runner's target, so a cap there covers them all.
  const slotted =
    maxConcurrentRequests === undefined
      ? checked
      : new SlotLimitedStore(checked, new RequestSlots(maxConcurrentRequests));
  // Pacing comes first: a request waiting for its pace must not hold one of the concurrency slots.
  const paced = pacer === undefined ? slotted : new PacedStore(slotted, pacer);
  // Limits see the sealed rows, and sealing (a key service call) holds no request slot.
  const encryptedTypes = new EncryptedRowTypes(tablePrefix);
  const encryption = new EncryptingStore(paced, encryptedTypes, keys);
  // Outermost: a period table's creation and the write sent again (already sealed) are each paced and slotted.
  const periodTables = new PeriodTableNames(tablePrefix);
  const target = new PeriodTableStore(encryption, periodTables);
  const runner = new StoreRunner(
    target,
    retry,
    listener,
    tablePrefix,
    scopeOf(store, tablePrefix),
    limits,
    periodTables,
    store,
    encryption.blobSealer,
  );
  return { runner, encryption, encryptedTypes, periodTables };
}

/** Options of a `TableContext`. */
export interface TableContextOptions {
  /** Where entities live: `new MemoryStore()` or `AzureStore.fromConnectionString(…)`. */
  store: TableStore;
  /**
   * Retries of transient faults (408, 429, 500, 503, timeouts, resets, 409 TableBeingDeleted); `false`
   * disables them. The defaults (10 retries, 0.5–20 s jittered exponential delays, Retry-After
   * honoured, at most 60 s per operation) ride out at least 30 s of faults: see `RetryOptions`.
   */
  retry?: RetryOptions | false | undefined;
  /** Hears requests, retries and batch outcomes, e.g. for logging or metrics. */
  onEvent?: TableKitEventListener | undefined;
  /**
   * Prepended to every table name (letters and digits, starting with a letter), e.g. per environment
   * or per test run; the result must still be a valid table name.
   */
  tablePrefix?: string | undefined;
  /**
   * At most this many store requests in flight for the whole context (a positive integer; default
   * unlimited): queries, writes, bulk writes and index work alike wait for a slot in arrival order,
   * and a retry's backoff holds no slot.
   */
  maxConcurrentRequests?: number | undefined;
  /**
   * Client-side pacing in entities per second, off by default: `{ perPartition: 2000, perAccount: 20000 }`
   * are the service's targets. A batch counts its operations, a query page its rows; the pace starts
   * at half the limit, doubles each quiet second up to it, and halves on a 503/429 answer (see README).
   */
  throughput?: ThroughputOptions | undefined;
  /**
   * Client-side encryption of `@Column({ encrypt: true })` columns: `{ keys }` is a key resolver
   * (`localKeys({ k1: key }, "k1")`, or one backed by Azure Key Vault). Required by entities with
   * encrypted columns.
   */
  encryption?: EncryptionOptions | undefined;
  /**
   * OpenTelemetry spans and metrics when `@opentelemetry/api` is installed (default on; `false` turns
   * them off): a span per call, a CLIENT span per request (see docs/opentelemetry.md).
   */
  tracing?: boolean | undefined;
  /** @internal The clock retries and pacing sleep on (tests inject one). */
  sleep?: Sleep | undefined;
  /** @internal The random source of backoff jitter (tests inject a seeded one). */
  random?: (() => number) | undefined;
  /**
   * @internal The clock intents are dated and leased by, in milliseconds, and the pacer's when given
   * (tests inject a virtual one with `sleep`; the pacer defaults to the monotonic `performance.now`).
   */
  now?: (() => number) | undefined;
}

/** Options of `db.repair`. */
export interface RepairAllOptions {
  /**
   * Leave intents younger than this alone (default 0: replay all). A running writer's intent is
   * indistinguishable from a crashed one's: next to live writers, give their longest write time.
   */
  minIntentAgeMs?: number | undefined;
  /**
   * Entity classes to register first. Repair finds index intents and indexed steps of eventual
   * transactions only for classes this context has seen (a repository, `ensureTables`,
   * `eventually` or this list): their copies derive from the class.
   */
  entities?: readonly EntityClass[] | undefined;
}

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
  /** Seals and opens encrypted columns on every request (see encrypting-store.ts). */
  readonly #encryption: EncryptingStore;
  /** Which rows hold encrypted columns; the context records the models it uses here. */
  readonly #encryptedTypes: EncryptedRowTypes;
  /** The period tables (`Logs{at:month}`) of the entities used: their first write creates them. */
  readonly #periodTableNames: PeriodTableNames;
  readonly #repositories = new Map<Function, Repository<object>>();
  /** The class holding each (table, type) pair used in this context: rows are told apart by type. */
  readonly #types = new Map<string, EntityModel>();
  /** Entity classes whose schema warnings this context has reported. */
  readonly #warned = new Set<Function>();
  readonly #now: () => number;
  /**
   * The blobs of eventual intents this pass left for later (their values are uploaded before their
   * steps run): the large-value kind keeps them. `undefined` when the eventual kind did not list every intent.
   */
  #heldBlobs: Set<string> | undefined;
  /** The kinds of unfinished work `repair` finishes, in order. */
  readonly #repairKinds: RepairKind[] = [];
  readonly #repairLock = new RepairLock();
  /** The repair workers started here, stopped by `close`. */
  readonly #workers = new Set<RepairWorker>();
  /** Whether the context was given `encryption` keys. */
  readonly #encrypts: boolean;

  constructor(options: TableContextOptions) {
    if (!options?.store)
      throw new ValidationError("store", "TableContext needs a store: new MemoryStore() or AzureStore");
    this.store = options.store;
    const retry = new RetryPolicy(
      options.retry === false ? { retries: 0 } : options.retry,
      options.sleep,
      options.random,
      options.now,
    );
    const prefix = options.tablePrefix ?? "";
    if (prefix !== "" && !/^[A-Za-z][A-Za-z0-9]*$/.test(prefix)) {
      throw new ValidationError(
        "table-prefix",
        `tablePrefix '${prefix}' must be letters and digits, starting with a letter`,
      );
    }
    const limits = options.throughput === undefined ? undefined : readThroughput(options.throughput);
    const pacer =
      limits === undefined || (limits.perPartition === undefined && limits.perAccount === undefined)
        ? undefined
        : new Pacer(
            limits,
            { now: options.now ?? (() => performance.now()), sleep: options.sleep ?? defaultSleep },
            (report) => this.#runner.emit({ type: "throughput", ...report }),
          );
    if (options.encryption !== undefined) assertEncryptionOptions(options.encryption);
    this.#encrypts = options.encryption !== undefined;
    const telemetry = contextTelemetry(options.tracing);
    retry.observer = telemetry?.retries;
    const stores = composeStores(
      options.store,
      retry,
      options.onEvent,
      prefix,
      options.maxConcurrentRequests,
      pacer,
      options.encryption?.keys,
      telemetry?.instrument,
    );
    this.#runner = stores.runner;
    this.#encryption = stores.encryption;
    this.#encryptedTypes = stores.encryptedTypes;
    this.#periodTableNames = stores.periodTables;
    this.#now = options.now ?? Date.now;
    // Index intents are dated and aged by the same clock as eventual transactions.
    this.#runner.now = this.#now;
    this.#repairKinds.push(
      {
        name: "indexes",
        run: async ({ minIntentAgeMs }) => ({
          ...(await repairAllIndexes(
            this.#runner,
            this.#periodTableNames,
            this.#types.values(),
            minIntentAgeMs,
          )),
        }),
      },
      {
        name: "eventually",
        run: async ({ minIntentAgeMs, errors }) => {
          this.#heldBlobs = undefined;
          const held = new Set<string>();
          const counts = await repairEventual(this.#eventualDeps(), minIntentAgeMs, errors, held);
          this.#heldBlobs = held;
          return { ...counts };
        },
      },
      {
        name: "summaries",
        run: async ({ minIntentAgeMs, errors }) => ({
          ...(await repairSummaryIntents(
            this.#runner,
            (table, type) => this.#types.get(`${table.toLowerCase()}\u0000${type}`),
            minIntentAgeMs,
            errors,
          )),
        }),
      },
      {
        name: "largeValues",
        run: async ({ minIntentAgeMs, errors }) => ({
          ...(await this.#repairAllLargeValues(minIntentAgeMs, errors)),
        }),
      },
    );
    // Each call a span: the context's methods run on this object, the proxy only opens their spans.
    // biome-ignore lint/correctness/noConstructorReturn: the traced proxy of this very context, with its class and private state
    if (telemetry !== undefined) return telemetry.trace(this);
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
        this.#periodTableNames,
      ) as unknown as Repository<object>;
      this.#repositories.set(entityClass, repository);
    }
    return repository as unknown as Repository<T>;
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

  /** Models are built at decoration time, without a context, so their warnings are reported on first use here. */
  #warn(model: EntityModel): void {
    if (this.#warned.has(model.ctor)) return;
    this.#warned.add(model.ctor);
    for (const warning of model.warnings) {
      this.#runner.emit({
        type: "schema-warning",
        entity: model.name,
        rule: warning.rule,
        message: warning.message,
      });
    }
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
      encryption: this.#encryption,
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
    const minAge = checkMinAge(options?.minIntentAgeMs);
    for (const entityClass of options?.entities ?? []) this.repository(entityClass);
    const { counts, errors } = await this.#repairPass(minAge);
    if (errors.length > 0) throw errors[0];
    return counts;
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
    const minAge = checkMinAge(options?.minIntentAgeMs);
    const worker = startWorker(
      options,
      () => this.#repairPass(minAge),
      ({ counts, errors }) => this.#runner.emit({ type: "repair-pass", counts, errors }),
    );
    this.#workers.add(worker);
    return worker;
  }

  /**
   * Stops every repair worker this context started, waiting for their running passes (e.g. on
   * shutdown; the NestJS module calls it when its module is destroyed). The context stays usable.
   * @example
   * await db.close();
   */
  async close(): Promise<void> {
    const workers = [...this.#workers];
    this.#workers.clear();
    await Promise.all(workers.map((worker) => worker.stop()));
  }

  /** @internal Adds a kind of unfinished work to `repair` (e.g. large-value blobs). */
  addRepairKind(kind: RepairKind): void {
    this.#repairKinds.push(kind);
  }

  #repairPass(minIntentAgeMs: number): Promise<{ counts: RepairReport; errors: unknown[] }> {
    return this.#repairLock.exclusive(() => runRepairPass(this.#repairKinds, minIntentAgeMs));
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

  /** Several classes may share a table only with distinct `type` values, or rows of one would read as the other. */
  #claimType(model: EntityModel): void {
    this.#claimEncryption(model);
    const key = `${model.table.toLowerCase()}\u0000${model.type}`;
    const owner = this.#types.get(key);
    if (owner === undefined) {
      this.#types.set(key, model);
      return;
    }
    if (owner.ctor === model.ctor) return;
    throw new SchemaError(
      `${model.name} and ${owner.name} both store type '${model.type}' in table '${model.table}'; ` +
        "classes sharing a table need distinct @Entity({ type }) values so each row can be resolved to its class",
    );
  }

  /** Entities with encrypted columns need the context's keys: refused before any request otherwise. */
  #claimEncryption(model: EntityModel): void {
    const encrypted = model.columns.filter((column) => column.encrypted);
    if (encrypted.length > 0 && !this.#encrypts) {
      throw new ValidationError(
        "encryption-keys",
        `${model.name} has encrypted columns (${encrypted.map((c) => c.field).join(", ")}): give the TableContext { encryption: { keys } }, e.g. localKeys({ k1: key }, "k1")`,
        { field: "encryption" },
      );
    }
    this.#encryptedTypes.claim(model);
  }

  /**
   * Rewrites the encrypted values of every row of the entity (and of its index copies) that is not
   * sealed under the key resolver's current key, so an old key can be retired. Each row is a Merge of
   * its encrypted properties only, conditional on the ETag it was read with: a concurrent write wins
   * (it is under the current key anyway) and is counted as `skipped`. A table scan, so it must be
   * asked for with `{ scan: true }`. Resolves counts.
   * @example
   * const db = new TableContext({ store, encryption: { keys: localKeys({ k2: newKey, k1: oldKey }, "k2") } });
   * await db.reencrypt(Employee, { scan: true }); // { scanned, reencrypted, skipped }
   */
  async reencrypt<T extends object>(
    entityClass: EntityClass<T>,
    options: ReencryptOptions,
  ): Promise<ReencryptResult> {
    if (options?.scan !== true) {
      throw new ValidationError(
        "reencrypt-scan",
        "reencrypt reads every row of the entity's tables: pass { scan: true } to confirm the table scan",
        { field: "scan" },
      );
    }
    const model = getEntityModel(entityClass);
    this.#claimEncryption(model);
    if (!model.columns.some((column) => column.encrypted)) {
      throw new ValidationError("reencrypt", `${model.name} has no encrypted columns`);
    }
    const tables = new Set<string>();
    if (model.tableTemplate === undefined) tables.add(this.#runner.tableName(model.table));
    else for (const name of await this.tablesOf(entityClass)) tables.add(name);
    for (const index of model.indexes.values()) tables.add(this.#runner.tableName(index.table));
    return reencrypt(model, this.#runner, this.#encryption, [...tables]);
  }

  /**
   * Creates the tables of these entity classes and of their indexes, where missing. A table per
   * period (of an entity or of an index) gets none here: each period's table is created by its first write.
   */
  async ensureTables(...entityClasses: EntityClass[]): Promise<void> {
    const tables = new Set<string>();
    for (const entityClass of entityClasses) {
      const model = getEntityModel(entityClass);
      this.#warn(model);
      this.#claimType(model);
      if (model.tableTemplate === undefined) tables.add(this.#runner.tableName(model.table));
      for (const index of model.indexes.values()) {
        if (index.tableTemplate === undefined) tables.add(this.#runner.tableName(index.table));
        // Copies outside the entity's partition are kept consistent through the intent log.
        if (!index.intraPartition) tables.add(this.#runner.tableName(INTENTS_TABLE));
      }
      for (const summary of model.summaries.values()) {
        if (summary.remote === undefined) continue;
        // A summary in another partition: its table, and the intents that make it repairable.
        tables.add(this.#runner.tableName(summary.remote.table));
        tables.add(this.#runner.tableName(INTENTS_TABLE));
      }
    }
    for (const table of tables) await this.#runner.run("createTable", table, (s) => s.createTable(table));
  }

  /**
   * The existing tables of an entity with a table per period (`table: "Logs{at:month}"`), ascending
   * (which is chronological), as physical names (with the context's `tablePrefix`). One listing request.
   * @example
   * const months = await db.tablesOf(LogEntry); // ["Logs202610", "Logs202611"]
   */
  async tablesOf(entityClass: EntityClass): Promise<string[]> {
    return (await this.#periodTables(entityClass, "tablesOf")).map((table) => table.name);
  }

  /**
   * Deletes every period table of the entity that ends at or before `before` (its whole period is
   * earlier), one request per table whatever it holds, and resolves to the names dropped, ascending
   * (then those of its indexes' own period tables, dropped by the same rule).
   * @example
   * await db.dropTables(LogEntry, { before: new Date("2026-01-01T00:00:00Z") }); // drops 2025's months
   */
  async dropTables(entityClass: EntityClass, options: { before: Date }): Promise<string[]> {
    const before = options?.before;
    if (!(before instanceof Date) || Number.isNaN(before.getTime())) {
      throw new ValidationError("drop-before", "dropTables needs { before: Date } with a valid Date", {
        field: "before",
      });
    }
    const dropped: string[] = [];
    const large = largeColumnsOf(getEntityModel(entityClass) as EntityModel) !== undefined;
    const periodTables = await this.#periodTables(entityClass, "dropTables");
    // The cut-off is stored first, so no late write (of any process) re-creates a table dropped below.
    await this.#recordCutoffs(entityClass, before);
    for (const { name, end } of periodTables) {
      if (end.getTime() > before.getTime()) break;
      await this.#runner.run("deleteTable", name, (s) => s.deleteTable(name));
      // The rows first, then their blobs: no row ever points at a removed blob.
      if (large) {
        const container = containerOf(name);
        await this.#runner.run("deleteContainer", name, (s) => blobsOf(s).deleteContainer(container));
      }
      dropped.push(name);
    }
    // Index copies kept in a table per period of their own go with their periods (copies in a fixed
    // table outlive their entities as orphans, which repairIndexes({ scan: true }) removes).
    const model = getEntityModel(entityClass);
    const templates = new Map<string, TableTemplate>();
    for (const index of model.indexes.values()) {
      const template = index.tableTemplate;
      if (template && template.source !== model.tableTemplate?.source)
        templates.set(template.source, template);
    }
    for (const template of templates.values()) {
      for (const { name, end } of await listPeriodTables(this.#runner, template)) {
        if (end.getTime() > before.getTime()) break;
        await this.#runner.run("deleteTable", name, (s) => s.deleteTable(name));
        dropped.push(name);
      }
    }
    return dropped;
  }

  /** Records `before` as the dropped-period cut-off of the entity's table template and its indexes' own. */
  async #recordCutoffs(entityClass: EntityClass, before: Date): Promise<void> {
    const model = getEntityModel(entityClass);
    registerPeriodTables(this.#periodTableNames, model);
    const templates = new Set<TableTemplate>();
    if (model.tableTemplate) templates.add(model.tableTemplate);
    for (const index of model.indexes.values()) if (index.tableTemplate) templates.add(index.tableTemplate);
    const cutoffs = this.#periodTableNames.cutoffs;
    for (const template of templates) {
      await this.#runner.run("recordCutoff", cutoffs.table, (s) => cutoffs.record(s, template, before));
    }
  }

  /** The existing period tables of an entity with the end of each period, ascending; `ValidationError` for a fixed table. */
  async #periodTables(entityClass: EntityClass, method: string): Promise<{ name: string; end: Date }[]> {
    const model = getEntityModel(entityClass);
    const template = model.tableTemplate;
    if (template === undefined) {
      throw new ValidationError(
        "period-table",
        `${method}: ${model.name} has a fixed table '${model.table}', not a table per period ('Logs{at:month}')`,
      );
    }
    return listPeriodTables(this.#runner, template);
  }

  /**
   * Reads every entity of the class and every copy of its indexes and reports drift, changing
   * nothing: copies that should exist and do not (`missing`), copies whose content is out of date
   * (`stale`), and copies this library wrote whose entity no longer exists or no longer maps to
   * them (`orphans`).
   */
  verifyIndexes<T extends object>(entityClass: EntityClass<T>): Promise<IndexDrift> {
    const model = getEntityModel(entityClass);
    registerPeriodTables(this.#periodTableNames, model);
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
    registerPeriodTables(this.#periodTableNames, model);
    return repairIndexes(model, this.#runner, this.#periodTableNames, options);
  }

  /**
   * Recounts every summary (`@Entity({ summaries })`) of the class from its rows (one scan of its
   * table) and resolves to the summary rows that disagree, empty when every summary is exact. Reads only.
   * @example
   * const drift = await db.verifySummaries(Employee); // [] when exact
   */
  async verifySummaries<T extends object>(entityClass: EntityClass<T>): Promise<SummaryDrift[]> {
    const model = getEntityModel(entityClass);
    if (model.tableTemplate === undefined) return verifySummaries(model, this.#runner);
    const drift: SummaryDrift[] = [];
    for (const { name } of await this.#periodTables(entityClass, "verifySummaries"))
      drift.push(...(await verifySummaries(model, this.#runner, name)));
    return drift;
  }

  /**
   * Rewrites every summary row of the class that disagrees with a recount of its partition (drift left by
   * writes that bypassed the repository, e.g. another client or `db.dynamic`), and resolves to the drift it
   * corrected. Safe beside running writers: each row is recounted between two reads of it and written
   * conditional on its ETag.
   * @example
   * const corrected = await db.repairSummaries(Employee);
   */
  async repairSummaries<T extends object>(entityClass: EntityClass<T>): Promise<SummaryDrift[]> {
    const model = getEntityModel(entityClass);
    if (model.tableTemplate === undefined) return repairSummaries(model, this.#runner);
    const corrected: SummaryDrift[] = [];
    for (const { name } of await this.#periodTables(entityClass, "repairSummaries"))
      corrected.push(...(await repairSummaries(model, this.#runner, name)));
    return corrected;
  }

  /**
   * @internal Removes the blobs of the class's large columns that no row points at (what a crash
   * between a write's requests leaves), in its table or every period's table; blobs younger than
   * `minIntentAgeMs` are left alone. The large-value part of `db.repair()`.
   */
  async repairLargeValues<T extends object>(
    entityClass: EntityClass<T>,
    options: LargeValueRepairOptions = {},
  ): Promise<LargeValueRepairResult> {
    const model = getEntityModel(entityClass) as EntityModel;
    const tables =
      model.tableTemplate === undefined
        ? [this.#runner.tableName(model.table)]
        : (await this.#periodTables(entityClass, "repairLargeValues")).map((t) => t.name);
    return repairLargeValues(model, this.#runner, tables, options);
  }

  /** The large-value kind of `repair`: every class this context has seen with large columns; a failing class does not stop the others. */
  async #repairAllLargeValues(minIntentAgeMs: number, errors: unknown[]): Promise<LargeValueRepairResult> {
    const total: LargeValueRepairResult = { blobsChecked: 0, blobsDeleted: 0 };
    // Which blobs pending eventual intents point at is unknown: removing none is the safe side.
    const held = this.#heldBlobs;
    if (held === undefined) return total;
    for (const model of this.#types.values()) {
      if (largeColumnsOf(model) === undefined) continue;
      try {
        const result = await this.repairLargeValues(model.ctor, { minIntentAgeMs, held });
        total.blobsChecked += result.blobsChecked;
        total.blobsDeleted += result.blobsDeleted;
      } catch (error) {
        errors.push(error);
      }
    }
    return total;
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
    for (const operation of tx.operations) {
      this.#claimEncryption(operation.model);
      // A large column's blob container is named after the entity's table: the context must know it.
      assertBlobStore(operation.model, this.store);
    }
    // The caller's operations first (no request), then again with what each entity keeps added.
    assertValidTransaction(tx.operations, this.#runner.limits, (t) => this.#runner.tableName(t));
    const first = tx.operations[0] as PlannedOperation;
    // A period's table that does not exist yet is created by the transaction's first write of it.
    registerPeriodTables(this.#periodTableNames, first.model);
    return commitTransaction(this.#runner, tx.operations);
  }
}
