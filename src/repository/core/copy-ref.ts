import { SchemaError } from "../../errors.js";
import type { EntityModel, IndexModel } from "../../schema/entity-model.js";
import type { WireEntity } from "../../wire/wire-entity.js";
import { indexKeyValues } from "./blind-keys.js";
import { keepsCopies } from "./entity-features.js";
import type { BlindIndexing, TableNaming } from "./requests.js";

export { COPY_INDEX_PROPERTY } from "../../wire/system-properties.js";
/** The PartitionKey and RowKey of the entity a copy belongs to. */
export const COPY_SOURCE_PK_PROPERTY = "_tkSourcePK";
export const COPY_SOURCE_RK_PROPERTY = "_tkSourceRK";
/** On an entity row: the keys of every copy it has, so no read is needed to find stale ones. */
export const COPY_REFS_PROPERTY = "_tkIndexKeys";

/** Names one index copy: its index, physical table and keys. */
export interface CopyRef {
  index: string;
  table: string;
  partitionKey: string;
  rowKey: string;
}

/**
 * The copies an entity should have now: one per index whose `when` accepts it. `naming` names the
 * tables, and gives the blind values an index key holds for its blind-indexed columns (blind-keys.ts).
 */
export function deriveCopyRefs<T extends object>(
  model: EntityModel<T>,
  entity: T,
  naming: TableNaming & Partial<BlindIndexing>,
  lenient = false,
): CopyRef[] {
  const refs: CopyRef[] = [];
  const values = entity as Record<string, unknown>;
  for (const index of model.indexes.values()) {
    if (index.when && !index.when(entity as never)) continue;
    try {
      const keyValues = indexKeyValues(model, index, values, naming.blindIndex);
      refs.push({
        index: index.name,
        table: naming.tableName(index.tableTemplate ? index.tableTemplate.nameOf(values) : index.table),
        partitionKey: index.partitionKey.encode(keyValues, "PartitionKey"),
        rowKey: index.rowKey.encode(keyValues, "RowKey"),
      });
    } catch (error) {
      // Writes must have encodable index values; a row read back (e.g. written by another client,
      // or before the index existed) simply has no copy for a value that cannot be a key.
      if (!lenient) throw error;
    }
  }
  return refs;
}

/** True when two refs name the same physical row. */
export function sameRow(a: CopyRef, b: CopyRef): boolean {
  return a.table === b.table && a.partitionKey === b.partitionKey && a.rowKey === b.rowKey;
}

/** A stable text key for sets of refs. */
export function refKey(ref: CopyRef): string {
  return `${ref.table}\u0000${ref.partitionKey}\u0000${ref.rowKey}`;
}

/** The entity row as written: with the list of its copies when its class keeps copies (`keepsCopies`). */
export function withCopyRefs(
  model: EntityModel<object>,
  wire: WireEntity,
  refs: readonly CopyRef[],
): WireEntity {
  return keepsCopies(model) ? { ...wire, [COPY_REFS_PROPERTY]: encodeCopyRefs(refs) } : wire;
}

/** Serialises refs for the entity row (compact: [index, table, pk, rk] tuples). */
export function encodeCopyRefs(refs: readonly CopyRef[]): string {
  return JSON.stringify(refs.map((r) => [r.index, r.table, r.partitionKey, r.rowKey]));
}

/** Parses what `encodeCopyRefs` wrote; anything unreadable yields undefined (unknown state). */
export function decodeCopyRefs(text: unknown): CopyRef[] | undefined {
  if (typeof text !== "string") return undefined;
  try {
    const tuples = JSON.parse(text) as unknown;
    if (!Array.isArray(tuples)) return undefined;
    return tuples.map((t) => {
      const [index, table, partitionKey, rowKey] = t as string[];
      return {
        index: String(index),
        table: String(table),
        partitionKey: String(partitionKey),
        rowKey: String(rowKey),
      };
    });
  } catch {
    return undefined;
  }
}

/** Whether a copy of this index lives in the entity's own table and partition (kept atomic in one EGT). */
export function isLocal(ref: CopyRef, entityTable: string, entityPartitionKey: string): boolean {
  return ref.table === entityTable && ref.partitionKey === entityPartitionKey;
}

/** The index model a ref belongs to. */
export function indexOf<T extends object>(model: EntityModel<T>, ref: CopyRef): IndexModel {
  const index = model.indexes.get(ref.index);
  if (!index)
    throw new SchemaError(
      `${model.name} has no index '${ref.index}' (a copy or intent written by another version of the class)`,
    );
  return index;
}
