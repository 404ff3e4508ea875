import { QueryBudgetError, ValidationError } from "../errors.js";
import type { EntityModel } from "../schema/entity-model.js";
import { assertWideRowKey, partRange } from "../serialization/wide-rows.js";
import type { DataField, Selected, WhereValues } from "../util/entity-fields.js";
import { ServiceLimits } from "../util/service-limits.js";
import { withSystemProperties } from "../wire/system-properties.js";
import type { StoreContinuation } from "../wire/wire-entity.js";
import { formatColumnLiteral } from "./column-literal.js";
import { decodeContinuation, encodeContinuation, fingerprintQuery } from "./continuation-token.js";
import { type FanOut, firstOfFanOut, iterateFanOut, pageFanOut } from "./fan-out.js";
import { countComparisons, filterIdentifiers, isSelfContained } from "./filter-comparisons.js";
import { checkedMaxRequests, type QueryPageStats, RequestBudget } from "./query-budget.js";
import { planQuery, type QueryExplanation, type RowKeyBounds } from "./query-plan.js";
import { assertKeyOrderBounded, assertTakeFitsPage } from "./unsorted-order.js";

/** Comparison operators of `where`. */
export type ComparisonOperator = "eq" | "ne" | "gt" | "ge" | "lt" | "le";

/** One page of results and, when more may follow, an opaque continuation string that can be stored. */
export interface Page<T> {
  items: T[];
  continuation?: string | undefined;
  /** Present when the page stopped at its `maxRequests` before filling up; `continuation` reads on. */
  budgetExhausted?: true;
}

/** Options of `page`; `continuation: undefined` (a last page's) starts from the beginning. */
export interface PageOptions {
  /** At most this many results (default 1,000). */
  size?: number | undefined;
  /** Where to resume: a previous page's `continuation`. */
  continuation?: string | undefined;
  /**
   * At most this many store requests (a positive integer): a sparse scan whose pages come back empty
   * stops there, with `budgetExhausted: true` and a continuation.
   */
  maxRequests?: number | undefined;
}

/** Options of `toArray`. */
export interface ToArrayOptions {
  /**
   * At most this many store requests (a positive integer); when they run out before the end of the
   * results, `toArray` rejects with a `QueryBudgetError` holding what it read and a continuation.
   */
  maxRequests?: number | undefined;
}

/** Runs compiled queries against a store (implemented by the repository). */
export interface QueryExecutor<T> {
  fetchPage(
    table: string,
    filter: string,
    select: readonly string[] | undefined,
    top: number,
    continuation: StoreContinuation | undefined,
  ): Promise<{ items: T[]; continuation?: StoreContinuation }>;
  fetchPoint(
    table: string,
    partitionKey: string,
    rowKey: string,
    select: readonly string[] | undefined,
  ): Promise<T | undefined>;
  /**
   * Present only when the store returns results unsorted (`capabilities.sortedResults` false, the
   * Cosmos DB Table API): reads every page of the filter and resolves its first `top` results in
   * (PartitionKey, RowKey) order (`top` may be `Infinity`).
   */
  fetchFirst?(
    table: string,
    filter: string,
    select: readonly string[] | undefined,
    top: number,
  ): Promise<T[]>;
  /** Hears what each `page()`, `toArray()` or iteration cost (the context's `query-page` event). */
  reportPage?(stats: QueryPageStats): void;
}

interface QueryState {
  /** The physical table (the model's, after the context's table prefix). */
  table: string;
  partitionKey?: string;
  /** Every hash bucket's partition when the query fans out over them (see fan-out.ts). */
  partitionKeys?: readonly string[];
  /** Row-key fields fixed by `find`, merged into `between`/`startsWith` bounds. */
  rowFields: Record<string, unknown>;
  rowKey: RowKeyBounds;
  filters: readonly string[];
  select?: readonly string[];
  take?: number;
}

const OPERATORS = new Set<ComparisonOperator>(["eq", "ne", "gt", "ge", "lt", "le"]);

/**
 * An immutable query over one entity class: each method returns a new query; nothing is sent
 * until it is iterated, paged or collected. `T` is the entity type filters are written against,
 * `R` the type of the results (narrowed by `select`).
 * @example
 * const page = await employees.find({ department: "Sales" }).where("age", "gt", 30).page({ size: 50 });
 */
export class Query<T extends object, R = T> implements AsyncIterable<R> {
  readonly #model: EntityModel<T>;
  readonly #executor: QueryExecutor<T>;
  readonly #state: QueryState;

  /** @internal Created by `Repository.find` / `Repository.scan`. */
  static build<T extends object, R = T>(
    model: EntityModel<T>,
    executor: QueryExecutor<T>,
    state: QueryState,
  ): Query<T, R> {
    return new Query(model, executor, state);
  }

  private constructor(model: EntityModel<T>, executor: QueryExecutor<T>, state: QueryState) {
    this.#model = model;
    this.#executor = executor;
    this.#state = state;
  }

  /**
   * Adds a comparison on a column (`where("age", "gt", 30)`, the value typed by the field) or
   * equalities (`where({ lastName: "Jones" })`).
   */
  where<K extends DataField<T>>(field: K, op: ComparisonOperator, value: NonNullable<T[K]>): Query<T, R>;
  where(equalities: WhereValues<T>): Query<T, R>;
  where(fieldOrEqualities: string | WhereValues<T>, op?: ComparisonOperator, value?: unknown): Query<T, R> {
    this.#assertRowFilterable("where()");
    if (typeof fieldOrEqualities === "string") {
      return this.#with({
        filters: [...this.#state.filters, this.#comparison(fieldOrEqualities, op, value)],
      });
    }
    if (fieldOrEqualities === null || typeof fieldOrEqualities !== "object") {
      throw new ValidationError(
        "where",
        "where() takes a field, an operator and a value, or an object of equalities",
      );
    }
    const comparisons = Object.entries(fieldOrEqualities).map(([field, v]) =>
      this.#comparison(field, "eq", v),
    );
    if (comparisons.length === 0) return this;
    return this.#with({ filters: [...this.#state.filters, comparisons.join(" and ")] });
  }

  /** ANDs a raw OData filter; build it with the `odata` template so values are escaped. */
  filter(expression: string): Query<T, R> {
    this.#assertRowFilterable("filter()");
    if (typeof expression !== "string" || expression.trim() === "") {
      throw new ValidationError("filter", "filter() needs a non-empty OData expression");
    }
    if (!isSelfContained(expression)) {
      throw new ValidationError(
        "filter",
        "filter() needs one self-contained expression (closed quotes, balanced parentheses); build it with the odata template",
      );
    }
    for (const name of filterIdentifiers(expression)) {
      const column = this.#model.columns.find((c) => c.encrypted && c.property === name);
      if (column) throw encryptedFilter(this.#model.name, column.field);
    }
    return this.#with({ filters: [...this.#state.filters, expression] });
  }

  /**
   * Server-side projection: results carry the selected fields (typed as `Pick<T, K>`); key fields
   * are always present at run time too. A later `select` replaces this one.
   */
  select<K extends DataField<T>>(...fields: K[]): Query<T, Selected<T, K>> {
    const properties = this.#model.mapper.propertiesOf(fields);
    return this.#with<Selected<T, K>>({ select: properties });
  }

  /**
   * At most `n` results in total: the first `n` in key order. On a store whose results are unsorted
   * (Cosmos DB Table API) tablekit reads the whole partition range and sorts it to find them, and
   * refuses `take` on a table scan with a `ValidationError` (the answer would need the whole table).
   */
  take(n: number): Query<T, R> {
    if (!Number.isSafeInteger(n) || n < 0)
      throw new ValidationError("take", `take() needs a non-negative integer, got ${n}`);
    return this.#with({ take: n });
  }

  /** Restricts the RowKey to values between `from` and `to` (both inclusive; partial compound keys allowed). */
  between(from: Partial<T>, to: Partial<T>): Query<T, R> {
    const range = this.#model.rowKey.betweenRange(
      { ...this.#state.rowFields, ...(from as Record<string, unknown>) },
      { ...this.#state.rowFields, ...(to as Record<string, unknown>) },
    );
    return this.#with({ rowKey: { ge: range.ge, ...(range.lt === undefined ? {} : { lt: range.lt }) } });
  }

  /** Restricts the RowKey to keys starting with the given leading fields of a compound row key. */
  startsWith(prefix: Partial<T>): Query<T, R> {
    const range = this.#model.rowKey.prefixRange({
      ...this.#state.rowFields,
      ...(prefix as Record<string, unknown>),
    });
    return this.#with({ rowKey: { ge: range.ge, ...(range.lt === undefined ? {} : { lt: range.lt }) } });
  }

  /** How the query will run, without sending anything. */
  explain(): QueryExplanation {
    const { partitionKey, filters } = this.#state;
    const rowKey = this.#rowBounds();
    const plan = planQuery({
      table: this.#state.table,
      ...(partitionKey === undefined ? {} : { partitionKey }),
      rowKey,
      filters,
    });
    const comparisons = countComparisons(plan.filter);
    if (comparisons > ServiceLimits.maxFilterComparisons) {
      throw new ValidationError(
        "filter-comparisons",
        `The query has ${comparisons} comparisons; the service allows at most ${ServiceLimits.maxFilterComparisons}`,
      );
    }
    if (this.#state.partitionKeys === undefined) return plan;
    return { ...plan, kind: "fan-out", partitions: this.#state.partitionKeys.length };
  }

  /**
   * Fetches one page of at most `size` results (default 1,000), resuming from `continuation`. Pages
   * are in key order on Azure Table storage; on an unsorted store (Cosmos DB Table API) each page
   * holds results in the store's order (the pages together still hold every result exactly once),
   * except under `take(n)`, answered as one page of the first `n` in key order (n ≤ size).
   */
  async page(options: PageOptions = {}): Promise<Page<R>> {
    const size = options.size ?? ServiceLimits.maxPageSize;
    if (!Number.isSafeInteger(size) || size < 1)
      throw new ValidationError("page-size", `page size must be a positive integer, got ${size}`);
    const budget = new RequestBudget(checkedMaxRequests(options.maxRequests));
    const plan = this.explain();
    const fan = this.#fanOut();
    if (fan) {
      assertNoBudget(budget.bounded, "a fan-out find");
      return this.#pageFanOut(fan, size, options.continuation);
    }
    const fetchFirst = this.#orderFix(plan);
    if (fetchFirst && this.#state.take !== undefined) {
      assertKeyOrderBounded(plan, `take(${this.#state.take})`);
      assertNoBudget(budget.bounded, `take(${this.#state.take})`);
      assertTakeFitsPage(this.#state.take, size, options.continuation !== undefined);
      if (this.#state.take === 0) return { items: [] };
      return { items: await fetchFirst(plan.table, plan.filter, this.#selectWithKeys(), this.#state.take) };
    }
    const fingerprint = fingerprintQuery(plan.table, plan.filter, this.#state.select);
    let remaining = this.#state.take;
    let cursor: StoreContinuation | undefined;
    if (options.continuation !== undefined) {
      const state = decodeContinuation(options.continuation, fingerprint);
      cursor = state.store;
      remaining = state.remaining ?? remaining;
    }
    const items: R[] = [];
    const limit = Math.min(size, remaining ?? Number.POSITIVE_INFINITY);
    if (plan.kind === "point" && this.#state.filters.length === 0) {
      if (options.continuation === undefined && limit > 0) {
        const item = await this.#fetchPoint();
        budget.count(item ? 1 : 0);
        if (item) items.push(item);
      }
      this.#report(budget, plan, items.length);
      return { items };
    }
    let more = limit > 0;
    while (more && items.length < limit) {
      if (!budget.allows) {
        budget.exhausted = true;
        break;
      }
      // Asking for exactly what is still wanted keeps the service's continuation exact: nothing is skipped.
      const top = Math.min(limit - items.length, ServiceLimits.maxPageSize);
      const result = await this.#executor.fetchPage(
        plan.table,
        plan.filter,
        this.#selectWithKeys(),
        top,
        cursor,
      );
      budget.count(result.items.length);
      for (const item of result.items) items.push(item as unknown as R);
      cursor = result.continuation;
      more = cursor !== undefined;
    }
    this.#report(budget, plan, items.length);
    if (remaining !== undefined) remaining -= items.length;
    if (cursor === undefined || remaining === 0) return { items };
    const continuation = encodeContinuation(
      remaining === undefined ? { store: cursor } : { store: cursor, remaining },
      fingerprint,
    );
    return budget.exhausted ? { items, continuation, budgetExhausted: true } : { items, continuation };
  }

  /**
   * Iterates every result, following continuations lazily and holding one page in memory: in key
   * order on Azure Table storage, in the store's order on an unsorted store (Cosmos DB Table API),
   * where `take(n)` first reads the partition range to yield its first `n` in key order.
   */
  async *[Symbol.asyncIterator](): AsyncIterator<R> {
    const plan = this.explain();
    const fan = this.#fanOut();
    if (fan) {
      yield* iterateFanOut(fan, this.#state.take) as AsyncGenerator<R>;
      return;
    }
    const budget = new RequestBudget(undefined);
    let rows = 0;
    try {
      for await (const item of this.#iterate(plan, budget)) {
        rows++;
        yield item;
      }
    } finally {
      // Also when the caller stops early: the event tells what the iteration cost so far.
      this.#report(budget, plan, rows);
    }
  }

  /**
   * Collects every result into an array, in key order on every store: on an unsorted store (Cosmos
   * DB Table API) the results are sorted after reading them all. With `maxRequests`, running out of
   * requests before the end is a `QueryBudgetError` (never a silently partial array).
   */
  async toArray(options: ToArrayOptions = {}): Promise<R[]> {
    const maxRequests = checkedMaxRequests(options.maxRequests);
    const fan = this.#fanOut();
    if (fan) {
      assertNoBudget(maxRequests !== undefined, "toArray() of a fan-out find");
      return firstOfFanOut(fan, this.#state.take ?? Number.POSITIVE_INFINITY) as unknown as Promise<R[]>;
    }
    if (this.#executor.fetchFirst !== undefined && this.#state.take === undefined) {
      const plan = this.explain();
      const fetchFirst = this.#orderFix(plan);
      if (fetchFirst) {
        assertNoBudget(maxRequests !== undefined, "toArray()");
        return fetchFirst(plan.table, plan.filter, this.#selectWithKeys(), Number.POSITIVE_INFINITY);
      }
    }
    const plan = this.explain();
    const budget = new RequestBudget(maxRequests);
    const items: R[] = [];
    let stoppedAt: StoreContinuation | undefined;
    try {
      const pages = this.#iterate(plan, budget, (cursor) => {
        stoppedAt = cursor;
      });
      for await (const item of pages) items.push(item);
    } finally {
      this.#report(budget, plan, items.length);
    }
    if (stoppedAt === undefined) return items;
    const take = this.#state.take;
    const continuation = encodeContinuation(
      take === undefined ? { store: stoppedAt } : { store: stoppedAt, remaining: take - items.length },
      fingerprintQuery(plan.table, plan.filter, this.#state.select),
    );
    throw new QueryBudgetError({ items, continuation, requests: budget.requests });
  }

  /**
   * Every result, following continuations lazily; when the budget runs out with more to read it
   * stops and hands the store continuation to `onExhausted`.
   */
  async *#iterate(
    plan: QueryExplanation,
    budget: RequestBudget,
    onExhausted?: (cursor: StoreContinuation) => void,
  ): AsyncGenerator<R> {
    let remaining = this.#state.take ?? Number.POSITIVE_INFINITY;
    if (remaining === 0) return;
    const fetchFirst = this.#orderFix(plan);
    if (fetchFirst && this.#state.take !== undefined) {
      assertKeyOrderBounded(plan, `take(${this.#state.take})`);
      assertNoBudget(budget.bounded, `take(${this.#state.take})`);
      yield* await fetchFirst(plan.table, plan.filter, this.#selectWithKeys(), this.#state.take);
      return;
    }
    if (plan.kind === "point" && this.#state.filters.length === 0) {
      const item = await this.#fetchPoint();
      budget.count(item ? 1 : 0);
      if (item) yield item;
      return;
    }
    const select = this.#selectWithKeys();
    let cursor: StoreContinuation | undefined;
    do {
      if (!budget.allows) {
        budget.exhausted = true;
        onExhausted?.(cursor as StoreContinuation);
        return;
      }
      const top = Math.min(remaining, ServiceLimits.maxPageSize);
      const result = await this.#executor.fetchPage(plan.table, plan.filter, select, top, cursor);
      budget.count(result.items.length);
      cursor = result.continuation;
      for (const item of result.items) {
        yield item as unknown as R;
        remaining--;
      }
    } while (cursor !== undefined && remaining > 0);
  }

  /**
   * The first result in key order, or `undefined`. On an unsorted store (Cosmos DB Table API) it
   * reads the whole partition range to find it, and on a table scan it is a `ValidationError`.
   */
  async first(): Promise<R | undefined> {
    if (this.#state.take === 0) return undefined;
    const fan = this.#fanOut();
    if (fan) return ((await firstOfFanOut(fan, 1)) as unknown as R[])[0];
    if (this.#executor.fetchFirst !== undefined) {
      const plan = this.explain();
      const fetchFirst = this.#orderFix(plan);
      if (fetchFirst) {
        assertKeyOrderBounded(plan, "first()");
        const [item] = await fetchFirst(plan.table, plan.filter, this.#selectWithKeys(), 1);
        return item;
      }
    }
    const { items } = await this.take(1).page({ size: 1 });
    return items[0];
  }

  /**
   * The executor's key-order read when the store returns results unsorted and the query can have
   * more than one result (a point query has at most one, so its order cannot be wrong). The
   * executor maps rows to entities of T; a projection only leaves fields out, so they are R.
   */
  #orderFix(
    plan: QueryExplanation,
  ):
    | ((table: string, filter: string, select: readonly string[] | undefined, top: number) => Promise<R[]>)
    | undefined {
    const fetchFirst = this.#executor.fetchFirst;
    if (fetchFirst === undefined || plan.kind === "point") return undefined;
    return fetchFirst.bind(this.#executor) as unknown as (
      table: string,
      filter: string,
      select: readonly string[] | undefined,
      top: number,
    ) => Promise<R[]>;
  }

  #report(budget: RequestBudget, plan: QueryExplanation, rows: number): void {
    this.#executor.reportPage?.(budget.stats(plan, rows));
  }

  /** The fan-out over hash buckets, when `find` left out only the hashed partition field. */
  #fanOut(): FanOut<T> | undefined {
    const { partitionKeys, table, filters } = this.#state;
    const rowKey = this.#rowBounds();
    if (partitionKeys === undefined) return undefined;
    const bucketFilters = partitionKeys.map(
      (partitionKey) => planQuery({ table, partitionKey, rowKey, filters }).filter,
    );
    const model = this.#model;
    return {
      executor: this.#executor,
      table,
      filters: bucketFilters,
      select: this.#selectWithKeys(),
      rowKeyOf: (item) => {
        const rowKey = model.rowKey.encode(item as Record<string, unknown>, "RowKey");
        // A wide entity's rows run up to its RowKey + "!": a bucket resumes after the last of them.
        return model.wide ? partRange(rowKey).lt : rowKey;
      },
      fingerprint: fingerprintQuery(table, bucketFilters.join("\n"), this.#state.select),
    };
  }

  /** `page()` of a fan-out; `take` on an unsorted store keeps the usual rule (one page of the first n). */
  async #pageFanOut(fan: FanOut<T>, size: number, continuation: string | undefined): Promise<Page<R>> {
    const take = this.#state.take;
    if (this.#executor.fetchFirst !== undefined && take !== undefined) {
      assertTakeFitsPage(take, size, continuation !== undefined);
      return { items: (await firstOfFanOut(fan, take)) as unknown as R[] };
    }
    return (await pageFanOut(fan, size, take, continuation)) as unknown as Page<R>;
  }

  #fetchPoint(): Promise<R | undefined> {
    const { partitionKey, rowKey } = this.#state;
    // The executor maps rows to entities of T; a projection only leaves fields out, so they are R.
    return this.#executor.fetchPoint(
      this.#state.table,
      partitionKey as string,
      rowKey.eq as string,
      this.#selectWithKeys(),
    ) as Promise<R | undefined>;
  }

  #selectWithKeys(): readonly string[] | undefined {
    const select = this.#state.select;
    if (select === undefined) return undefined;
    return withSystemProperties(select);
  }

  #comparison(field: string, op: ComparisonOperator | undefined, value: unknown): string {
    const column = this.#model.columnsByField.get(field);
    if (!column) {
      throw new ValidationError("unknown-field", `${this.#model.name} has no column '${field}'`, { field });
    }
    if (column.series !== undefined) {
      // The service compares single properties; a series is one property per slot.
      throw new ValidationError(
        "series-filter",
        `${this.#model.name}.${field} is a data series (${column.series} properties, one per slot): where() cannot compare it; filter a slot with filter(odata\`${column.properties[0]} eq …\`)`,
        { field },
      );
    }
    if (column.encrypted) throw encryptedFilter(this.#model.name, field);
    if (column.large) {
      // The row holds only a reference to the blob: the service cannot compare the value.
      throw new ValidationError(
        "large-filter",
        `${this.#model.name}.${field} is a large column (kept in a blob): it cannot be filtered on`,
        { field },
      );
    }
    if (op === undefined || !OPERATORS.has(op)) {
      throw new ValidationError(
        "operator",
        `Unknown operator '${String(op)}' (use eq, ne, gt, ge, lt or le)`,
        { field },
      );
    }
    if (value === undefined || value === null) {
      throw new ValidationError(
        "filter-value",
        `${field}: the service cannot compare with ${String(value)}`,
        { field },
      );
    }
    return `${column.property} ${op} ${formatColumnLiteral(column, value)}`;
  }

  /**
   * The RowKey bounds sent: for a wide entity, an exact RowKey becomes the range of its rows (see
   * wide-rows.ts), and a bound holding the separator (a space) is refused, as no wide RowKey holds one.
   */
  #rowBounds(): RowKeyBounds {
    const bounds = this.#state.rowKey;
    if (!this.#model.wide) return bounds;
    for (const bound of [bounds.eq, bounds.ge, bounds.lt]) {
      if (bound !== undefined) assertWideRowKey(this.#model.name, bound);
    }
    return bounds.eq === undefined ? bounds : partRange(bounds.eq);
  }

  /** The service filters rows, and a wide entity's columns are spread over several rows. */
  #assertRowFilterable(what: string): void {
    if (!this.#model.wide) return;
    throw new ValidationError(
      "wide-filter",
      `${this.#model.name} is a wide entity: ${what} is not supported, since the service filters single rows and each of its columns lives in only one of the entity's rows; narrow with find, between or startsWith on the keys and filter the results`,
    );
  }

  #with<S = R>(change: Partial<QueryState>): Query<T, S> {
    return new Query<T, S>(this.#model, this.#executor, { ...this.#state, ...change });
  }
}

/**
 * On an unsorted store (Cosmos DB Table API) `take(n)` and `toArray()` read the whole key range to
 * sort it, so a request budget cannot be kept: refused up front rather than silently exceeded.
 */
function assertNoBudget(bounded: boolean, what: string): void {
  if (!bounded) return;
  throw new ValidationError(
    "max-requests",
    `${what} on a store with unsorted results reads the whole key range; maxRequests cannot bound it`,
  );
}

/** The service stores an encrypted column as ciphertext: a comparison with it could never match. */
function encryptedFilter(entity: string, field: string): ValidationError {
  return new ValidationError(
    "encrypted-filter",
    `${entity}.${field} is encrypted: the service holds only ciphertext, so it cannot be filtered on; filter after reading, or keep a non-secret column to query by`,
    { field },
  );
}
