import type { FilterNode } from "./filter-ast.js";
import { compositeKey, type KeyBound } from "./memory-table.js";

/** The slice of the (PartitionKey, RowKey) index a filter can match; absent ends are open. */
export interface KeyRange {
  readonly low?: KeyBound | undefined;
  readonly high?: KeyBound | undefined;
}

// Composite keys of partition P lie in [P + U+0000, P + U+0001): no key character is below U+0020.
const PARTITION_START = "\u0000";
const PARTITION_END = "\u0001";

/**
 * Derives index bounds from the filter's top-level `and` chain so queries run as B+ tree range scans
 * (point and range queries cost O(log n + k)): `PartitionKey` comparisons bound the scan; `RowKey`
 * comparisons too, when one `PartitionKey eq` fixes the partition. Everything else (including `or`
 * and `not`) is left to the predicate, which still runs on every scanned entity, so the range only
 * has to be a superset of the matches. The range may be empty (low above high).
 */
export function keyRangeOf(filter: FilterNode | undefined): KeyRange {
  if (filter === undefined) return {};
  const conjuncts = flattenAnd(filter);
  const partitions = new Set<string>();
  for (const c of conjuncts) {
    if (c.property === "PartitionKey" && c.op === "eq") partitions.add(c.literal.value as string);
  }
  const fixedPartition = partitions.size === 1 ? [...partitions][0]! : undefined;
  let low: KeyBound | undefined;
  let high: KeyBound | undefined;
  const raise = (b: KeyBound) => {
    low = tighterLow(low, b);
  };
  const lower = (b: KeyBound) => {
    high = tighterHigh(high, b);
  };
  for (const { property, op, literal } of conjuncts) {
    const v = literal.value as string;
    if (property === "PartitionKey") {
      if (op === "eq" || op === "ge") raise({ key: v + PARTITION_START, inclusive: true });
      if (op === "gt") raise({ key: v + PARTITION_END, inclusive: true });
      if (op === "eq" || op === "le") lower({ key: v + PARTITION_END, inclusive: false });
      if (op === "lt") lower({ key: v + PARTITION_START, inclusive: false });
    } else if (fixedPartition !== undefined) {
      const key = compositeKey(fixedPartition, v);
      if (op === "eq" || op === "ge" || op === "gt") raise({ key, inclusive: op !== "gt" });
      if (op === "eq" || op === "le" || op === "lt") lower({ key, inclusive: op !== "lt" });
    }
  }
  return { low, high };
}

type KeyComparison = {
  property: "PartitionKey" | "RowKey";
  op: string;
  literal: { type: "String"; value: string };
};

function flattenAnd(node: FilterNode, out: KeyComparison[] = []): KeyComparison[] {
  if (node.kind === "and") {
    flattenAnd(node.left, out);
    flattenAnd(node.right, out);
  } else if (
    node.kind === "compare" &&
    (node.property === "PartitionKey" || node.property === "RowKey") &&
    node.literal.type === "String" &&
    node.op !== "ne"
  ) {
    out.push(node as KeyComparison);
  }
  return out;
}

/** The higher of two lower bounds (at equal keys the exclusive one is tighter). */
export function tighterLow(a: KeyBound | undefined, b: KeyBound): KeyBound {
  if (a === undefined || b.key > a.key) return b;
  if (b.key === a.key && !b.inclusive) return b;
  return a;
}

/** The lower of two upper bounds (at equal keys the exclusive one is tighter). */
export function tighterHigh(a: KeyBound | undefined, b: KeyBound): KeyBound {
  if (a === undefined || b.key < a.key) return b;
  if (b.key === a.key && !b.inclusive) return b;
  return a;
}
