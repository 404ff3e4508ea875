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
  entityTableTemplate: TableTemplate | undefined,
): Map<string, IndexModel> {
  const indexes = new Map<string, IndexModel>();
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
    if (spec.list && (tableTemplate || entityTableTemplate)) {
      // A list entry names its entities by PartitionKey and RowKey only: not which period's table holds them.
      throw new SchemaError(
        `${what}: a list index cannot ${entityTableTemplate ? `index an entity kept in a table per period ('${options.table}'): its entries name entities by keys only, not by their period's table` : `live in a table per period ('${String(table)}')`}; use a copy index (list: false)`,
      );
    }
    const partitionKey = parseTemplate(
      spec.partitionKey ?? partitionKeySource,
      fieldTypeIn(`${what}.partitionKey`),
      `${what}.partitionKey`,
    );
    const rowKey = parseTemplate(spec.rowKey, fieldTypeIn(`${what}.rowKey`), `${what}.rowKey`);
    assertNotEncrypted(columnsByField, partitionKey.fields, `${what}.partitionKey`);
    assertNotEncrypted(columnsByField, rowKey.fields, `${what}.rowKey`);
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
    indexes.set(indexName, {
      name: indexName,
      table,
      ...(tableTemplate === undefined ? {} : { tableTemplate }),
      partitionKey,
      rowKey,
      intraPartition,
      unique: spec.list ? false : (spec.unique ?? true),
      list: spec.list ?? false,
      project: spec.project,
      when: spec.when,
    });
  }
  return indexes;
}
