import { QueryBudgetError, ValidationError } from "../errors.js";
import type { EntityModel } from "../schema/entity-model.js";
import type { DataField, Selected, WhereValues } from "../util/entity-fields.js";
import { ServiceLimits } from "../util/service-limits.js";
import { withSystemProperties } from "../wire/system-properties.js";
import type { StoreContinuation } from "../wire/wire-entity.js";
import { type CompiledWhere, compileWhere, exactExecutor } from "./blind-filter.js";
import { decodeContinuation, encodeContinuation, fingerprintQuery } from "./continuation-token.js";
import { type FanOut, firstOfFanOut, iterateFanOut, pageFanOut } from "./fan-out.js";
import { assertComparisonLimit } from "./filter-comparisons.js";
import type { Page, PageOptions, ToArrayOptions } from "./page-options.js";
import { checkedMaxRequests, RequestBudget } from "./query-budget.js";
import type { FetchFirst, QueryExecutor } from "./query-executor.js";
import { assertRowFilterable, type ComparisonOperator, checkFilterExpression } from "./query-filters.js";
import { planQuery, type QueryExplanation } from "./query-plan.js";
import { fanOutOf, type QueryState, rowBoundsOf } from "./query-state.js";
import { assertKeyOrderBounded, assertNoBudget, assertTakeFitsPage } from "./unsorted-order.js";

export type { Page, PageOptions, ToArrayOptions } from "./page-options.js";
export type { QueryExecutor } from "./query-executor.js";
export type { ComparisonOperator } from "./query-filters.js";

/**
 * An immutable query over one entity class: each method returns a new query; nothing is sent
 * until it is iterated, paged or collected. `T` is the entity type filters are written against,
 * `R` the type of the results (narrowed by `select`).
 * @example
 * const page = await employees.find({ department: "Sales" }).where("age", "gt", 30).page({ size: 50 });
 */
export class Query<T extends object, R = T> implements AsyncIterable<R> {
  readonly #model: EntityModel<T>;
  /** The executor given; `#executor` drops false matches of blind-indexed equalities from its pages. */
  readonly #base: QueryExecutor<T>;
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
    this.#base = executor;
    this.#executor = state.matches === undefined ? executor : exactExecutor(executor, state.matches);
    this.#state = state;
  }

  /**
   * Adds a comparison on a column (`where("age", "gt", 30)`, the value typed by the field) or
   * equalities (`where({ lastName: "Jones" })`). A blind-indexed column takes equality only; results
   * are exact (false matches are dropped once decrypted: `take`, `page` and `first` count matches).
   */
  where<K extends DataField<T>>(field: K, op: ComparisonOperator, value: NonNullable<T[K]>): Query<T, R>;
  where(equalities: WhereValues<T>): Query<T, R>;
  where(fieldOrEqualities: string | WhereValues<T>, op?: ComparisonOperator, value?: unknown): Query<T, R> {
    assertRowFilterable(this.#model, "where()");
    if (typeof fieldOrEqualities === "string") {
      return this.#withWhere(
        compileWhere(this.#model, [[fieldOrEqualities, op, value]], this.#base.blindValues),
      );
    }
    if (fieldOrEqualities === null || typeof fieldOrEqualities !== "object") {
      throw new ValidationError(
        "where",
        "where() takes a field, an operator and a value, or an object of equalities",
      );
    }
    const equalities = Object.entries(fieldOrEqualities).map(([field, v]) => [field, "eq", v] as const);
    if (equalities.length === 0) return this;
    return this.#withWhere(compileWhere(this.#model, equalities, this.#base.blindValues));
  }

  #withWhere({ filter, matches }: CompiledWhere): Query<T, R> {
    const filters = [...this.#state.filters, filter];
    if (matches.length === 0) return this.#with({ filters });
    return this.#with({ filters, matches: [...(this.#state.matches ?? []), ...matches] });
  }

  /** ANDs a raw OData filter; build it with the `odata` template so values are escaped. */
  filter(expression: string): Query<T, R> {
    assertRowFilterable(this.#model, "filter()");
    checkFilterExpression(this.#model, expression);
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
    const rowKey = rowBoundsOf(this.#model, this.#state.rowKey);
    const plan = planQuery({
      table: this.#state.table,
      ...(partitionKey === undefined ? {} : { partitionKey }),
      rowKey,
      filters,
    });
    assertComparisonLimit(plan.filter);
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
  #orderFix(plan: QueryExplanation): FetchFirst<R> | undefined {
    const fetchFirst = this.#executor.fetchFirst;
    if (fetchFirst === undefined || plan.kind === "point") return undefined;
    return fetchFirst.bind(this.#executor) as unknown as FetchFirst<R>;
  }

  #report(budget: RequestBudget, plan: QueryExplanation, rows: number): void {
    this.#executor.reportPage?.(budget.stats(plan, rows));
  }

  /** The fan-out over hash buckets, when `find` left out only the hashed partition field. */
  #fanOut(): FanOut<T> | undefined {
    return fanOutOf(this.#model, this.#executor, this.#state);
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

  #with<S = R>(change: Partial<QueryState>): Query<T, S> {
    return new Query<T, S>(this.#model, this.#base, { ...this.#state, ...change });
  }
}
