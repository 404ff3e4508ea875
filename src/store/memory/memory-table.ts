import { compareToComposite, SortedRows } from "./sorted-rows.js";
import type { StoredRecord } from "./typed-entity.js";

/**
 * The composite index key of an entity: `PartitionKey + U+0000 + RowKey`. Keys may not contain
 * control characters (a service rule), so ordinal order of composite keys is exactly the service's
 * (PartitionKey, RowKey) order: a PartitionKey that is a prefix of another sorts first because U+0000
 * is below every allowed character.
 */
export function compositeKey(partitionKey: string, rowKey: string): string {
  return `${partitionKey}\u0000${rowKey}`;
}

/** One end of a range of composite keys. */
export interface KeyBound {
  readonly key: string;
  readonly inclusive: boolean;
}

/** One table: its entities in sorted chunks ordered by (PartitionKey, RowKey), the table's only index. */
export class MemoryTable {
  /** The name as created (table names are case-insensitive but keep their case). */
  readonly name: string;
  /** Settings kept beside the rows (the table server's ACL): they go when the table is deleted. */
  readonly settings = new Map<string, string>();
  readonly #rows = new SortedRows();

  constructor(name: string) {
    this.name = name;
  }

  /** Number of entities. */
  get size(): number {
    return this.#rows.size;
  }

  /** Point lookup, O(log n). */
  get(partitionKey: string, rowKey: string): StoredRecord | undefined {
    return this.#rows.get(partitionKey, rowKey);
  }

  /** Inserts or replaces the entity with the record's keys. */
  put(record: StoredRecord): void {
    this.#rows.set(record);
  }

  /** Removes an entity; true if it existed. */
  delete(partitionKey: string, rowKey: string): boolean {
    return this.#rows.delete(partitionKey, rowKey);
  }

  /** Entities between two bounds in key order: O(log n) to find the start, then O(1) per entity. */
  *scan(low: KeyBound | undefined, high: KeyBound | undefined): Generator<StoredRecord, void, undefined> {
    for (const record of this.#rows.from(low?.key)) {
      if (
        low !== undefined &&
        !low.inclusive &&
        compareToComposite(record.partitionKey, record.rowKey, low.key) === 0
      )
        continue;
      if (high !== undefined) {
        const c = compareToComposite(record.partitionKey, record.rowKey, high.key);
        if (c > 0 || (!high.inclusive && c === 0)) return;
      }
      yield record;
    }
  }
}
