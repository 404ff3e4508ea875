import * as sortedBtree from "sorted-btree";

/** The part of sorted-btree's `BTree<string, V>` the memory store uses. */
export interface OrderedMap<V> {
  readonly size: number;
  get(key: string): V | undefined;
  set(key: string, value: V): boolean;
  delete(key: string): boolean;
  /** Entries in key order, starting at the lowest key ≥ `lowestKey`: O(log n) to start, O(1) per step. */
  entries(lowestKey?: string): IterableIterator<[string, V]>;
}

type OrderedMapConstructor = new <V>(
  entries?: [string, V][],
  compare?: (a: string, b: string) => number,
) => OrderedMap<V>;

// sorted-btree is CommonJS with `exports.default = BTree`: Node's ESM loader hands us `module.exports`
// as the default export (so the class is at `.default.default`), while bundlers and vitest interop
// unwrap it once. Resolve the constructor whichever way it arrives.
const loaded = sortedBtree as unknown as { default: unknown };
const BTreeClass = (
  typeof loaded.default === "function" ? loaded.default : (loaded.default as { default: unknown }).default
) as OrderedMapConstructor;

/** Ordinal (UTF-16 code unit) comparison, the order the Table service sorts keys in. */
function compareOrdinal(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Creates an empty B+ tree keyed by strings in ordinal order. */
export function createOrderedMap<V>(): OrderedMap<V> {
  return new BTreeClass<V>(undefined, compareOrdinal);
}
