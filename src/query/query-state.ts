import type { EntityModel } from "../schema/entity-model.js";
import { assertWideRowKey, partRange } from "../serialization/wide-rows.js";
import { withSystemProperties } from "../wire/system-properties.js";
import type { ExactMatch } from "./blind-filter.js";
import { fingerprintQuery } from "./continuation-token.js";
import type { FanOut } from "./fan-out.js";
import type { QueryExecutor } from "./query-executor.js";
import { planQuery, type RowKeyBounds } from "./query-plan.js";

/** What a `Query` has been narrowed to so far (each method makes a new one). */
export interface QueryState {
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
  /** Equalities on blind-indexed columns, checked on the decrypted rows (blind-filter.ts). */
  matches?: readonly ExactMatch[];
}

/**
 * The RowKey bounds sent: for a wide entity, an exact RowKey becomes the range of its rows (see
 * wide-rows.ts), and a bound holding the separator (a space) is refused, as no wide RowKey holds one.
 */
export function rowBoundsOf<T extends object>(model: EntityModel<T>, bounds: RowKeyBounds): RowKeyBounds {
  if (!model.wide) return bounds;
  for (const bound of [bounds.eq, bounds.ge, bounds.lt]) {
    if (bound !== undefined) assertWideRowKey(model.name, bound);
  }
  return bounds.eq === undefined ? bounds : partRange(bounds.eq);
}

/** The fan-out over hash buckets, when `find` left out only the hashed partition field. */
export function fanOutOf<T extends object>(
  model: EntityModel<T>,
  executor: QueryExecutor<T>,
  state: QueryState,
): FanOut<T> | undefined {
  const { partitionKeys, table, filters } = state;
  const rowKey = rowBoundsOf(model, state.rowKey);
  if (partitionKeys === undefined) return undefined;
  const bucketFilters = partitionKeys.map(
    (partitionKey) => planQuery({ table, partitionKey, rowKey, filters }).filter,
  );
  return {
    executor,
    table,
    filters: bucketFilters,
    select: state.select === undefined ? undefined : withSystemProperties(state.select),
    rowKeyOf: (item) => {
      const rowKey = model.rowKey.encode(item as Record<string, unknown>, "RowKey");
      // A wide entity's rows run up to its RowKey + "!": a bucket resumes after the last of them.
      return model.wide ? partRange(rowKey).lt : rowKey;
    },
    fingerprint: fingerprintQuery(table, bucketFilters.join("\n"), state.select),
  };
}
