import { EntityNotFoundError, ValidationError } from "../../errors.js";
import { assertLogTail } from "../../query/log-tail.js";
import { Query, type QueryExecutor } from "../../query/query.js";
import type { EntityModel } from "../../schema/entity-model.js";
import type { KeyValues } from "../../schema/key-fields.js";
import type { StoredEntity, TableStore } from "../../store/table-store.js";
import type { CreateValues, DataField, Selected } from "../../util/entity-fields.js";
import { withSystemProperties } from "../../wire/system-properties.js";
import type { BulkWriter } from "../core/bulk/bulk-types.js";
import { createEntity } from "../core/create-entity.js";
import { upcasterOf } from "../core/entity-rows.js";
import type { EntityWriter } from "../core/entity-writer.js";
import { isExpiredRow, withExpiryColumn } from "../core/expiry.js";
import { getMany } from "../core/get-many.js";
import { isTableNotFound, registerPeriodTables, tolerateMissingTable } from "../core/period-tables.js";
import { queryExecutor } from "../core/query-executor.js";
import { readTypesOf } from "../core/read-types.js";
import type { RequestContext } from "../core/requests.js";
import { wideExecutor } from "../core/wide-reads.js";
import { IndexLookup } from "../index/index-lookup.js";
import { withLargeValues } from "../large/large-value-executor.js";
import { assertBlobStore, LargeValues, largeColumnsOf } from "../large/large-values.js";
import type { PeriodTableNames } from "../pipeline/period-table-store.js";
import { SummaryCommitter } from "../summary/summary-committer.js";
import { publicValues, type SummaryValues, zeroTotals } from "../summary/summary-row.js";
import type { EntityKey, GetManyOptions, GetOptions } from "./repository-options.js";
import { findQuery, isOwnRow, remoteSummary, unknownName, withoutPeriodField } from "./repository-reads.js";
import { type SasOptions, scopedSas } from "./scoped-sas.js";
import { composeBulkWriter, composeWriter } from "./write-stages.js";

/**
 * The part of a repository every read goes through: the entity's model and physical table, its writer
 * (built once from the entity's stages, write-stages.ts), the period tables of a table per period,
 * and the reads. `Repository` adds the writes.
 */
export abstract class RepositoryBase<T extends object> {
  readonly #model: EntityModel<T>;
  readonly #table: string;
  protected readonly runner: RequestContext;
  /** The context's store as given (signing a SAS needs the AzureStore itself). */
  protected readonly store: TableStore;
  /** Where the period tables of the entity are registered (its period repositories' too). */
  protected readonly periodTableNames: PeriodTableNames;
  readonly #executor: QueryExecutor<T>;
  /** Built once from the entity's stages: every write goes through it. */
  protected readonly writer: EntityWriter<T>;
  /** Bulk writes: batches of rows (plain entities) or of transaction plans (write-stages.ts). */
  protected readonly bulk: BulkWriter<T>;
  /** The summary rows' reads and cache, when the entity keeps summaries. */
  readonly #summaries: SummaryCommitter | undefined;
  /** A table per period: the repositories of the period tables used so far, by physical name. */
  protected readonly periods: Map<string, RepositoryBase<T>> | undefined;
  /** True for the repository of one period's table: it is created on first write (404 → create, retry once). */
  protected readonly isPeriodTable: boolean;
  /** The blob half of large columns, for a repository of one physical table. */
  readonly #large: LargeValues | undefined;

  protected constructor(
    model: EntityModel<T>,
    runner: RequestContext,
    store: TableStore,
    periodTables: PeriodTableNames,
    periodTable: string | undefined,
  ) {
    this.#model = model;
    // The router of a period entity has no table of its own: its name is the template, for messages.
    this.#table = periodTable ?? runner.tableName(model.table);
    this.runner = runner;
    this.store = store;
    this.periodTableNames = periodTables;
    this.isPeriodTable = periodTable !== undefined;
    this.periods = model.tableTemplate !== undefined && periodTable === undefined ? new Map() : undefined;
    registerPeriodTables(periodTables, model);
    assertBlobStore(model, store);
    const largeColumns = largeColumnsOf(model);
    // A period router has no table (nor container) of its own: its period repositories have.
    const large =
      largeColumns === undefined || this.periods !== undefined
        ? undefined
        : new LargeValues(model, largeColumns, this.table, runner);
    this.#large = large;
    const untyped = model as unknown as EntityModel<object>;
    this.#summaries =
      model.summaries.size > 0 ? new SummaryCommitter(untyped, this.table, runner) : undefined;
    // Each feature is a stage of the write (write-stages.ts): built once, here.
    const stages = { model, table: this.table, runner, summaries: this.#summaries, large };
    this.writer = composeWriter(stages);
    this.bulk = composeBulkWriter(stages, this.writer);
    // A wide entity's rows are parts: its executor assembles them into entities first.
    const rows = model.wide
      ? wideExecutor(model.name, runner, (stored) => this.#readAssembled(stored))
      : queryExecutor(runner, (stored) => this.readRow(stored), readTypesOf(model));
    const executor = large ? withLargeValues(rows, large, (item) => this.keyOf(item)) : rows;
    // A period without a table yet holds no entities: reads answer empty instead of failing.
    // An expired entity is absent to every read: a projection still fetches its expiry to tell.
    this.#executor = withExpiryColumn(model, this.isPeriodTable ? tolerateMissingTable(executor) : executor);
  }

  /** The repository of one period's physical table. */
  protected abstract forPeriod(table: string): RepositoryBase<T>;

  /** The repository of the period table that `values` (an entity or key fields) belongs to. */
  protected route(values: unknown): RepositoryBase<T> | undefined {
    const periods = this.periods;
    const template = this.model.tableTemplate;
    if (periods === undefined || template === undefined) return undefined;
    if (values === null || typeof values !== "object") {
      throw new ValidationError(
        "entity",
        `${this.model.name}: expected an entity or its key fields, got ${values === null ? "null" : typeof values}`,
      );
    }
    const table = this.runner.tableName(template.nameOf(values as Record<string, unknown>));
    let repository = periods.get(table);
    if (repository === undefined) {
      repository = this.forPeriod(table);
      periods.set(table, repository);
    }
    return repository;
  }

  /** Runs a write of an existing entity: a missing period table means a missing entity. */
  protected inExistingTable<R>(write: () => Promise<R>, missing: () => R): Promise<R> {
    return this.isPeriodTable ? this.#inExistingPeriodTable(write, missing) : write();
  }

  async #inExistingPeriodTable<R>(write: () => Promise<R>, missing: () => R): Promise<R> {
    try {
      return await write();
    } catch (error) {
      if (isTableNotFound(error)) return missing();
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
      partitionKey: this.model.partitionKey.encode(key as Record<string, unknown>, "PartitionKey"),
      rowKey: this.model.rowKey.encode(key as Record<string, unknown>, "RowKey"),
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
    return createEntity(this.model, values);
  }

  /** Point query; `undefined` when absent. With `select`, the result has the selected fields (and keys). */
  get<K extends DataField<T>>(
    key: KeyValues<T>,
    options: GetOptions<T, K> & { select: readonly K[] },
  ): Promise<Selected<T, K> | undefined>;
  get(key: KeyValues<T>, options?: GetOptions<T>): Promise<T | undefined>;
  async get(key: KeyValues<T>, options: GetOptions<T> = {}): Promise<T | undefined> {
    const { partitionKey, rowKey } = this.keyOf(key);
    const period = this.route(key);
    if (period) return period.get(key, options);
    const select = options.select
      ? withSystemProperties(this.model.mapper.propertiesOf(options.select))
      : undefined;
    return this.#executor.fetchPoint(this.table, partitionKey, rowKey, select);
  }

  /**
   * Point reads of many keys in parallel (`concurrency` in flight, default 8), resolving to the
   * entities in the order of `keys`, `undefined` where absent; a key may repeat. Every key is
   * checked before the first request. Never one `or` filter: the service would scan for it.
   * @example
   * const [a, b] = await employees.getMany([{ department: "Sales", employeeId: 1 }, { department: "HR", employeeId: 2 }]);
   */
  async getMany(keys: readonly KeyValues<T>[], options: GetManyOptions = {}): Promise<Array<T | undefined>> {
    return getMany(
      keys,
      options.concurrency,
      (key) => this.keyOf(key),
      (key) => this.get(key),
    );
  }

  /** Point query; `EntityNotFoundError` when absent. With `select`, the result has the selected fields (and keys). */
  getOrThrow<K extends DataField<T>>(
    key: KeyValues<T>,
    options: GetOptions<T, K> & { select: readonly K[] },
  ): Promise<Selected<T, K>>;
  getOrThrow(key: KeyValues<T>, options?: GetOptions<T>): Promise<T>;
  async getOrThrow(key: KeyValues<T>, options: GetOptions<T> = {}): Promise<T> {
    const period = this.route(key);
    if (period) return period.getOrThrow(key, options);
    const found = await this.get(key, options);
    if (found === undefined) throw new EntityNotFoundError({ table: this.table, ...this.keyOf(key) });
    return found;
  }

  /**
   * The entity's rows in one partition: every partition-key field is required; leading row-key
   * fields narrow it to a prefix, all of them to a point query. Other rows sharing the partition
   * (index copies, other types) never appear: the query covers only this entity's RowKey space.
   */
  find(partial: Partial<T>): Query<T> {
    const period = this.route(partial);
    if (period) return period.find(withoutPeriodField(this.model, partial));
    return findQuery(this.model, this.#executor, this.table, partial);
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
    const period = this.route(partial);
    if (period) return period.sasFor(partial, options);
    return scopedSas(this.model, this.store, this.table, partial as Record<string, unknown>, options);
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
    assertLogTail(this.model.name, this.model.rowKey);
    if (!Number.isSafeInteger(n) || n < 1) {
      throw new ValidationError(
        "latest",
        `${this.model.name}: latest() needs a positive integer count, got ${n}`,
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
    const summary = this.model.summaries.get(name);
    if (!summary) throw unknownName(this.model.name, "summary", name, this.model.summaries.keys());
    const values = partial as Record<string, unknown>;
    if (summary.remote !== undefined)
      return remoteSummary(this.model, this.runner, summary, values) as Promise<V>;
    // A table per period keeps a summary row per partition of each period's table: `partial` names the period.
    if (this.periods) return (this.route(partial) as RepositoryBase<T>).summary<V>(name, partial);
    const partitionKey = this.model.partitionKey.encode(values, "PartitionKey");
    const committer = this.#summaries as SummaryCommitter;
    // A period whose table was never written to has no summary rows: zeros.
    const state = await this.inExistingTable(
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
    if (this.model.wide) {
      throw new ValidationError(
        "wide-rows",
        `${this.model.name} is a wide entity: each of its rows holds only part of it, so it cannot be read row by row (db.query); read it with its repository's get, find or scan`,
      );
    }
    return this.#isLive(stored) ? this.#hydrate(stored) : undefined;
  }

  /** True for a row of this entity that has not expired (`expiresAt`) as of the context's clock. */
  #isLive(stored: StoredEntity): boolean {
    const model = this.model as EntityModel<object>;
    return isOwnRow(model, stored) && !isExpiredRow(model, stored, this.runner.now());
  }

  /** A wide entity assembled from its rows (see wide-reads.ts), or `undefined` for another type's. */
  #readAssembled(stored: StoredEntity): T | undefined {
    return isOwnRow(this.model as EntityModel<object>, stored) ? this.#hydrate(stored) : undefined;
  }

  /**
   * A secondary index of this entity: `get` is a point query on the copy, `find` a range query
   * over the index's key space; both return entities of the class.
   * @example
   * await employees.index("byEmail").get({ department: "Sales", email: "jonesj@contoso.com" });
   */
  index(name: string): IndexLookup<T> {
    const index = this.model.indexes.get(name);
    if (!index) throw unknownName(this.model.name, "index", name, this.model.indexes.keys());
    // A list index names entities: a wide one is read whole (its rows assembled) before it is mapped.
    return IndexLookup.build(this.model, index, this.runner, (stored) =>
      this.model.wide ? this.#readAssembled(stored) : this.readRow(stored),
    );
  }

  /** Every row of this entity in the whole table: a table scan, which must be asked for explicitly. */
  scan(): Query<T> {
    if (this.periods) {
      throw new ValidationError(
        "period-table-scan",
        `${this.model.name} keeps a table per period ('${this.model.table}'): scan one period with find, or list the periods with db.tablesOf`,
      );
    }
    const rowKey = this.model.rowKey.prefixRange({});
    return Query.build(this.model, this.#executor, {
      table: this.table,
      rowFields: {},
      rowKey,
      filters: [],
    });
  }

  /**
   * An instance from a stored row (rows of an older version go through the class's upcaster
   * first), its ETag (and, with indexes, its copies) tracked in this context's scope.
   */
  #hydrate(stored: StoredEntity): T {
    const upcast = upcasterOf(this.model);
    const row = upcast ? upcast(stored) : stored;
    const entity = this.model.mapper.fromWire(row, this.runner.scope);
    this.#large?.hydrated(entity, row);
    this.writer.track(entity, stored);
    return entity;
  }
}
