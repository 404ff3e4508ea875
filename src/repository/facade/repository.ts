import {
  ConcurrencyError,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  ValidationError,
} from "../../errors.js";
import { findState } from "../../query/find-state.js";
import { assertLogTail } from "../../query/log-tail.js";
import { Query, type QueryExecutor } from "../../query/query.js";
import type { EntityModel } from "../../schema/entity-model.js";
import { etagIn } from "../../serialization/entity-etag.js";
import type { StoredEntity, WriteMode } from "../../store/table-store.js";
import type { CreateValues, DataField, Selected, WhereValues } from "../../util/entity-fields.js";
import {
  ENTITY_TYPE_PROPERTY,
  SUMMARY_PROPERTY,
  withSystemProperties,
} from "../../wire/system-properties.js";
import type { BulkOptions, BulkResult } from "../core/bulk/bulk-types.js";
import { COPY_INDEX_PROPERTY } from "../core/copy-ref.js";
import { createEntity } from "../core/create-entity.js";
import { upcasterOf } from "../core/entity-rows.js";
import type { EntityWriter } from "../core/entity-writer.js";
import { getMany } from "../core/get-many.js";
import { isOutcomeUnknown } from "../core/lost-answers.js";
import { type PatchChanges, patchInstance } from "../core/patch-changes.js";
import {
  isTableNotFound,
  periodBulk,
  registerPeriodTables,
  tolerateMissingTable,
} from "../core/period-tables.js";
import { queryExecutor } from "../core/query-executor.js";
import { readTypesOf } from "../core/read-types.js";
import type { StoreRunner } from "../core/store-runner.js";
import { wideExecutor } from "../core/wide-reads.js";
import { writeMode } from "../core/write-mode.js";
import { IndexLookup } from "../index/index-lookup.js";
import { withLargeValues } from "../large/large-value-executor.js";
import { assertBlobStore, LargeValues, largeColumnsOf } from "../large/large-values.js";
import { RemoteSummaries, type RemoteSummary } from "../summary/remote-summaries.js";
import { SummaryCommitter } from "../summary/summary-committer.js";
import { publicValues, type SummaryValues, zeroTotals } from "../summary/summary-row.js";
import { type ExplainedOperation, explainWrite, type WritePlan } from "./explain-write.js";
import { type SasOptions, scopedSas } from "./scoped-sas.js";
import { composeWriter } from "./write-stages.js";

/** Options of `upsert`. */
export interface UpsertOptions {
  /** `replace` (default) drops properties not sent; `merge` keeps them. */
  mode?: WriteMode | undefined;
}

/** Options of `update`. */
export interface UpdateOptions {
  /** `replace` (default) drops properties not sent; `merge` keeps them. */
  mode?: WriteMode | undefined;
  /** The ETag to match; default: the one tracked for the entity. `"*"` writes unconditionally. */
  ifMatch?: string | undefined;
}

/** Options of `delete`. */
export interface DeleteOptions {
  /** The ETag to match; default: the one tracked for the object passed, else `"*"`. */
  ifMatch?: string | undefined;
}

/** Options of `mutate`. */
export interface MutateOptions<T> {
  /** Read-apply-write rounds before giving up with the last `ConcurrencyError` (default 10). */
  attempts?: number | undefined;
  /** Creates the entity when it is absent (otherwise `mutate` resolves `undefined` and writes nothing). */
  create?: (() => T) | undefined;
}

/** Options of point reads. */
export interface GetOptions<T, K extends DataField<T> = DataField<T>> {
  /** Fields to fetch (the result type narrows to them); key fields are always present. */
  select?: readonly K[] | undefined;
}

/** Options of `getMany`. */
export interface GetManyOptions {
  /** Point reads in flight at once (default 8). */
  concurrency?: number | undefined;
}

/** Options of `patch`. */
export interface PatchOptions {
  /** Patch only this version (a conditional Merge); without it the patch is an InsertOrMerge. */
  ifMatch?: string | undefined;
}

/** The keys of an entity, derived from its key fields. */
export interface EntityKey {
  partitionKey: string;
  rowKey: string;
}

/**
 * Typed access to one entity class: point reads, writes with ETag concurrency, and queries.
 * @example
 * const employees = db.repository(Employee);
 * await employees.insert(e);
 * const found = await employees.get({ department: "Sales", employeeId: 223 });
 */
export class Repository<T extends object> {
  readonly #model: EntityModel<T>;
  readonly #table: string;
  readonly #runner: StoreRunner;
  readonly #executor: QueryExecutor<T>;
  /** Plain or indexed, chosen once: every write goes through it. */
  readonly #writer: EntityWriter<T>;
  /** The summary rows' reads and cache, when the entity keeps summaries. */
  readonly #summaries: SummaryCommitter | undefined;
  /** A table per period: the repositories of the period tables used so far, by physical name. */
  readonly #periods: Map<string, Repository<T>> | undefined;
  /** True for the repository of one period's table: it is created on first write (404 → create, retry once). */
  readonly #periodTable: boolean;
  /** The blob half of large columns, for a repository of one physical table. */
  readonly #large: LargeValues | undefined;

  /** @internal Use `TableContext.repository(Entity)`. */
  static build<T extends object>(model: EntityModel<T>, runner: StoreRunner): Repository<T> {
    return new Repository(model, runner, undefined);
  }

  private constructor(model: EntityModel<T>, runner: StoreRunner, periodTable: string | undefined) {
    this.#model = model;
    // The router of a period entity has no table of its own: its name is the template, for messages.
    this.#table = periodTable ?? runner.tableName(model.table);
    this.#runner = runner;
    this.#periodTable = periodTable !== undefined;
    this.#periods = model.tableTemplate !== undefined && periodTable === undefined ? new Map() : undefined;
    registerPeriodTables(runner, model);
    assertBlobStore(model, runner);
    const largeColumns = largeColumnsOf(model);
    // A period router has no table (nor container) of its own: its period repositories have.
    const large =
      largeColumns === undefined || this.#periods !== undefined
        ? undefined
        : new LargeValues(model, largeColumns, this.#table, runner);
    this.#large = large;
    const untyped = model as unknown as EntityModel<object>;
    this.#summaries =
      model.summaries.size > 0 ? new SummaryCommitter(untyped, this.#table, runner) : undefined;
    // Each feature is a stage of the write (write-stages.ts): built once, here.
    this.#writer = composeWriter({ model, table: this.#table, runner, summaries: this.#summaries, large });
    // A wide entity's rows are parts: its executor assembles them into entities first.
    const rows = model.wide
      ? wideExecutor(model.name, runner, (stored) => this.#readAssembled(stored))
      : queryExecutor(runner, (stored) => this.readRow(stored), readTypesOf(model));
    const executor = large ? withLargeValues(rows, large, (item) => this.keyOf(item)) : rows;
    // A period without a table yet holds no entities: reads answer empty instead of failing.
    this.#executor = this.#periodTable ? tolerateMissingTable(executor) : executor;
  }

  /** The repository of the period table that `values` (an entity or key fields) belongs to. */
  #route(values: unknown): Repository<T> | undefined {
    const periods = this.#periods;
    const template = this.#model.tableTemplate;
    if (periods === undefined || template === undefined) return undefined;
    if (values === null || typeof values !== "object") {
      throw new ValidationError(
        "entity",
        `${this.#model.name}: expected an entity or its key fields, got ${values === null ? "null" : typeof values}`,
      );
    }
    const table = this.#runner.tableName(template.nameOf(values as Record<string, unknown>));
    let repository = periods.get(table);
    if (repository === undefined) {
      repository = new Repository(this.#model, this.#runner, table);
      periods.set(table, repository);
    }
    return repository;
  }

  /**
   * The repository of one period's table, for an entity with a table per period (`Logs{at:month}`):
   * its `find`, `scan` and `latest` read that period only and need no period field, so a partition
   * can be read whole even when the instant is also in its RowKey. `ValidationError` for a fixed table.
   * @example
   * for await (const entry of logs.period(new Date("2026-11-01")).find({ source: "web" })) console.log(entry);
   */
  period(at: Date): Repository<T> {
    const template = this.#model.tableTemplate;
    if (template === undefined || this.#periods === undefined) {
      throw new ValidationError(
        "period-table",
        `${this.#model.name}: period() needs a table per period ('Logs{at:month}'); its table '${this.#model.table}' is fixed`,
      );
    }
    return this.#route({ [template.field]: at }) as Repository<T>;
  }

  /**
   * Runs a write; when the period's table does not exist yet, creates it and runs the write once more.
   * The store creates it for the write requests themselves (see period-table-store.ts); this covers
   * the reads an indexed write makes first.
   */
  async #creatingTable<R>(write: () => Promise<R>): Promise<R> {
    try {
      return await write();
    } catch (error) {
      if (!this.#periodTable || !isTableNotFound(error)) throw error;
      const table = this.#table;
      await this.#runner.run("createTable", table, (s) => s.createTable(table));
      return write();
    }
  }

  /** Runs a write of an existing entity: a missing period table means a missing entity. */
  async #inExistingTable<R>(write: () => Promise<R>, missing: () => R): Promise<R> {
    try {
      return await write();
    } catch (error) {
      if (this.#periodTable && isTableNotFound(error)) return missing();
      throw error;
    }
  }

  /** The resolved model (key templates, columns). */
  get model(): EntityModel<T> {
    return this.#model;
  }

  /**
   * The physical table this repository reads and writes; for an entity with a table per period, the
   * prefixed template (`Logs{at:month}`) here and each period's name on `period(at).table`.
   */
  get table(): string {
    return this.#table;
  }

  /** The PartitionKey and RowKey of an entity or of an object holding its key fields. */
  keyOf(key: Partial<T>): EntityKey {
    return {
      partitionKey: this.#model.partitionKey.encode(key as Record<string, unknown>, "PartitionKey"),
      rowKey: this.#model.rowKey.encode(key as Record<string, unknown>, "RowKey"),
    };
  }

  /**
   * A new instance of the entity class from an object literal; nothing is written. The compiler
   * requires every non-optional field and rejects unknown properties; at run time a property that
   * is not a column is a `ValidationError`. Field initializers run (the class is constructed
   * without arguments, unless its constructor declares parameters); `undefined` values are skipped.
   * @example
   * const e = employees.create({ department: "Sales", employeeId: 223, firstName: "Jo", lastName: "Jones", age: 30, email: "jj@contoso.com" });
   */
  create(values: CreateValues<T>): T {
    return createEntity(this.#model, values);
  }

  /** Inserts; `EntityAlreadyExistsError` if the key exists. Resolves to the same entity, its ETag tracked. */
  async insert(entity: T): Promise<T> {
    const period = this.#route(entity);
    if (period) return period.insert(entity);
    await this.#creatingTable(() => this.#writer.insert(entity));
    return entity;
  }

  /** Inserts or replaces (default) or merges, without reading first. */
  async upsert(entity: T, options: UpsertOptions = {}): Promise<T> {
    const period = this.#route(entity);
    if (period) return period.upsert(entity, options);
    const mode = writeMode(options.mode);
    await this.#creatingTable(() => this.#writer.upsert(entity, mode));
    return entity;
  }

  /**
   * Replaces (default) or merges an existing entity, only if it is unchanged since it was read
   * (its tracked ETag); `ConcurrencyError` otherwise, `EntityNotFoundError` if it is gone.
   */
  async update(entity: T, options: UpdateOptions = {}): Promise<T> {
    const period = this.#route(entity);
    if (period) return period.update(entity, options);
    const mode = writeMode(options.mode);
    const ifMatch = options.ifMatch ?? etagIn(entity, this.#runner.scope);
    if (ifMatch === undefined) {
      throw new ValidationError(
        "etag-required",
        `${this.#model.name}: update needs the entity's ETag (read it through a repository of this context first) or { ifMatch: "*" } to overwrite unconditionally`,
        { field: "ifMatch" },
      );
    }
    await this.#inExistingTable(
      () => this.#writer.update(entity, mode, ifMatch),
      () => {
        throw new EntityNotFoundError({ table: this.#table, ...this.keyOf(entity) });
      },
    );
    return entity;
  }

  /** Deletes by key (or entity); resolves whether it existed. Conditional when an ETag is known. */
  async delete(key: Partial<T>, options: DeleteOptions = {}): Promise<boolean> {
    this.keyOf(key);
    const period = this.#route(key);
    if (period) return period.delete(key, options);
    return this.#inExistingTable(
      () => this.#writer.delete(key, options.ifMatch),
      () => false,
    );
  }

  /**
   * Merges only the given columns into the stored entity, without reading it first: an
   * InsertOrMerge (creating the entity from its key and these columns when absent), or with
   * `ifMatch` a Merge of that version only (`ConcurrencyError` if it changed, `EntityNotFoundError`
   * if absent). One request for an entity without indexes; with indexes the entity is read and
   * written with its copies, which may depend on the changed columns. Key fields cannot change
   * and `null` cannot remove a column (`ValidationError`); `undefined` values are skipped.
   * @example
   * await employees.patch({ department: "Sales", employeeId: 223 }, { age: 31 });
   */
  async patch(key: Partial<T>, changes: PatchChanges<T>, options: PatchOptions = {}): Promise<void> {
    this.keyOf(key);
    const partial = patchInstance(this.#model, key, changes);
    // A table per period: the key names the period, as for get and delete.
    const period = this.#route(key);
    if (period) return period.patch(key, changes, options);
    const ifMatch = options.ifMatch;
    if (ifMatch === undefined) {
      await this.#creatingTable(() => this.#writer.upsert(partial, "merge"));
      return;
    }
    await this.#inExistingTable(
      () => this.#writer.update(partial, "merge", ifMatch),
      () => {
        throw new EntityNotFoundError({ table: this.#table, ...this.keyOf(key) });
      },
    );
  }

  /**
   * Optimistic read-modify-write: reads the entity, applies `change` (which may edit it in place
   * or return a replacement), writes it back conditional on the ETag it read, and on a concurrent
   * change re-reads and re-applies, up to `attempts` times. Resolves the written entity, or
   * `undefined` when the entity is absent and no `create` is given.
   * @example
   * await counters.mutate({ name: "visits" }, (c) => { c.count += 1; }, { attempts: 20 });
   */
  async mutate(
    key: Partial<T>,
    change: (entity: T) => unknown,
    options: MutateOptions<T> = {},
  ): Promise<T | undefined> {
    const attempts = options.attempts ?? 10;
    if (!Number.isSafeInteger(attempts) || attempts < 1) {
      throw new ValidationError("attempts", `attempts must be a positive integer, got ${attempts}`, {
        field: "attempts",
      });
    }
    this.keyOf(key);
    const period = this.#route(key);
    if (period) return period.mutate(key, change, options);
    let lastConflict: unknown;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const current = await this.get(key);
      const base = current ?? options.create?.();
      if (base === undefined) return undefined;
      // The change may edit the entity in place or return a replacement; any other result is ignored.
      const returned = await change(base);
      const next = (returned !== null && typeof returned === "object" ? returned : base) as T;
      const before = this.keyOf(base);
      const after = this.keyOf(next);
      if (before.partitionKey !== after.partitionKey || before.rowKey !== after.rowKey) {
        throw new ValidationError(
          "mutate-key",
          `${this.#model.name}: mutate() cannot change key fields (that would be another entity); insert the new one and delete the old`,
        );
      }
      try {
        if (current === undefined) return await this.insert(next);
        return await this.update(next, { ifMatch: etagIn(current, this.#runner.scope) as string });
      } catch (error) {
        // Our own earlier attempt may have been applied: re-applying could count it twice.
        if (isOutcomeUnknown(error)) {
          if (error instanceof ConcurrencyError) throw error;
          throw new ConcurrencyError(
            { table: this.#table, ...after },
            { cause: error, outcomeUnknown: true },
          );
        }
        // Lost a race (changed, deleted or created meanwhile): read again and re-apply.
        const conflict =
          error instanceof ConcurrencyError ||
          error instanceof EntityNotFoundError ||
          error instanceof EntityAlreadyExistsError;
        if (!conflict) throw error;
        lastConflict = error;
      }
    }
    throw lastConflict;
  }

  /**
   * Inserts many entities as entity group transactions (≤ 100 per partition per request),
   * partitions in parallel, streaming from an array, iterable or async iterable. Each batch is
   * atomic; the bulk write is not: failed batches are listed in the result and the rest go on.
   * @example
   * const result = await employees.bulkInsert(rows, { concurrency: 8, onProgress: (p) => console.log(p.done) });
   */
  async bulkInsert(items: Iterable<T> | AsyncIterable<T>, options: BulkOptions = {}): Promise<BulkResult<T>> {
    if (this.#periods)
      return periodBulk(
        items,
        (item) => this.#periodOf(item),
        (r, group) => r.bulkInsert(group, options),
      );
    // A batch meeting a missing period table creates it and is sent again (period-table-store.ts).
    return this.#writer.bulkInsert(items, options);
  }

  /** Upserts many entities (replace by default, or merge) in batches; see `bulkInsert`. */
  async bulkUpsert(
    items: Iterable<T> | AsyncIterable<T>,
    options: BulkOptions & UpsertOptions = {},
  ): Promise<BulkResult<T>> {
    if (this.#periods)
      return periodBulk(
        items,
        (item) => this.#periodOf(item),
        (r, group) => r.bulkUpsert(group, options),
      );
    return this.#writer.bulkUpsert(items, writeMode(options.mode), options);
  }

  /** Deletes many entities by key in batches; keys already gone count as deleted. See `bulkInsert`. */
  async bulkDelete(
    keys: Iterable<Partial<T>> | AsyncIterable<Partial<T>>,
    options: BulkOptions = {},
  ): Promise<BulkResult<Partial<T>>> {
    if (this.#periods)
      return periodBulk(
        keys,
        (key) => this.#periodOf(key),
        (r, group) => r.bulkDelete(group, options),
      );
    return this.#inExistingTable(
      () => this.#writer.bulkDelete(keys, options),
      () => ({ written: 0, batches: 0, retries: 0, failed: [] }),
    );
  }

  /**
   * The plan of a write, without sending anything: each step in order with its phase (`before` the
   * commit, the `commit` — one entity group transaction with its operations — or `after` it), its
   * request, table and keys; reads the write needs first are steps too.
   * @example
   * const { steps } = orders.explainWrite("insert", order); // putBlob, claim, transaction [entity, copy, summary]
   */
  explainWrite(operation: ExplainedOperation, value: Partial<T>): WritePlan {
    const period = this.#route(value);
    if (period) return period.explainWrite(operation, value);
    return explainWrite(this.#model, this.#table, this.#writer, operation, value);
  }

  /** Point query; `undefined` when absent. With `select`, the result has the selected fields (and keys). */
  get<K extends DataField<T>>(
    key: Partial<T>,
    options: GetOptions<T, K> & { select: readonly K[] },
  ): Promise<Selected<T, K> | undefined>;
  get(key: Partial<T>, options?: GetOptions<T>): Promise<T | undefined>;
  async get(key: Partial<T>, options: GetOptions<T> = {}): Promise<T | undefined> {
    const { partitionKey, rowKey } = this.keyOf(key);
    const period = this.#route(key);
    if (period) return period.get(key, options);
    const select = options.select
      ? withSystemProperties(this.#model.mapper.propertiesOf(options.select))
      : undefined;
    return this.#executor.fetchPoint(this.#table, partitionKey, rowKey, select);
  }

  /**
   * Point reads of many keys in parallel (`concurrency` in flight, default 8), resolving to the
   * entities in the order of `keys`, `undefined` where absent; a key may repeat. Every key is
   * checked before the first request. Never one `or` filter: the service would scan for it.
   * @example
   * const [a, b] = await employees.getMany([{ department: "Sales", employeeId: 1 }, { department: "HR", employeeId: 2 }]);
   */
  async getMany(keys: readonly Partial<T>[], options: GetManyOptions = {}): Promise<Array<T | undefined>> {
    return getMany(
      keys,
      options.concurrency,
      (key) => this.keyOf(key),
      (key) => this.get(key),
    );
  }

  /** Point query; `EntityNotFoundError` when absent. With `select`, the result has the selected fields (and keys). */
  getOrThrow<K extends DataField<T>>(
    key: Partial<T>,
    options: GetOptions<T, K> & { select: readonly K[] },
  ): Promise<Selected<T, K>>;
  getOrThrow(key: Partial<T>, options?: GetOptions<T>): Promise<T>;
  async getOrThrow(key: Partial<T>, options: GetOptions<T> = {}): Promise<T> {
    const period = this.#route(key);
    if (period) return period.getOrThrow(key, options);
    const found = await this.get(key, options);
    if (found === undefined) throw new EntityNotFoundError({ table: this.#table, ...this.keyOf(key) });
    return found;
  }

  /**
   * The entity's rows in one partition: every partition-key field is required; leading row-key
   * fields narrow it to a prefix, all of them to a point query. Other rows sharing the partition
   * (index copies, other types) never appear: the query covers only this entity's RowKey space.
   */
  find(partial: Partial<T>): Query<T> {
    const period = this.#route(partial);
    if (period) {
      // The period field picks the table (as for get); unless it is also a key field, it has done its job.
      const field = this.#model.tableTemplate?.field;
      const keyField =
        field === undefined ||
        this.#model.partitionKey.fields.includes(field) ||
        this.#model.rowKey.fields.includes(field);
      if (keyField) return period.find(partial);
      const { [field as keyof T]: _period, ...keys } = partial;
      return period.find(keys as Partial<T>);
    }
    const state = findState(
      this.#model.name,
      this.#model.partitionKey,
      this.#model.rowKey,
      partial as Record<string, unknown>,
    );
    const query = Query.build<T>(this.#model, this.#executor, { table: this.#table, ...state, filters: [] });
    // A bucket holds many values of its hashed field: unless the RowKey prefix pins it, filter on it.
    const hashed = this.#model.partitionKey.hashed?.field;
    const value = hashed === undefined ? undefined : (partial as Record<string, unknown>)[hashed];
    if (hashed === undefined || value === undefined || hashed in state.rowFields) return query;
    return query.where({ [hashed]: value } as WhereValues<T>);
  }

  /**
   * A SAS token (a query string, without `?`) for this entity's table (with the context's
   * `tablePrefix`; the period's table for a table per period, so `partial` needs the period field)
   * that reaches only the partition `partial` fixes, and within it the RowKeys with the prefix its
   * leading RowKey fields give (at least the entity's literal RowKey prefix): hand it to a client that
   * may touch only its own rows. Signed locally, nothing is sent. Needs an `AzureStore` connected with
   * an account key; any other store, a `partial` without every partition field, or an `expiresOn` not
   * after `startsOn` (or now) is a `ValidationError`.
   * @example
   * const sas = employees.sasFor({ department: "Sales" }, { permissions: "r", expiresOn: new Date(Date.now() + 3_600_000) });
   */
  sasFor(partial: Partial<T>, options: SasOptions): string {
    const period = this.#route(partial);
    if (period) return period.sasFor(partial, options);
    return scopedSas(
      this.#model,
      this.#runner.store,
      this.#table,
      partial as Record<string, unknown>,
      options,
    );
  }

  /**
   * The `n` newest entities of a partition (the log-tail pattern): `find(partial).take(n)` over a
   * RowKey that starts with a descending placeholder (`{at:desc}`, `{n:10:desc}`), so the newest
   * come first and n ≤ 1,000 is one request (when no other rows share the entity's RowKey range).
   * Any other RowKey is a `ValidationError`. End the RowKey with a tie-breaker (`"{at:desc}_{id}"`):
   * with `"{at:desc}"` alone, two entities of the same millisecond have the same key, and the second
   * insert fails with `EntityAlreadyExistsError` (an upsert would overwrite the first).
   * On a store whose results are unsorted (Cosmos DB Table API, `capabilities.sortedResults` false)
   * the answer is the same, but it costs a read of the whole partition range, sorted in memory.
   * @example
   * const newest = await expenses.latest({ employeeId: 7 }, 10).toArray();
   */
  latest(partial: Partial<T>, n: number): Query<T> {
    assertLogTail(this.#model.name, this.#model.rowKey);
    if (!Number.isSafeInteger(n) || n < 1) {
      throw new ValidationError(
        "latest",
        `${this.#model.name}: latest() needs a positive integer count, got ${n}`,
        { field: "n" },
      );
    }
    return this.find(partial).take(n);
  }

  /**
   * The values of a summary (`@Entity({ summaries })`) for the partition `partial` names (every
   * partition-key field, and the period field for a table per period): its count and sums, zeros where no
   * entity was ever written. One point read. A summary kept in another partition (`partitionKey` in its
   * options) is read there: `partial` gives that template's fields (`{}` for a literal one), one range query
   * adds up the contribution of every source partition, eventually consistent with the writes.
   * Counts and sums of Int32 and Double columns are numbers, sums of Int64 columns `bigint`s; pass
   * the shape as the type argument: `summary<{ employees: number; totalSalary: number }>(…)`.
   * @example
   * const { employees: count, totalSalary } = await employees.summary("perDepartment", { department: "Sales" });
   */
  async summary<V extends SummaryValues = SummaryValues>(name: string, partial: Partial<T>): Promise<V> {
    const summary = this.#model.summaries.get(name);
    if (!summary) {
      const known = [...this.#model.summaries.keys()];
      throw new ValidationError(
        "unknown-summary",
        `${this.#model.name} has no summary '${name}'${known.length ? ` (it has ${known.join(", ")})` : ""}`,
        { field: name },
      );
    }
    if (summary.remote !== undefined) {
      // Kept in another partition: the sum of its contribution rows there (one range query).
      const remote = summary as RemoteSummary;
      const partitionKey = remote.remote.partitionKey.encode(
        partial as Record<string, unknown>,
        "PartitionKey",
      );
      const totals = await new RemoteSummaries(this.#model as EntityModel, this.#runner).totals(
        remote,
        partitionKey,
      );
      return publicValues(summary, totals) as V;
    }
    // A table per period keeps a summary row per partition of each period's table: `partial` names the period.
    if (this.#periods) return (this.#route(partial) as Repository<T>).summary<V>(name, partial);
    const partitionKey = this.#model.partitionKey.encode(partial as Record<string, unknown>, "PartitionKey");
    const committer = this.#summaries as SummaryCommitter;
    // A period whose table was never written to has no summary rows: zeros.
    const state = await this.#inExistingTable(
      () => committer.readState(partitionKey, summary),
      () => undefined,
    );
    return publicValues(summary, state?.totals ?? zeroTotals(summary)) as V;
  }

  /**
   * @internal This repository's entity from a stored row (upcast, mapped, copies remembered), or
   * `undefined` for rows of other types and index copies; used by `db.query(...)`.
   */
  readRow(stored: StoredEntity): T | undefined {
    if (this.#model.wide) {
      throw new ValidationError(
        "wide-rows",
        `${this.#model.name} is a wide entity: each of its rows holds only part of it, so it cannot be read row by row (db.query); read it with its repository's get, find or scan`,
      );
    }
    return this.#isOwnRow(stored) ? this.#hydrate(stored) : undefined;
  }

  /** A wide entity assembled from its rows (see wide-reads.ts), or `undefined` for another type's. */
  #readAssembled(stored: StoredEntity): T | undefined {
    return this.#isOwnRow(stored) ? this.#hydrate(stored) : undefined;
  }

  /**
   * A secondary index of this entity: `get` is a point query on the copy, `find` a range query
   * over the index's key space; both return entities of the class.
   * @example
   * await employees.index("byEmail").get({ department: "Sales", email: "jonesj@contoso.com" });
   */
  index(name: string): IndexLookup<T> {
    const index = this.#model.indexes.get(name);
    if (!index) {
      const known = [...this.#model.indexes.keys()];
      throw new ValidationError(
        "unknown-index",
        `${this.#model.name} has no index '${name}'${known.length ? ` (it has ${known.join(", ")})` : ""}`,
        { field: name },
      );
    }
    return IndexLookup.build(this.#model, index, this.#runner, (stored) => this.readRow(stored));
  }

  /** Every row of this entity in the whole table: a table scan, which must be asked for explicitly. */
  scan(): Query<T> {
    if (this.#periods) {
      throw new ValidationError(
        "period-table-scan",
        `${this.#model.name} keeps a table per period ('${this.#model.table}'): scan one period with find, or list the periods with db.tablesOf`,
      );
    }
    const rowKey = this.#model.rowKey.prefixRange({});
    return Query.build(this.#model, this.#executor, {
      table: this.#table,
      rowFields: {},
      rowKey,
      filters: [],
    });
  }

  /** The period repository of an item of a bulk write (routing checks the period field first). */
  #periodOf(item: unknown): Repository<T> {
    return this.#route(item) as Repository<T>;
  }

  /**
   * An instance from a stored row (rows of an older version go through the class's upcaster
   * first), its ETag (and, with indexes, its copies) tracked in this context's scope.
   */
  #hydrate(stored: StoredEntity): T {
    const upcast = upcasterOf(this.#model);
    const row = upcast ? upcast(stored) : stored;
    const entity = this.#model.mapper.fromWire(row, this.#runner.scope);
    this.#large?.hydrated(entity, row);
    this.#writer.track(entity, stored);
    return entity;
  }

  /** Rows written by another entity type sharing the table, and index copies, are not this repository's to return. */
  #isOwnRow(stored: StoredEntity): boolean {
    if (stored[COPY_INDEX_PROPERTY] !== undefined || stored[SUMMARY_PROPERTY] !== undefined) return false;
    // Runs per row on every scan: compare text, allocate nothing (parseEntityType would).
    const tag = stored[ENTITY_TYPE_PROPERTY];
    if (typeof tag !== "string") return true;
    const type = this.#model.type;
    return tag.length > type.length
      ? tag.startsWith(type) && tag.lastIndexOf("@") === type.length
      : tag === type;
  }
}
