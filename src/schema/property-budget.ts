import { SchemaError } from "../errors.js";
import { ServiceLimits } from "../util/service-limits.js";
import {
  COPY_ROW_PROPERTIES,
  INDEXED_ENTITY_ROW_PROPERTIES,
  PROPERTY_BUDGET,
} from "../wire/system-properties.js";
import type { ColumnModel, IndexModel } from "./entity-model.js";

/**
 * Refuses a definition whose rows can hold more properties than the service's budget (255 with
 * PartitionKey, RowKey and Timestamp) once tablekit's own are added: `EntityType` and `_tkIndexKeys`
 * on the entity row of an indexed entity; `EntityType`, `_tkIndex`, `_tkSourcePK`, `_tkSourceRK`
 * and `_tkStamp` on each index copy (its projected columns, key and period fields always included).
 */
export function assertPropertyBudget(
  name: string,
  properties: number,
  columns: readonly ColumnModel[],
  indexes: ReadonlyMap<string, IndexModel>,
  alwaysCopied: readonly string[],
  wide = false,
): void {
  const budget = ServiceLimits.maxProperties;
  const explain = `the service's budget is ${PROPERTY_BUDGET} properties per entity including PartitionKey, RowKey and Timestamp, so ${budget} others`;
  if (indexes.size === 0) return;
  const entityRow = properties + INDEXED_ENTITY_ROW_PROPERTIES.length;
  // A wide entity's properties are spread over its rows; its copies hold keys and key fields (copy-builder.ts).
  if (entityRow > budget && !wide) {
    throw new SchemaError(
      `${name}: its entity row holds ${entityRow} properties: ${properties} column properties and tablekit's ${INDEXED_ENTITY_ROW_PROPERTIES.join(", ")} (kept on every indexed entity); ${explain}. Remove ${entityRow - budget} column(s) or keep them in a companion entity`,
    );
  }
  for (const index of indexes.values()) {
    if (index.list) continue; // a list index's rows hold keys only
    const keyFields = wide ? [...index.partitionKey.fields, ...index.rowKey.fields] : [];
    const kept =
      index.project || wide ? new Set([...(index.project ?? []), ...alwaysCopied, ...keyFields]) : undefined;
    let copied = 0;
    for (const column of columns) {
      if (column.large) continue;
      if (!kept || kept.has(column.field))
        copied += column.properties.length + (column.blindIndex === undefined ? 0 : 1);
    }
    const copyRow = copied + COPY_ROW_PROPERTIES.length;
    if (copyRow > budget) {
      throw new SchemaError(
        `${name}.indexes.${index.name}: an index copy holds ${copyRow} properties: ${copied} column properties and tablekit's ${COPY_ROW_PROPERTIES.join(", ")}; ${explain}. Project fewer columns (indexes.${index.name}.project) or remove ${copyRow - budget}`,
      );
    }
  }
}

/**
 * The most bytes (by the service's entity size formula) the rows tablekit writes for an entity can
 * exceed its own row by: an index copy holds at most the entity's columns, but its own keys (up to
 * 1 KiB each), `EntityType`, `_tkIndex`, the entity's keys again (`_tkSourcePK`, `_tkSourceRK`)
 * and its stamp (`_tkStamp`); the entity row adds `_tkIndexKeys` (the JSON list of its copies' index, table and keys).
 */
export function indexBookkeepingBytes(indexes: ReadonlyMap<string, IndexModel>): number {
  if (indexes.size === 0) return 0;
  const key = ServiceLimits.maxKeyBytes; // bytes, 2 per UTF-16 unit
  const property = (name: string, valueBytes: number) => 8 + 2 * name.length + 4 + valueBytes;
  let copy = 0;
  let refsChars = 2;
  for (const index of indexes.values()) {
    // A JSON tuple ["index","table","pk","rk"], keys at most 512 units each, each doubled by escapes at worst.
    refsChars += 12 + index.name.length + 63 + 2 * (key / 2) * 2;
    if (index.list) continue;
    copy = Math.max(
      copy,
      2 * key +
        property("_tkIndex", 2 * index.name.length) +
        2 * property("_tkSourcePK", key) +
        // The stamp: a version's digest (45 characters) or a claim's intent id (34).
        property("_tkStamp", 2 * 45),
    );
  }
  return Math.max(copy, property("_tkIndexKeys", 2 * refsChars));
}
