import { AZURE_TABLE_LIMITS, COSMOS_TABLE_LIMITS, type StoreLimits } from "../../util/store-limits.js";
import type { ServableStore, ServedStore } from "../served-store.js";
import type {
  BlobStore,
  StoreCapabilities,
  StoredEntity,
  StorePage,
  StoreQuery,
  TransactionAction,
  WireEntity,
  WriteMode,
  WriteResult,
} from "../table-store.js";
import { checkBackendRules } from "./backend-rules.js";
import { checkKey } from "./entity-rules.js";
import { EtagClock } from "./etag-clock.js";
import { FilterCache } from "./filter-cache.js";
import { compilePredicate } from "./filter-evaluator.js";
import { MemoryBlobs } from "./memory-blobs.js";
import {
  type MemoryStoreFlavor,
  type MemoryStoreOptions,
  resolveMemoryStoreOptions,
} from "./memory-store-options.js";
import { MemoryTable } from "./memory-table.js";
import type { Mutation } from "./mutation.js";
import { parseFilter } from "./odata-filter-parser.js";
import { Journal, type JournalCommit } from "./persistence.js";
import { checkContinuation, checkTop, selection } from "./query-checks.js";
import { type PageBreaks, type PageRequest, readPage, readRecordPage } from "./query-pager.js";
import { ServedView } from "./served-view.js";
import { badRequest, tableBeingDeleted, tableNotFound } from "./service-errors.js";
import { checkTableName, tableKey } from "./table-names.js";
import { parseTransaction, toTransactionError } from "./transaction-rules.js";
import { recordToStored, tableRecord } from "./typed-entity.js";
import { recordToTyped } from "./typed-rows.js";
import { readUnsortedPage } from "./unsorted-pager.js";
import { keysOf, parseAction, planAction } from "./write-planner.js";

export type { MemoryStoreFlavor, MemoryStoreOptions } from "./memory-store-options.js";

/** Counters for tests and diagnostics (not part of the store port). */
export interface MemoryStoreStats {
  /** Entities read from the index by queries, matching or not: what the service bills a scan for. */
  readonly entitiesScanned: number;
  /** Filter texts parsed so far; repeated texts are served from a cache. */
  readonly filterCompilations: number;
}

/**
 * The bundled reference store: behaves like the Azure Table service, in process (sort order, typed
 * values, ETags, paging with continuations, OData filters, limits and error codes, atomic entity
 * group transactions), optionally persisted to a file. Every method does its work synchronously
 * before its promise settles, so each call is atomic with respect to every other.
 */
export class MemoryStore implements ServableStore {
  readonly name: string;
  readonly capabilities: StoreCapabilities;
  /** The flavour's semantics: `"azure"` or `"cosmos"`. */
  readonly flavor: MemoryStoreFlavor;
  /** The seed of the result order of the `"cosmos"` flavour (reported so a failing order can be replayed). */
  readonly seed: number;
  /** Large entity values: kept in memory (and in `<file>.blobs` with `{ file }`), like Blob Storage. */
  readonly blobs: BlobStore;

  readonly #tables = new Map<string, MemoryTable>();
  readonly #served: ServedStore | undefined;
  readonly #now: () => number;
  readonly #clock: EtagClock;
  readonly #tableDeleteDelayMs: number;
  /** When each recently deleted table (by lookup key) was deleted, while `tableDeleteDelayMs` holds its name. */
  readonly #deletedAt = new Map<string, number>();
  readonly #filters = new FilterCache(500);
  readonly #pageBreaks: PageBreaks;
  readonly #journal: Journal | undefined;
  /** Account-level settings of the table server (its service properties), journaled like writes. */
  readonly #accountSettings = new Map<string, string>();
  #scanned = 0;

  constructor(options: MemoryStoreOptions = {}) {
    const { flavor, seed, pageBreaks, tableDeleteDelayMs, now } = resolveMemoryStoreOptions(options);
    this.flavor = flavor;
    this.seed = seed;
    this.name = flavor === "cosmos" ? "memory-cosmos" : "memory";
    this.capabilities = {
      sortedResults: flavor !== "cosmos",
      limits: flavor === "cosmos" ? COSMOS_TABLE_LIMITS : AZURE_TABLE_LIMITS,
    };
    this.#pageBreaks = pageBreaks;
    this.#tableDeleteDelayMs = tableDeleteDelayMs;
    this.#now = now;
    this.#clock = new EtagClock(this.#now);
    this.blobs = new MemoryBlobs(options.file);
    if (options.file !== undefined) {
      this.#journal = new Journal(options.file);
      const commits = this.#journal.read();
      if (commits !== undefined) {
        for (const commit of commits) {
          this.#clock.observe(commit.ts);
          this.#apply(commit.mutations);
        }
        // Compact: also cuts away a torn last line so later appends start on a fresh line.
        this.#journal.rewrite(this.#snapshot());
      }
    }
    this.#served =
      flavor === "azure"
        ? new ServedView(this, {
            tableName: (table) => this.#tables.get(this.#tableKey(table))?.name,
            tableNames: (filter) => {
              const predicate =
                filter === undefined || filter.trim() === ""
                  ? undefined
                  : compilePredicate(parseFilter(filter));
              const names: string[] = [];
              for (const t of this.#tables.values())
                if (predicate === undefined || predicate(tableRecord(t.name))) names.push(t.name);
              return names.sort(); // ordinal, as the service lists them
            },
            getRecord: (table, partitionKey, rowKey) =>
              this.#require(table).get(checkKey("PartitionKey", partitionKey), checkKey("RowKey", rowKey)),
            queryRecords: (table, query) =>
              readRecordPage(this.#require(table), this.#pageRequest(query), (record) => record),
            accountSetting: (name) => this.#accountSettings.get(name),
            setAccountSetting: (name, value) => {
              this.#commit([{ op: "accountSetting", name, value }]);
            },
            tableSetting: (table, name) => this.#tables.get(this.#tableKey(table))?.settings.get(name),
            setTableSetting: (table, name, value) => {
              this.#commit([{ op: "tableSetting", table: this.#require(table).name, name, value }]);
            },
            // The server judged the body by the bytes it received: no size rule on a re-encoded body.
            submitReceivedTransaction: (table, partitionKey, actions) =>
              this.#submitTransaction(table, partitionKey, actions, {
                ...this.#limits,
                maxTransactionBytes: Number.POSITIVE_INFINITY,
              }),
          })
        : undefined;
  }

  /**
   * The store as `tablekit serve` sees it (the served-store port: typed records, table existence,
   * server settings); `undefined` for the `"cosmos"` flavour, which the server does not speak.
   * @internal The server's port, not part of the client API.
   */
  served(): ServedStore | undefined {
    return this.#served;
  }

  /** Query counters, for tests (e.g. to show that a range query reads only its range). */
  get stats(): MemoryStoreStats {
    return { entitiesScanned: this.#scanned, filterCompilations: this.#filters.compilations };
  }

  async createTable(table: string): Promise<void> {
    const name = checkTableName(table);
    const key = this.#tableKey(name);
    if (this.#tables.has(key)) return;
    const deletedAt = this.#deletedAt.get(key);
    if (deletedAt !== undefined) {
      if (this.#now() < deletedAt + this.#tableDeleteDelayMs) throw tableBeingDeleted();
      this.#deletedAt.delete(key);
    }
    this.#commit([{ op: "createTable", table: name }]);
  }

  async deleteTable(table: string): Promise<void> {
    const name = checkTableName(table);
    const key = this.#tableKey(name);
    const existing = this.#tables.get(key);
    if (existing === undefined) return;
    this.#commit([{ op: "deleteTable", table: existing.name }]);
    // Held in memory only: a restarted store, like a fresh one, holds no name.
    if (this.#tableDeleteDelayMs > 0) {
      const now = this.#now();
      for (const [held, at] of this.#deletedAt)
        if (now >= at + this.#tableDeleteDelayMs) this.#deletedAt.delete(held);
      this.#deletedAt.set(key, now);
    }
  }

  async listTables(prefix = ""): Promise<string[]> {
    const names: string[] = [];
    for (const t of this.#tables.values()) if (t.name.startsWith(prefix)) names.push(t.name);
    return names.sort();
  }

  async getEntity(
    table: string,
    partitionKey: string,
    rowKey: string,
    select?: readonly string[],
  ): Promise<StoredEntity | undefined> {
    const t = this.#require(table);
    const record = t.get(checkKey("PartitionKey", partitionKey), checkKey("RowKey", rowKey));
    return record === undefined ? undefined : recordToStored(record, selection(select));
  }

  async queryPage(table: string, query: StoreQuery = {}): Promise<StorePage> {
    const t = this.#require(table);
    const request = this.#pageRequest(query);
    return this.flavor === "cosmos" ? readUnsortedPage(t, request, this.seed) : readPage(t, request);
  }

  /** The port's typed read (`TableStore.queryTypedPage`): values keep their EDM type exactly. */
  async queryTypedPage(table: string, query: StoreQuery = {}): Promise<StorePage> {
    return readRecordPage(this.#require(table), this.#pageRequest(query), recordToTyped);
  }

  /** Validates a query and turns it into a page request (shared by the port and the record access). */
  #pageRequest(query: StoreQuery): PageRequest {
    const top = checkTop(query.top);
    const continuation = checkContinuation(query.continuation);
    if (query.filter !== undefined && typeof query.filter !== "string") {
      throw badRequest("InvalidInput", "$filter must be a string");
    }
    const filter = this.#filters.get(query.filter);
    return {
      filter,
      top,
      ...(continuation === undefined ? {} : { continuation }),
      select: selection(query.select),
      pageBreaks: this.#pageBreaks,
      onScanned: () => {
        this.#scanned++;
      },
    };
  }

  async insert(table: string, entity: WireEntity): Promise<WriteResult> {
    return this.#write(table, { kind: "insert", entity });
  }

  async upsert(table: string, entity: WireEntity, mode: WriteMode): Promise<WriteResult> {
    return this.#write(table, { kind: "upsert", entity, mode });
  }

  async update(table: string, entity: WireEntity, mode: WriteMode, ifMatch: string): Promise<WriteResult> {
    return this.#write(table, { kind: "update", entity, mode, ifMatch });
  }

  async delete(table: string, partitionKey: string, rowKey: string, ifMatch: string): Promise<boolean> {
    const t = this.#require(table);
    const action = parseAction({ kind: "delete", partitionKey, rowKey, ifMatch });
    this.#checkBackendRules({ kind: "delete", partitionKey, rowKey, ifMatch });
    // A single delete of a missing entity is 404 on the wire; the port reports it as `false`.
    if (t.get(partitionKey, rowKey) === undefined) return false;
    this.#commit([planAction(t, action, this.#clock.next()).mutation]);
    return true;
  }

  async submitTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]> {
    return this.#submitTransaction(table, partitionKey, actions, this.#limits);
  }

  /** An entity group transaction under `limits` (the `$batch` body sized on `limits.accountUrl`). */
  async #submitTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
    limits: StoreLimits,
  ): Promise<WriteResult[]> {
    let t: MemoryTable;
    try {
      t = this.#require(table);
    } catch (error) {
      throw toTransactionError(error, 0, table, partitionKey, undefined);
    }
    const parsed = parseTransaction(t.name, partitionKey, actions, limits);
    parsed.forEach((action, index) => {
      try {
        this.#checkBackendRules(actions[index] as TransactionAction);
      } catch (error) {
        throw toTransactionError(error, index, t.name, partitionKey, keysOf(action).rowKey);
      }
    });
    // One Timestamp for the whole group, as the service stamps an entity group transaction.
    const ticks = this.#clock.next();
    // Every operation is checked against the current state before anything is applied: all or nothing.
    const planned = parsed.map((action, index) => {
      try {
        return planAction(t, action, ticks);
      } catch (error) {
        throw toTransactionError(error, index, t.name, partitionKey, keysOf(action).rowKey);
      }
    });
    this.#commit(planned.map((p) => p.mutation));
    return planned.map((p) => ({ etag: p.etag }));
  }

  #write(table: string, action: TransactionAction): WriteResult {
    const t = this.#require(table);
    const parsed = parseAction(action);
    this.#checkBackendRules(action);
    const planned = planAction(t, parsed, this.#clock.next());
    this.#commit([planned.mutation]);
    return { etag: planned.etag };
  }

  get #limits(): StoreLimits {
    return this.capabilities.limits ?? AZURE_TABLE_LIMITS;
  }

  /** The flavour's own limits on top of the Table service's rules (nothing more for "azure"). */
  #checkBackendRules(action: TransactionAction): void {
    if (this.flavor === "cosmos") checkBackendRules(this.#limits, action);
  }

  /** The lookup key of a table: Table storage ignores the case of table names, Cosmos DB does not. */
  #tableKey(table: string): string {
    return this.#limits.caseSensitiveTableNames ? table : tableKey(table);
  }

  #require(table: string): MemoryTable {
    const t = typeof table === "string" ? this.#tables.get(this.#tableKey(table)) : undefined;
    if (t === undefined) throw tableNotFound(String(table));
    return t;
  }

  /** Journals (when persistent) and then applies one request's mutations; a failed append applies nothing. */
  #commit(mutations: readonly Mutation[]): void {
    this.#journal?.append({ ts: this.#clock.last, mutations });
    this.#apply(mutations);
  }

  #apply(mutations: readonly Mutation[]): void {
    for (const m of mutations) {
      if (m.op === "accountSetting") {
        setOrDelete(this.#accountSettings, m.name, m.value);
        continue;
      }
      const key = this.#tableKey(m.table);
      switch (m.op) {
        case "createTable":
          if (!this.#tables.has(key)) this.#tables.set(key, new MemoryTable(m.table));
          break;
        case "deleteTable":
          this.#tables.delete(key);
          break;
        case "put":
          this.#tables.get(key)?.put(m.record);
          break;
        case "delete":
          this.#tables.get(key)?.delete(m.partitionKey, m.rowKey);
          break;
        case "tableSetting": {
          const t = this.#tables.get(key);
          if (t !== undefined) setOrDelete(t.settings, m.name, m.value);
          break;
        }
      }
    }
  }

  /** The whole state as commits: the clock and account settings, then each table (with its settings) and its entities in chunks. */
  *#snapshot(): Generator<JournalCommit> {
    const ts = this.#clock.last;
    const account: Mutation[] = [];
    for (const [name, value] of this.#accountSettings) account.push({ op: "accountSetting", name, value });
    yield { ts, mutations: account };
    for (const t of this.#tables.values()) {
      const created: Mutation[] = [{ op: "createTable", table: t.name }];
      for (const [name, value] of t.settings)
        created.push({ op: "tableSetting", table: t.name, name, value });
      yield { ts, mutations: created };
      let chunk: Mutation[] = [];
      for (const record of t.scan(undefined, undefined)) {
        chunk.push({ op: "put", table: t.name, record });
        if (chunk.length === 1000) {
          yield { ts, mutations: chunk };
          chunk = [];
        }
      }
      if (chunk.length > 0) yield { ts, mutations: chunk };
    }
  }
}

function setOrDelete(settings: Map<string, string>, name: string, value: string | undefined): void {
  if (value === undefined) settings.delete(name);
  else settings.set(name, value);
}
