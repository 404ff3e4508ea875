import { ValidationError } from "../errors.js";
import { blindCanonicalText } from "../schema/blind-index-plan.js";
import type { ColumnModel, EntityModel } from "../schema/entity-model.js";
import type { BlindValues, QueryExecutor } from "./query-executor.js";
import { type ComparisonOperator, compileComparison } from "./query-filters.js";

/** A `where` equality on a blind-indexed column, checked on the decrypted rows (drops false matches). */
export interface ExactMatch {
  readonly field: string;
  readonly property: string;
  readonly type: ColumnModel["type"];
  /** The canonical text of the value asked for. */
  readonly text: string;
}

/**
 * `where(field, op, value)` on a blind-indexed column: the OData comparison on its blind value(s) and
 * the equality the decrypted rows must meet; `undefined` for any other column. Only `eq` is answered:
 * a blind value is a keyed hash, so it keeps neither order nor a meaningful inequality.
 */
export function blindComparison<T extends object>(
  model: EntityModel<T>,
  field: string,
  op: string | undefined,
  value: unknown,
  blind: BlindValues | undefined,
): { filter: string; match: ExactMatch } | undefined {
  const column = model.columnsByField.get(field);
  if (column?.blindIndex === undefined) return undefined;
  if (op !== "eq") {
    throw new ValidationError(
      "blind-index-operator",
      `${model.name}.${field} is encrypted with a blind index, which answers equality only: where("${field}", "eq", value) or where({ ${field}: value }); '${String(op)}' cannot be answered, since the row holds a keyed hash of the value, which keeps neither its order nor its other values`,
      { field },
    );
  }
  if (value === undefined || value === null) {
    throw new ValidationError("filter-value", `${field}: the service cannot compare with ${String(value)}`, {
      field,
    });
  }
  const text = blindCanonicalText(column.type, value);
  if (text === undefined) {
    throw new ValidationError(
      "blind-index-value",
      `${model.name}.${field}: expected a ${column.type} value for its blind index (value not shown: the column is encrypted)`,
      { field },
    );
  }
  if (blind === undefined) {
    throw new ValidationError(
      "blind-index-key",
      `${model.name}.${field} has a blind index: give the TableContext { encryption: { keys, blindIndexKey } } to look it up`,
      { field: "encryption" },
    );
  }
  const property = column.blindIndex.property;
  // Hex digits only: nothing to escape. Several values while a blind-index key is being rotated.
  const values = blind.storedValues(model, column, value);
  const comparisons = values.map((one) => `${property} eq '${one}'`);
  const filter = comparisons.length === 1 ? (comparisons[0] as string) : `(${comparisons.join(" or ")})`;
  return { filter, match: { field, property: column.property, type: column.type, text } };
}

/** What `where` adds to a query: one OData conjunct and the equalities checked after decrypting. */
export interface CompiledWhere {
  filter: string;
  matches: ExactMatch[];
}

/** `where` comparisons ANDed: blind-indexed columns through their blind values, others as they are. */
export function compileWhere<T extends object>(
  model: EntityModel<T>,
  comparisons: ReadonlyArray<readonly [string, string | undefined, unknown]>,
  blind: BlindValues | undefined,
): CompiledWhere {
  const matches: ExactMatch[] = [];
  const filters = comparisons.map(([field, op, value]) => {
    const compared = blindComparison(model, field, op, value, blind);
    if (compared === undefined) return compileComparison(model, field, op as ComparisonOperator, value);
    matches.push(compared.match);
    return compared.filter;
  });
  return { filter: filters.join(" and "), matches };
}

/** Whether a decrypted result holds every value asked for (a truncated blind value also matches others). */
export function meetsMatches(item: unknown, matches: readonly ExactMatch[]): boolean {
  const values = item as Record<string, unknown>;
  for (const match of matches) {
    if (blindCanonicalText(match.type, values[match.field]) !== match.text) return false;
  }
  return true;
}

/**
 * The executor with false matches of blind-indexed equalities dropped from every page: a page may
 * then hold fewer results than asked for while more follow (callers read on, as after an empty page).
 * A projection leaving out a matched column reads it too, and the results leave it out again.
 */
export function exactExecutor<T>(inner: QueryExecutor<T>, matches: readonly ExactMatch[]): QueryExecutor<T> {
  const widen = (select: readonly string[] | undefined) => {
    if (select === undefined) return { select, added: [] as string[] };
    const added = matches.filter((m) => !select.includes(m.property));
    return { select: [...select, ...added.map((m) => m.property)], added: added.map((m) => m.field) };
  };
  const keep = (items: readonly T[], added: readonly string[]): T[] => {
    const kept = items.filter((item) => meetsMatches(item, matches));
    for (const item of kept) for (const field of added) delete (item as Record<string, unknown>)[field];
    return kept;
  };
  const executor: QueryExecutor<T> = {
    async fetchPage(table, filter, select, top, continuation) {
      const wide = widen(select);
      const page = await inner.fetchPage(table, filter, wide.select, top, continuation);
      const items = keep(page.items, wide.added);
      return page.continuation === undefined ? { items } : { items, continuation: page.continuation };
    },
    fetchPoint: (table, partitionKey, rowKey, select) => {
      const wide = widen(select);
      return inner
        .fetchPoint(table, partitionKey, rowKey, wide.select)
        .then((item) => (item === undefined ? undefined : keep([item], wide.added)[0]));
    },
  };
  if (inner.reportPage !== undefined) executor.reportPage = inner.reportPage.bind(inner);
  const fetchFirst = inner.fetchFirst;
  if (fetchFirst !== undefined) {
    // The first `top` exact results: every candidate is read, since false matches are dropped after.
    executor.fetchFirst = async (table, filter, select, top) => {
      const wide = widen(select);
      const all = await fetchFirst.call(inner, table, filter, wide.select, Number.POSITIVE_INFINITY);
      const kept = keep(all, wide.added);
      return Number.isFinite(top) ? kept.slice(0, top) : kept;
    };
  }
  return executor;
}
