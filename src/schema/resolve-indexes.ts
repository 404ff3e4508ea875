import { SchemaError } from "../errors.js";
import type { FieldTypeLookup, KeyTemplate } from "../keys/key-template.js";
import { TableTemplate } from "../keys/table-template.js";
import { PROPERTY_NAME } from "../util/service-limits.js";
import type { ColumnModel, IndexModel } from "./entity-model.js";
import type { EntityOptions, IndexOptions } from "./entity-options.js";
import { assertNotEncrypted, assertTableName, parseTemplate } from "./template-checks.js";

/**
 * Resolves `@Entity({ indexes })` into index models: tables (fixed or per period), key templates,
 * projections; same-partition indexes need RowKey prefixes apart from the entity's and each other's.
 */
export function resolveIndexes(
  entity: string,
  options: EntityOptions,
  columnsByField: ReadonlyMap<string, ColumnModel>,
  fieldTypeIn: (what: string) => FieldTypeLookup,
  partitionKeySource: string,
  rowKeyOfEntity: KeyTemplate,
): Map<string, IndexModel> {
  const indexes = new Map<string, IndexModel>();
  // A blind-indexed column's place in an index key holds its blind value (hex text), never the plaintext.
  const keyFieldType =
    (what: string): FieldTypeLookup =>
    (field) =>
      columnsByField.get(field)?.blindIndex === undefined ? fieldTypeIn(what)(field) : "String";
  const rowKeyPrefixes = new Map<string, string>();
  for (const [indexName, index] of Object.entries(options.indexes ?? {})) {
    const what = `${entity}.indexes.${indexName}`;
    if (!PROPERTY_NAME.test(indexName)) throw new SchemaError(`${what}: index names are identifiers`);
    if (!index || typeof index !== "object") throw new SchemaError(`${what}: options are required`);
    const spec = index as IndexOptions;
    const table = spec.table ?? options.table;
    // A table per period for the copies too: `Logs{at:month}` (the entity's, by default) or another template.
    const tableTemplate = TableTemplate.isTemplate(table)
      ? TableTemplate.parse(String(table), fieldTypeIn(`${what}.table`), `${what}: table`)
      : undefined;
    if (!tableTemplate) assertTableName(table, `${what}: table`);
    // A list index of an entity kept in a table per period names each entity's period table in its entries (list-index.ts).
    const partitionKeyOfIndex = spec.partitionKey ?? partitionKeySource;
    // The entity's own PartitionKey (hash bucket included): each copy lands in its entity's bucket partition.
    const partitionKey = parseTemplate(
      partitionKeyOfIndex,
      keyFieldType(`${what}.partitionKey`),
      `${what}.partitionKey`,
      { allowHash: partitionKeyOfIndex === partitionKeySource },
    );
    const rowKey = parseTemplate(spec.rowKey, keyFieldType(`${what}.rowKey`), `${what}.rowKey`);
    assertNotEncrypted(columnsByField, partitionKey.fields, `${what}.partitionKey`, true);
    assertNotEncrypted(columnsByField, rowKey.fields, `${what}.rowKey`, true);
    const blindFields = [...new Set([...partitionKey.fields, ...rowKey.fields])].filter(
      (field) => columnsByField.get(field)?.blindIndex !== undefined,
    );
    if (spec.list && spec.project)
      throw new SchemaError(`${what}: a list index holds keys only; project does not apply`);
    for (const field of spec.project ?? []) {
      if (!columnsByField.has(field))
        throw new SchemaError(`${what}: project names unknown field '${field}'`);
    }
    if (spec.when !== undefined && typeof spec.when !== "function")
      throw new SchemaError(`${what}: when must be a function`);
    const intraPartition = table === options.table && partitionKey.source === partitionKeySource;
    if (intraPartition) {
      // Copies share the partition with the entity: their RowKeys must live in their own key space.
      const prefix = rowKey.literalPrefix;
      if (!prefix)
        throw new SchemaError(
          `${what}: a same-partition index needs a literal RowKey prefix (e.g. "email_{email}")`,
        );
      const entityPrefix = rowKeyOfEntity.literalPrefix;
      if (entityPrefix === "" || prefix.startsWith(entityPrefix) || entityPrefix.startsWith(prefix)) {
        throw new SchemaError(
          `${what}: RowKey prefix '${prefix}' overlaps the entity's own RowKey prefix '${entityPrefix}'; copies would mix with entities`,
        );
      }
      for (const [other, otherName] of rowKeyPrefixes) {
        if (prefix.startsWith(other) || other.startsWith(prefix)) {
          throw new SchemaError(
            `${what}: RowKey prefix '${prefix}' overlaps '${other}' of index ${otherName}`,
          );
        }
      }
      rowKeyPrefixes.set(prefix, indexName);
    }
    const unique = spec.list ? false : (spec.unique ?? true);
    const hashed = partitionKey.hashed?.field;
    if (unique && hashed !== undefined && !rowKey.fields.includes(hashed)) {
      // The service keeps a key unique within its partition only, and each bucket is a partition.
      throw new SchemaError(
        `${what}: a unique index with the entity's hash-bucketed partitionKey '${partitionKey.source}' would be unique per bucket only (keys are unique within a partition, and each bucket is one): put '${hashed}' in its rowKey, give it a partitionKey without the bucket (an index in another partition), or unique: false`,
      );
    }
    indexes.set(indexName, {
      name: indexName,
      table,
      ...(tableTemplate === undefined ? {} : { tableTemplate }),
      partitionKey,
      rowKey,
      intraPartition,
      unique,
      list: spec.list ?? false,
      project: spec.project,
      when: spec.when,
      ...(blindFields.length === 0 ? {} : { blindFields }),
    });
  }
  return indexes;
}
