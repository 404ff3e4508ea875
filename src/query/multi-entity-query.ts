import { ValidationError } from "../errors.js";
import type { ColumnModel } from "../schema/entity-model.js";
import type { DataField, Selected, WhereValues } from "../util/entity-fields.js";
import type { ComparisonOperator, Page, PageOptions, Query, ToArrayOptions } from "./query.js";
import type { QueryExplanation } from "./query-plan.js";

/** The data fields every type of a union has (for `U = Department | Employee`: the fields both declare). */
export type CommonField<U> = DataField<U>;

/** Values of the fields common to every type of a union (not distributed over the union). */
export type CommonValues<U> = WhereValues<U>;

/**
 * An immutable query over several entity classes sharing a table, as returned by
 * `db.query(Department, Employee).find({ … })`: each row is resolved to its class by its
 * `EntityType`, so results are typed as the union. Rows of types not asked for, and index copies,
 * are skipped (they still count as rows the service reads). There is no `between`/`startsWith`:
 * each type has its own RowKey space. `where` and `select` take the columns every class has
 * (same field, stored name and type); say anything else with `filter(odata…)`.
 * @example
 * const rows = await db.query(Department, Employee).find({ department: "Sales" }).toArray(); // (Department | Employee)[]
 */
export class MultiEntityQuery<U extends object, R = U> implements AsyncIterable<R> {
  readonly #query: Query<U, R>;
  readonly #label: string;
  readonly #common: ReadonlyMap<string, ColumnModel>;

  /** @internal Created by `db.query(...classes).find()` / `.scan()`. */
  static build<U extends object, R = U>(
    query: Query<U, R>,
    label: string,
    common: ReadonlyMap<string, ColumnModel>,
  ): MultiEntityQuery<U, R> {
    return new MultiEntityQuery(query, label, common);
  }

  private constructor(query: Query<U, R>, label: string, common: ReadonlyMap<string, ColumnModel>) {
    this.#query = query;
    this.#label = label;
    this.#common = common;
  }

  /** Adds a comparison on a column every class has (the value typed by the field), or equalities on such columns. */
  where<K extends CommonField<U>>(
    field: K,
    op: ComparisonOperator,
    value: NonNullable<U[K]>,
  ): MultiEntityQuery<U, R>;
  where(equalities: CommonValues<U>): MultiEntityQuery<U, R>;
  where(
    fieldOrEqualities: CommonField<U> | CommonValues<U>,
    op?: ComparisonOperator,
    value?: unknown,
  ): MultiEntityQuery<U, R> {
    if (typeof fieldOrEqualities === "string") {
      this.#assertCommon(fieldOrEqualities);
      return this.#wrap(
        this.#query.where(
          fieldOrEqualities,
          op as ComparisonOperator,
          value as NonNullable<U[CommonField<U>]>,
        ),
      );
    }
    if (fieldOrEqualities !== null && typeof fieldOrEqualities === "object") {
      for (const field of Object.keys(fieldOrEqualities)) this.#assertCommon(field);
    }
    return this.#wrap(this.#query.where(fieldOrEqualities));
  }

  /** ANDs a raw OData filter; build it with the `odata` template so values are escaped. */
  filter(expression: string): MultiEntityQuery<U, R> {
    return this.#wrap(this.#query.filter(expression));
  }

  /**
   * Server-side projection on columns every class has: results are typed as each class's `Pick`
   * of them (so `instanceof` still tells them apart); each class's key fields are always present.
   */
  select<K extends CommonField<U>>(...fields: K[]): MultiEntityQuery<U, Selected<U, K>> {
    for (const field of fields) this.#assertCommon(field);
    return this.#wrap(this.#query.select(...fields));
  }

  /** At most `n` results in total (rows skipped as other types or copies do not count). */
  take(n: number): MultiEntityQuery<U, R> {
    return this.#wrap(this.#query.take(n));
  }

  /** How the query will run, without sending anything. */
  explain(): QueryExplanation {
    return this.#query.explain();
  }

  /** Fetches one page of at most `size` results (default 1,000), resuming from `continuation`. */
  page(options: PageOptions = {}): Promise<Page<R>> {
    return this.#query.page(options);
  }

  /** Iterates every result, following continuations lazily and holding one page in memory. */
  [Symbol.asyncIterator](): AsyncIterator<R> {
    return this.#query[Symbol.asyncIterator]();
  }

  /** Collects every result into an array (with `maxRequests`, see `Query.toArray`). */
  toArray(options: ToArrayOptions = {}): Promise<R[]> {
    return this.#query.toArray(options);
  }

  /** The first result, or `undefined`. */
  first(): Promise<R | undefined> {
    return this.#query.first();
  }

  #assertCommon(field: string): void {
    if (this.#common.has(field)) return;
    const common = [...this.#common.keys()];
    throw new ValidationError(
      "unknown-field",
      `${this.#label}: '${field}' is not a column of every class (same field, stored name and type)` +
        `${common.length ? `; common columns: ${common.join(", ")}` : ""}. Use filter(odata\`…\`) for type-specific conditions`,
      { field },
    );
  }

  #wrap<S>(query: Query<U, S>): MultiEntityQuery<U, S> {
    return MultiEntityQuery.build(query, this.#label, this.#common);
  }
}
