import { quoteString } from "./odata.js";

/**
 * How the service will execute a query, from cheapest to most expensive (the design guide's four kinds);
 * `fan-out` is one query per hash bucket's partition, merged by tablekit.
 */
export type QueryKind = "point" | "range" | "partition-scan" | "table-scan" | "fan-out";

/** What `explain()` returns: the kind, the table and the exact filter that would be sent. */
export interface QueryExplanation {
  kind: QueryKind;
  table: string;
  filter: string;
  /** For `fan-out`: how many partitions are read (`filter` is the first bucket's). */
  partitions?: number;
}

/** Bounds on the RowKey: an exact key or a half-open range. */
export interface RowKeyBounds {
  eq?: string;
  ge?: string;
  lt?: string;
}

/** The parts of a query that decide its filter. */
export interface QueryShape {
  table: string;
  partitionKey?: string;
  rowKey: RowKeyBounds;
  /** Non-key filters, each a complete OData expression. */
  filters: readonly string[];
}

/** Compiles a query shape to its OData filter and its kind. */
export function planQuery(shape: QueryShape): QueryExplanation {
  const parts: string[] = [];
  if (shape.partitionKey !== undefined) parts.push(`PartitionKey eq ${quoteString(shape.partitionKey)}`);
  const { eq, ge, lt } = shape.rowKey;
  if (eq !== undefined) parts.push(`RowKey eq ${quoteString(eq)}`);
  else {
    if (ge !== undefined && ge !== "") parts.push(`RowKey ge ${quoteString(ge)}`);
    if (lt !== undefined) parts.push(`RowKey lt ${quoteString(lt)}`);
  }
  // Parenthesised so a user's `or` can never escape its conjunct.
  const wrap = parts.length + shape.filters.length > 1;
  for (const filter of shape.filters) parts.push(wrap ? `(${filter})` : filter);
  return { kind: kindOf(shape), table: shape.table, filter: parts.join(" and ") };
}

function kindOf(shape: QueryShape): QueryKind {
  if (shape.partitionKey === undefined) return "table-scan";
  if (shape.rowKey.eq !== undefined) return "point";
  return shape.filters.length === 0 ? "range" : "partition-scan";
}
