import type { StoredRecord } from "./typed-entity.js";

// Rows per chunk. Small enough that inserting into a chunk (a memmove of pointers) stays cheap, large
// enough that the chunk list of a million rows is short (about 2,000 entries).
const DEFAULT_CHUNK = 512;

/** A position in the index: chunk number and offset within the chunk. */
interface Position {
  chunk: number;
  offset: number;
}

/**
 * A table's rows ordered by (PartitionKey, RowKey) in sorted chunks, a two-level B-tree: a point
 * lookup is two binary searches, an insert a splice into one chunk, and rows appended in key order
 * (a bulk load) fill chunk after chunk. The rows themselves are the keys, so no composite key
 * string is kept per row. Ordinal (UTF-16 code unit) order, the service's.
 */
export class SortedRows {
  readonly #chunks: StoredRecord[][] = [[]];
  readonly #chunk: number;
  #size = 0;

  /** `chunkSize` (rows per chunk, at least 2) is there for tests, to exercise splits on few rows. */
  constructor(chunkSize = DEFAULT_CHUNK) {
    this.#chunk = Math.max(2, chunkSize);
  }

  /** Number of rows. */
  get size(): number {
    return this.#size;
  }

  /** The row with these keys, or `undefined`. */
  get(partitionKey: string, rowKey: string): StoredRecord | undefined {
    const at = this.#find(partitionKey, rowKey);
    const row = this.#chunks[at.chunk]?.[at.offset];
    return row !== undefined && row.partitionKey === partitionKey && row.rowKey === rowKey ? row : undefined;
  }

  /** Inserts the row, or replaces the row with its keys. */
  set(row: StoredRecord): void {
    const at = this.#find(row.partitionKey, row.rowKey);
    const chunk = this.#chunks[at.chunk] as StoredRecord[];
    const found = chunk[at.offset];
    if (found !== undefined && found.partitionKey === row.partitionKey && found.rowKey === row.rowKey) {
      row.partitionKey = found.partitionKey;
      chunk[at.offset] = row;
      return;
    }
    // Share the key string of a neighbour in the same partition: one string per partition, not per row.
    const before = at.offset > 0 ? chunk[at.offset - 1] : this.#chunks[at.chunk - 1]?.at(-1);
    if (before !== undefined && before.partitionKey === row.partitionKey)
      row.partitionKey = before.partitionKey;
    else if (found !== undefined && found.partitionKey === row.partitionKey)
      row.partitionKey = found.partitionKey;
    this.#size++;
    if (at.offset === chunk.length && chunk.length >= this.#chunk) {
      // Appending past a full chunk (the bulk-load pattern): start the next chunk rather than split.
      const next = this.#chunks[at.chunk + 1];
      if (next !== undefined && next.length < this.#chunk) next.unshift(row);
      else this.#chunks.splice(at.chunk + 1, 0, [row]);
      return;
    }
    chunk.splice(at.offset, 0, row);
    if (chunk.length > this.#chunk) this.#chunks.splice(at.chunk + 1, 0, chunk.splice(this.#chunk >> 1));
  }

  /** Removes the row with these keys; true if it existed. */
  delete(partitionKey: string, rowKey: string): boolean {
    const at = this.#find(partitionKey, rowKey);
    const chunk = this.#chunks[at.chunk] as StoredRecord[];
    const found = chunk[at.offset];
    if (found === undefined || found.partitionKey !== partitionKey || found.rowKey !== rowKey) return false;
    chunk.splice(at.offset, 1);
    this.#size--;
    if (chunk.length === 0 && this.#chunks.length > 1) this.#chunks.splice(at.chunk, 1);
    return true;
  }

  /**
   * Rows in key order from the first whose composite key (`PartitionKey + U+0000 + RowKey`) is at or
   * above `lowestKey` (all rows without it). Rows must not be added or removed while iterating.
   */
  *from(lowestKey?: string): Generator<StoredRecord, void, undefined> {
    const chunks = this.#chunks;
    let c = 0;
    let o = 0;
    if (lowestKey !== undefined) ({ chunk: c, offset: o } = this.#findComposite(lowestKey));
    for (; c < chunks.length; c++, o = 0) {
      const chunk = chunks[c] as StoredRecord[];
      for (; o < chunk.length; o++) yield chunk[o] as StoredRecord;
    }
  }

  /** The position of the first row at or above (partitionKey, rowKey): where it is or would go. */
  #find(partitionKey: string, rowKey: string): Position {
    const chunks = this.#chunks;
    // The last chunk whose first row is ≤ the keys (or the first chunk).
    let lo = 0;
    let hi = chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      const first = (chunks[mid] as StoredRecord[])[0] as StoredRecord;
      if (compareKeys(first.partitionKey, first.rowKey, partitionKey, rowKey) <= 0) lo = mid;
      else hi = mid - 1;
    }
    const chunk = chunks[lo] as StoredRecord[];
    let a = 0;
    let b = chunk.length;
    while (a < b) {
      const mid = (a + b) >> 1;
      const row = chunk[mid] as StoredRecord;
      if (compareKeys(row.partitionKey, row.rowKey, partitionKey, rowKey) < 0) a = mid + 1;
      else b = mid;
    }
    return { chunk: lo, offset: a };
  }

  /** `#find` for a composite key, which may lie between partitions (see key-range.ts). */
  #findComposite(key: string): Position {
    const chunks = this.#chunks;
    let lo = 0;
    let hi = chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      const first = (chunks[mid] as StoredRecord[])[0] as StoredRecord;
      if (compareToComposite(first.partitionKey, first.rowKey, key) <= 0) lo = mid;
      else hi = mid - 1;
    }
    const chunk = chunks[lo] as StoredRecord[];
    let a = 0;
    let b = chunk.length;
    while (a < b) {
      const mid = (a + b) >> 1;
      const row = chunk[mid] as StoredRecord;
      if (compareToComposite(row.partitionKey, row.rowKey, key) < 0) a = mid + 1;
      else b = mid;
    }
    // Past the end of a chunk means the start of the next one.
    return a === chunk.length && lo + 1 < chunks.length
      ? { chunk: lo + 1, offset: 0 }
      : { chunk: lo, offset: a };
  }
}

/**
 * Orders two (PartitionKey, RowKey) pairs ordinally. Keys hold no control characters, so this is
 * also the ordinal order of their composite keys `PartitionKey + U+0000 + RowKey`.
 */
export function compareKeys(pk1: string, rk1: string, pk2: string, rk2: string): number {
  if (pk1 !== pk2) return pk1 < pk2 ? -1 : 1;
  return rk1 < rk2 ? -1 : rk1 > rk2 ? 1 : 0;
}

/**
 * Orders a row's composite key `PartitionKey + U+0000 + RowKey` against a composite key, ordinally,
 * without building the row's composite string.
 */
export function compareToComposite(partitionKey: string, rowKey: string, key: string): number {
  const p = partitionKey.length;
  const k = key.length;
  for (let i = 0; i < p; i++) {
    if (i >= k) return 1;
    const d = partitionKey.charCodeAt(i) - key.charCodeAt(i);
    if (d !== 0) return d;
  }
  if (p >= k) return 1; // the key is a prefix of the row's composite
  const d = 0 - key.charCodeAt(p); // the U+0000 separator
  if (d !== 0) return d;
  const r = rowKey.length;
  for (let i = 0; i < r; i++) {
    const j = p + 1 + i;
    if (j >= k) return 1;
    const e = rowKey.charCodeAt(i) - key.charCodeAt(j);
    if (e !== 0) return e;
  }
  return p + 1 + r === k ? 0 : -1;
}
