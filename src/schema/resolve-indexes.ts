import { SchemaError } from "../errors.js";
import type { FieldTypeLookup, KeyTemplate } from "../keys/key-template.js";
import { TableTemplate } from "../keys/table-template.js";
import { PROPERTY_NAME } from "../util/service-limits.js";
import type { ColumnModel, IndexModel } from "./entity-model.js";
import type { EntityOptions, IndexOptions } from "./entity-options.js";
import { assertNotEncrypted, assertTableName, parseTemplate } from "./template-checks.js";

/** What every index of one entity is resolved against. */
interface IndexContext {
  readonly options: EntityOptions;
  readonly columnsByField: ReadonlyMap<string, ColumnModel>;
  readonly fieldTypeIn: (what: string) => FieldTypeLookup;
  /** The field types of index keys: a blind-indexed column counts as a String there. */
  readonly keyFieldType: (what: string) => FieldTypeLookup;
  readonly partitionKeySource: string;
  readonly rowKeyOfEntity: KeyTemplate;
  /** The literal RowKey prefixes of the same-partition indexes resolved so far, with their index's name. */
  readonly rowKeyPrefixes: Map<string, string>;
}

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
  const context: IndexContext = {
    options,
    columnsByField,
    fieldTypeIn,
    keyFieldType: indexKeyFieldType(columnsByField, fieldTypeIn),
    partitionKeySource,
    rowKeyOfEntity,
    rowKeyPrefixes: new Map(),
  };
  for (const [indexName, index] of Object.entries(options.indexes ?? {})) {
    const what = `${entity}.indexes.${indexName}`;
    if (!PROPERTY_NAME.test(indexName)) throw new SchemaError(`${what}: index names are identifiers`);
    if (!index || typeof index !== "object") throw new SchemaError(`${what}: options are required`);
    indexes.set(indexName, resolveIndex(what, indexName, index as IndexOptions, context));
  }
  return indexes;
}

/** A blind-indexed column's place in an index key holds its blind value (hex text), never the plaintext. */
function indexKeyFieldType(
  columnsByField: ReadonlyMap<string, ColumnModel>,
  fieldTypeIn: (what: string) => FieldTypeLookup,
): (what: string) => FieldTypeLookup {
  return (what) => (field) =>
    columnsByField.get(field)?.blindIndex === undefined ? fieldTypeIn(what)(field) : "String";
}

/** One index's model, its options checked in a fixed order: table, keys, options, key space, uniqueness. */
function resolveIndex(
  what: string,
  indexName: string,
  spec: IndexOptions,
  context: IndexContext,
): IndexModel {
  const { table, tableTemplate } = resolveIndexTable(what, spec, context);
  const { partitionKey, rowKey, blindFields } = resolveIndexKeys(what, spec, context);
  assertIndexOptions(what, spec, context.columnsByField);
  const intraPartition =
    table === context.options.table && partitionKey.source === context.partitionKeySource;
  if (intraPartition) claimRowKeyPrefix(what, indexName, rowKey, context);
  const unique = spec.list ? false : (spec.unique ?? true);
  if (unique) assertUniqueAcrossBuckets(what, partitionKey, rowKey);
  return {
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
  };
}

/** The index's table: the entity's by default, a fixed name, or a table per period. */
function resolveIndexTable(
  what: string,
  spec: IndexOptions,
  context: IndexContext,
): { table: string; tableTemplate: TableTemplate | undefined } {
  const table = spec.table ?? context.options.table;
  // A table per period for the copies too: `Logs{at:month}` (the entity's, by default) or another template.
  const tableTemplate = TableTemplate.isTemplate(table)
    ? TableTemplate.parse(String(table), context.fieldTypeIn(`${what}.table`), `${what}: table`)
    : undefined;
  if (!tableTemplate) assertTableName(table, `${what}: table`);
  return { table, tableTemplate };
}

/** The index's key templates (no encrypted column but a blind-indexed one), and the blind-indexed fields they use. */
function resolveIndexKeys(
  what: string,
  spec: IndexOptions,
  context: IndexContext,
): { partitionKey: KeyTemplate; rowKey: KeyTemplate; blindFields: string[] } {
  const { columnsByField, keyFieldType, partitionKeySource } = context;
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
  return { partitionKey, rowKey, blindFields };
}

/** `project` names known fields (and not on a list index); `when` is a function. */
function assertIndexOptions(
  what: string,
  spec: IndexOptions,
  columnsByField: ReadonlyMap<string, ColumnModel>,
): void {
  if (spec.list && spec.project)
    throw new SchemaError(`${what}: a list index holds keys only; project does not apply`);
  for (const field of spec.project ?? []) {
    if (!columnsByField.has(field)) throw new SchemaError(`${what}: project names unknown field '${field}'`);
  }
  if (spec.when !== undefined && typeof spec.when !== "function")
    throw new SchemaError(`${what}: when must be a function`);
}

/**
 * Copies that share the partition with the entity: their RowKeys must live in their own key space, a
 * literal prefix apart from the entity's and from every other same-partition index's.
 */
function claimRowKeyPrefix(
  what: string,
  indexName: string,
  rowKey: KeyTemplate,
  context: IndexContext,
): void {
  const prefix = rowKey.literalPrefix;
  if (!prefix)
    throw new SchemaError(
      `${what}: a same-partition index needs a literal RowKey prefix (e.g. "email_{email}")`,
    );
  const entityPrefix = context.rowKeyOfEntity.literalPrefix;
  if (entityPrefix === "" || prefix.startsWith(entityPrefix) || entityPrefix.startsWith(prefix)) {
    throw new SchemaError(
      `${what}: RowKey prefix '${prefix}' overlaps the entity's own RowKey prefix '${entityPrefix}'; copies would mix with entities`,
    );
  }
  for (const [other, otherName] of context.rowKeyPrefixes) {
    if (prefix.startsWith(other) || other.startsWith(prefix)) {
      throw new SchemaError(`${what}: RowKey prefix '${prefix}' overlaps '${other}' of index ${otherName}`);
    }
  }
  context.rowKeyPrefixes.set(prefix, indexName);
}

/** The service keeps a key unique within its partition only, and each bucket is a partition. */
function assertUniqueAcrossBuckets(what: string, partitionKey: KeyTemplate, rowKey: KeyTemplate): void {
  const hashed = partitionKey.hashed?.field;
  if (hashed !== undefined && !rowKey.fields.includes(hashed)) {
    throw new SchemaError(
      `${what}: a unique index with the entity's hash-bucketed partitionKey '${partitionKey.source}' would be unique per bucket only (keys are unique within a partition, and each bucket is one): put '${hashed}' in its rowKey, give it a partitionKey without the bucket (an index in another partition), or unique: false`,
    );
  }
}
