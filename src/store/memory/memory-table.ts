import { createOrderedMap, type OrderedMap } from "./btree.js";
import type { EntityRecord } from "./typed-entity.js";

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

/** One table: its entities in a B+ tree ordered by (PartitionKey, RowKey), the table's only index. */
export class MemoryTable {
  /** The name as created (table names are case-insensitive but keep their case). */
  readonly name: string;
  readonly #rows: OrderedMap<EntityRecord> = createOrderedMap<EntityRecord>();

  constructor(name: string) {
    this.name = name;
  }

  /** Number of entities. */
  get size(): number {
    return this.#rows.size;
  }

  /** Point lookup, O(log n). */
  get(partitionKey: string, rowKey: string): EntityRecord | undefined {
    return this.#rows.get(compositeKey(partitionKey, rowKey));
  }

  /** Inserts or replaces the entity with the record's keys. */
  put(record: EntityRecord): void {
    this.#rows.set(compositeKey(record.partitionKey, record.rowKey), record);
  }

  /** Removes an entity; true if it existed. */
  delete(partitionKey: string, rowKey: string): boolean {
    return this.#rows.delete(compositeKey(partitionKey, rowKey));
  }

  /** Entities between two bounds in key order: O(log n) to find the start, then O(1) per entity. */
  *scan(low: KeyBound | undefined, high: KeyBound | undefined): Generator<EntityRecord, void, undefined> {
    for (const [key, record] of this.#rows.entries(low?.key)) {
      if (low !== undefined && !low.inclusive && key === low.key) continue;
      if (high !== undefined && (key > high.key || (!high.inclusive && key === high.key))) return;
      yield record;
    }
  }
}
