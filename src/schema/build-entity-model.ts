import { SchemaError } from "../errors.js";
import { type KeyFieldType, KeyTemplate, type TemplateOptions } from "../keys/key-template.js";
import { TableTemplate } from "../keys/table-template.js";
import { compileEntityMapper } from "../serialization/entity-mapper.js";
import { MAX_WIDE_PARTS, WIDE_SEPARATOR } from "../serialization/wide-rows.js";
import { PROPERTY_NAME, ServiceLimits, TABLE_NAME } from "../util/service-limits.js";
import { COLUMN_TYPES, type ColumnType } from "../wire/column-type.js";
import {
  COPY_ROW_PROPERTIES,
  ENTITY_TYPE_PROPERTY,
  INDEXED_ENTITY_ROW_PROPERTIES,
  LIBRARY_PROPERTY_PREFIX,
  PROPERTY_BUDGET,
  WIDE_PART_PROPERTY,
} from "../wire/system-properties.js";
import type { ColumnRecord } from "./column-record.js";
import type { ColumnModel, EntityClass, EntityModel, IndexModel, SchemaWarning } from "./entity-model.js";
import type { EntityOptions, IndexOptions } from "./entity-options.js";
import { inferColumnType } from "./infer-column-type.js";
import { resolveSummaries } from "./resolve-summaries.js";

export { ENTITY_TYPE_PROPERTY, LIBRARY_PROPERTY_PREFIX } from "../wire/system-properties.js";

/** Names the service or the SDK reserve: a column stored under one of them would corrupt the row. */
const RESERVED_PROPERTIES = new Set([
  "PartitionKey",
  "RowKey",
  "Timestamp",
  "partitionKey",
  "rowKey",
  "timestamp",
  "etag",
  "ETag",
  ENTITY_TYPE_PROPERTY,
]);

const KEY_TYPES: ReadonlySet<ColumnType> = new Set(["String", "Guid", "Int32", "Int64", "DateTime"]);
const TYPE_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/** Resolves what the decorators recorded into a validated `EntityModel`; every mistake is a `SchemaError`. */
export function buildEntityModel<T extends object>(
  ctor: EntityClass<T>,
  options: EntityOptions,
  records: readonly ColumnRecord[],
): EntityModel<T> {
  const name = ctor.name || "(anonymous entity)";
  if (!options || typeof options !== "object") throw new SchemaError(`@Entity on ${name} needs options`);
  const periodTable = TableTemplate.isTemplate(options.table);
  if (!periodTable) assertTableName(options.table, `${name}: table`);

  const columns = records.map((record) => resolveColumn(name, record));
  // Fields whose type was inferred from `design:type` Number (a Double): named in key errors.
  const inferredFromNumber = new Set(
    records
      .filter((record) => record.options.type === undefined && record.designType === Number)
      .map((r) => r.field),
  );
  const columnsByField = new Map<string, ColumnModel>();
  const byProperty = new Map<string, ColumnModel>();
  let properties = 0;
  for (const column of columns) {
    for (const property of column.properties) {
      const clash = byProperty.get(property);
      if (clash) {
        throw new SchemaError(
          `${name}: fields '${clash.field}' and '${column.field}' are both stored as property '${property}'`,
        );
      }
      byProperty.set(property, column);
    }
    properties += column.properties.length;
    columnsByField.set(column.field, column);
  }
  const wide = options.wide ?? false;
  if (typeof wide !== "boolean") throw new SchemaError(`${name}: wide must be true or false`);
  // Every slot of a series is a property of its own.
  if (wide) assertWideColumnCount(name, properties);
  else if (properties + 1 > ServiceLimits.maxProperties) {
    const slots = properties === columns.length ? "" : ` (series count one per slot)`;
    throw new SchemaError(
      `${name} has ${properties} column properties${slots}; an entity holds at most ${ServiceLimits.maxProperties} properties including '${ENTITY_TYPE_PROPERTY}' (the service's budget is ${PROPERTY_BUDGET} properties per entity including PartitionKey, RowKey and Timestamp)`,
    );
  }

  // Which key type a template field has; a series is refused by name (it is many properties, not one value).
  const fieldTypeIn =
    (what: string) =>
    (field: string): KeyFieldType | "unsupported" | undefined => {
      const column = columnsByField.get(field);
      if (!column) return undefined;
      if (column.series !== undefined) {
        throw new SchemaError(
          `${what}: field '${field}' is a data series (series: ${column.series}), stored as ${column.series} properties; ` +
            "a series cannot be part of a key, index or table template: use a scalar column",
        );
      }
      if (column.large) {
        // By design: a large value lives in a blob, outside the row, so no key can be built from it.
        throw new SchemaError(
          `${what}: field '${field}' is a large column (its value is kept in a blob, outside the row); it cannot be part of a key, index key or table template`,
        );
      }
      if (KEY_TYPES.has(column.type)) return column.type as KeyFieldType;
      if (inferredFromNumber.has(field)) {
        // Legacy decorator metadata says only `Number`, and a number is a Double: not a key type.
        throw new SchemaError(
          `${what}: field '${field}' is a \`number\`, which @Column() without a type infers as Double, and a Double ` +
            `cannot be part of a key (keys hold String, Guid, Int32, Int64 and DateTime fields). Key it as an integer: ` +
            `@Column({ type: "Int32" }) ${field}!: number (or "Int64" with a bigint field)`,
        );
      }
      return "unsupported";
    };
  const partitionKey = parseTemplate(
    options.partitionKey,
    fieldTypeIn(`${name}.partitionKey`),
    `${name}.partitionKey`,
    { allowHash: true },
  );
  const rowKey = parseTemplate(options.rowKey, fieldTypeIn(`${name}.rowKey`), `${name}.rowKey`);
  const tableTemplate = periodTable
    ? TableTemplate.parse(options.table, fieldTypeIn(`${name}: table`), `${name}: table`)
    : undefined;
  assertNotEncrypted(columnsByField, partitionKey.fields, `${name}.partitionKey`);
  assertNotEncrypted(columnsByField, rowKey.fields, `${name}.rowKey`);
  if (tableTemplate) assertNotEncrypted(columnsByField, [tableTemplate.field], `${name}: table`);

  const type = options.type ?? ctor.name;
  if (!type || !TYPE_NAME.test(type)) {
    throw new SchemaError(
      `${name}: type '${type}' is not a valid discriminator (letters, digits, _ . -; set @Entity({ type }) where class names are minified)`,
    );
  }
  const version = options.version ?? 1;
  if (!Number.isSafeInteger(version) || version < 1) {
    throw new SchemaError(`${name}: version must be a positive integer, got ${String(version)}`);
  }
  const upcast = options.upcast;
  if (upcast !== undefined && typeof upcast !== "function") {
    throw new SchemaError(`${name}: upcast must be a function (properties, fromVersion) => properties`);
  }
  if (upcast !== undefined && version === 1) {
    throw new SchemaError(
      `${name}: upcast upgrades rows of versions older than the class's, but version is 1; set @Entity({ version: 2, upcast })`,
    );
  }

  if (wide) assertWideCombinations(name, options, partitionKey, rowKey);
  const indexes = resolveIndexes(name, options, columnsByField, fieldTypeIn, partitionKey.source, rowKey);
  assertPropertyBudget(name, properties, columns, indexes, [
    ...partitionKey.fields,
    ...rowKey.fields,
    ...(tableTemplate ? [tableTemplate.field] : []),
  ]);
  const summaries = resolveSummaries(name, options, columnsByField, rowKey, indexes, {
    table: options.table,
    periodTable: tableTemplate !== undefined,
    partitionKey,
    fieldType: fieldTypeIn,
  });
  const partial = {
    warnings: schemaWarnings(name, partitionKey),
    ctor,
    name,
    table: options.table,
    ...(tableTemplate === undefined ? {} : { tableTemplate }),
    type,
    version,
    ...(upcast === undefined ? {} : { upcast }),
    partitionKey,
    rowKey,
    wide,
    columns,
    columnsByField,
    indexes,
    summaries,
  };
  const bookkeepingBytes = indexBookkeepingBytes(indexes);
  return { ...partial, mapper: compileEntityMapper<T>({ ...partial, bookkeepingBytes }) };
}

/**
 * Refuses a definition whose rows can hold more properties than the service's budget (255 with
 * PartitionKey, RowKey and Timestamp) once tablekit's own are added: `EntityType` and `_tkIndexKeys`
 * on the entity row of an indexed entity; `EntityType`, `_tkIndex`, `_tkSourcePK` and `_tkSourceRK`
 * on each index copy (its projected columns, key and period fields always included).
 */
function assertPropertyBudget(
  name: string,
  properties: number,
  columns: readonly ColumnModel[],
  indexes: ReadonlyMap<string, IndexModel>,
  alwaysCopied: readonly string[],
): void {
  const budget = ServiceLimits.maxProperties;
  const explain = `the service's budget is ${PROPERTY_BUDGET} properties per entity including PartitionKey, RowKey and Timestamp, so ${budget} others`;
  if (indexes.size === 0) return;
  const entityRow = properties + INDEXED_ENTITY_ROW_PROPERTIES.length;
  if (entityRow > budget) {
    throw new SchemaError(
      `${name}: its entity row holds ${entityRow} properties: ${properties} column properties and tablekit's ${INDEXED_ENTITY_ROW_PROPERTIES.join(", ")} (kept on every indexed entity); ${explain}. Remove ${entityRow - budget} column(s) or keep them in a companion entity`,
    );
  }
  for (const index of indexes.values()) {
    if (index.list) continue; // a list index's rows hold keys only
    const kept = index.project ? new Set([...index.project, ...alwaysCopied]) : undefined;
    let copied = 0;
    for (const column of columns) {
      if (column.large) continue;
      if (!kept || kept.has(column.field)) copied += column.properties.length;
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
 * 1 KiB each), `EntityType`, `_tkIndex` and the entity's keys again (`_tkSourcePK`, `_tkSourceRK`);
 * the entity row adds `_tkIndexKeys` (the JSON list of its copies' index, table and keys).
 */
function indexBookkeepingBytes(indexes: ReadonlyMap<string, IndexModel>): number {
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
      2 * key + property("_tkIndex", 2 * index.name.length) + 2 * property("_tkSourcePK", key),
    );
  }
  return Math.max(copy, property("_tkIndexKeys", 2 * refsChars));
}

/** A wide entity's columns must fit its largest form: 100 rows (one transaction) of 250 columns each. */
function assertWideColumnCount(entity: string, count: number): void {
  const perRow = ServiceLimits.maxProperties - 2;
  const max = MAX_WIDE_PARTS * perRow;
  if (count <= max) return;
  throw new SchemaError(
    `${entity} has ${count} columns; a wide entity holds at most ${max} (${MAX_WIDE_PARTS} rows, one entity group transaction, of ${perRow} columns besides '${ENTITY_TYPE_PROPERTY}' and '${WIDE_PART_PROPERTY}')`,
  );
}

/**
 * What a wide entity cannot be combined with, and why: its columns are spread over several rows,
 * so anything that reads or writes one row as the whole entity would see a fragment.
 */
function assertWideCombinations(
  entity: string,
  options: EntityOptions,
  partitionKey: KeyTemplate,
  rowKey: KeyTemplate,
): void {
  if (Object.keys(options.indexes ?? {}).length > 0) {
    throw new SchemaError(
      `${entity}: indexes are not supported on wide entities: an index copy is one row holding the entity's columns, and a wide entity's columns do not fit in one row`,
    );
  }
  if (rowKey.source.includes(WIDE_SEPARATOR)) {
    throw new SchemaError(
      `${entity}: a wide entity's rowKey '${rowKey.source}' may not contain a space: the space separates the RowKey from each row's part number`,
    );
  }
  const hashed = partitionKey.hashed?.field;
  if (hashed !== undefined && rowKey.fields[0] !== hashed) {
    throw new SchemaError(
      `${entity}: a wide entity with the hashed partition field '${hashed}' needs it as the first field of its rowKey: a find would otherwise filter on the column, which only one of the entity's rows holds`,
    );
  }
}

/**
 * A PartitionKey that starts with an ascending time puts every new entity in the newest partition: one
 * hot partition takes all writes (the design guide's prepend/append anti-pattern).
 */
function schemaWarnings(entity: string, partitionKey: KeyTemplate): SchemaWarning[] {
  const descending = partitionKey.leadingDescendingTime;
  if (descending !== undefined) {
    return [
      {
        rule: "prepend-only-partition",
        message:
          `${entity}: the partitionKey '${partitionKey.source}' begins with the descending time '${descending}' (inverted ` +
          "ticks), so every new entity goes to the lowest partition and one server takes all writes (the " +
          "prepend-only, or prepend/append, anti-pattern; the service's per-partition target is 2,000 entities " +
          `per second). Spread writes over hash buckets: partitionKey "{someId:hash:16}" with '${descending}' at ` +
          "the start of the rowKey; find() without the hashed field then reads every bucket, merged in RowKey order",
      },
    ];
  }
  const field = partitionKey.leadingAscendingTime;
  if (field === undefined) return [];
  return [
    {
      rule: "append-only-partition",
      message:
        `${entity}: the partitionKey '${partitionKey.source}' begins with the ascending time '${field}', so every ` +
        "new entity goes to the newest partition and one server takes all writes (the append-only, or " +
        "prepend/append, anti-pattern; the service's per-partition target is 2,000 entities per second). " +
        `Spread writes over hash buckets: partitionKey "{someId:hash:16}" with '${field}' at the start of the ` +
        "rowKey; find() without the hashed field then reads every bucket, merged in RowKey order",
    },
  ];
}

function resolveColumn(entity: string, record: ColumnRecord): ColumnModel {
  const { field, options } = record;
  let type = options.type;
  if (type === undefined) {
    type = inferColumnType(record.designType);
    if (type === undefined) {
      // Only tsc's experimentalDecorators + emitDecoratorMetadata records field types at run time.
      const why =
        record.dialect === "standard"
          ? "standard decorators carry no type information"
          : "no design:type metadata: enable emitDecoratorMetadata in tsconfig.json (tsx and esbuild do not emit it)";
      throw new SchemaError(
        `${entity}.${field}: the column type cannot be inferred (${why}). ` +
          `Give it explicitly: @Column({ type: "String" | "Int32" | "Int64" | "Double" | "Boolean" | "DateTime" | "Guid" | "Binary" | "Json" })`,
      );
    }
  } else if (!COLUMN_TYPES.includes(type)) {
    throw new SchemaError(
      `${entity}.${field}: unknown column type '${String(type)}' (expected one of ${COLUMN_TYPES.join(", ")})`,
    );
  }
  const property = options.name ?? field;
  if (!PROPERTY_NAME.test(property) || property.length > ServiceLimits.maxPropertyNameLength) {
    throw new SchemaError(
      `${entity}.${field}: '${property}' is not a valid property name (a letter or _ then letters, digits or _, at most ${ServiceLimits.maxPropertyNameLength} characters); set @Column({ name })`,
    );
  }
  if (RESERVED_PROPERTIES.has(property) || property.startsWith(LIBRARY_PROPERTY_PREFIX)) {
    throw new SchemaError(
      `${entity}.${field}: property name '${property}' is reserved; set @Column({ name }) to store it under another name`,
    );
  }
  if (options.jsonClass !== undefined && (type !== "Json" || typeof options.jsonClass !== "function")) {
    throw new SchemaError(`${entity}.${field}: jsonClass needs type "Json" and a class`);
  }
  if (options.encrypt !== undefined && typeof options.encrypt !== "boolean") {
    throw new SchemaError(`${entity}.${field}: encrypt must be true or false`);
  }
  const large = options.large;
  if (large !== undefined && typeof large !== "boolean") {
    throw new SchemaError(`${entity}.${field}: large must be true or false`);
  }
  if (large && type !== "Binary" && type !== "Json" && type !== "String") {
    throw new SchemaError(
      `${entity}.${field}: large values are "Binary", "Json" or "String" columns, not "${type}"`,
    );
  }
  const series = options.series === undefined ? undefined : seriesSlots(entity, record, property);
  if (series !== undefined && options.encrypt) {
    // A sealed value is bound to one property name; per-slot sealing is not built.
    throw new SchemaError(
      `${entity}.${field}: a data series cannot be encrypted; encrypt a scalar or Json column`,
    );
  }
  if (series !== undefined && large) {
    throw new SchemaError(`${entity}.${field}: a data series cannot be large; each slot is one property`);
  }
  const column = {
    field,
    property,
    type,
    ...(options.jsonClass ? { jsonClass: options.jsonClass } : {}),
    ...(options.encrypt ? { encrypted: true as const } : {}),
    ...(large ? { large: true } : {}),
  };
  return series === undefined
    ? { ...column, properties: [property] }
    : { ...column, properties: series, series: series.length };
}

/** The most slots a series can have: every property of an entity but its discriminator. */
const MAX_SERIES = ServiceLimits.maxProperties - 1;

/**
 * The stored names of a series' slots: the prefix plus the slot number zero-padded to the width of
 * the last one (`hourly00` … `hourly23`), so the names sort in slot order.
 */
function seriesSlots(entity: string, record: ColumnRecord, prefix: string): string[] {
  const { field, options } = record;
  const count = options.series;
  if (typeof count !== "number" || !Number.isInteger(count) || count < 1 || count > MAX_SERIES) {
    throw new SchemaError(
      `${entity}.${field}: series must be an integer from 1 to ${MAX_SERIES} (one property per slot, and an entity holds at most ${ServiceLimits.maxProperties} properties), got ${String(count)}`,
    );
  }
  if (options.type === undefined) {
    // design:type of an array field is Array: it says nothing about the slots' type.
    throw new SchemaError(
      `${entity}.${field}: a series needs its slots' type: @Column({ type: "Int32", series: ${count} })`,
    );
  }
  const width = String(count - 1).length;
  const last = `${prefix}${String(count - 1).padStart(width, "0")}`;
  if (last.length > ServiceLimits.maxPropertyNameLength) {
    throw new SchemaError(
      `${entity}.${field}: slot property '${last}' is longer than ${ServiceLimits.maxPropertyNameLength} characters; set a shorter @Column({ name })`,
    );
  }
  return Array.from({ length: count }, (_, slot) => `${prefix}${String(slot).padStart(width, "0")}`);
}

/**
 * An encrypted value is stored as ciphertext: it cannot form a key (the key would hold the plaintext,
 * and could not be ordered or found) nor be compared by the service.
 */
function assertNotEncrypted(
  columnsByField: ReadonlyMap<string, ColumnModel>,
  fields: readonly string[],
  what: string,
): void {
  for (const field of fields) {
    if (columnsByField.get(field)?.encrypted) {
      throw new SchemaError(
        `${what} uses the encrypted column '${field}': keys are stored in clear and compared by the service; keep encrypted columns out of key templates`,
      );
    }
  }
}

function parseTemplate(
  template: unknown,
  fieldType: (field: string) => KeyFieldType | "unsupported" | undefined,
  what: string,
  options: TemplateOptions = {},
): KeyTemplate {
  if (typeof template !== "string") throw new SchemaError(`${what}: a key template string is required`);
  return KeyTemplate.parse(template, fieldType, what, options);
}

function assertTableName(table: unknown, what: string): asserts table is string {
  if (typeof table !== "string" || !TABLE_NAME.test(table) || table.toLowerCase() === "tables") {
    throw new SchemaError(
      `${what} '${String(table)}' is not a valid table name (3-63 letters or digits, starting with a letter; 'tables' is reserved)`,
    );
  }
}

function resolveIndexes(
  entity: string,
  options: EntityOptions,
  columnsByField: ReadonlyMap<string, ColumnModel>,
  fieldTypeIn: (what: string) => (field: string) => KeyFieldType | "unsupported" | undefined,
  partitionKeySource: string,
  rowKeyOfEntity: KeyTemplate,
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
    const partitionKeyOfIndex = spec.partitionKey ?? partitionKeySource;
    // The entity's own PartitionKey (hash bucket included): each copy lands in its entity's bucket partition.
    const partitionKey = parseTemplate(
      partitionKeyOfIndex,
      fieldTypeIn(`${what}.partitionKey`),
      `${what}.partitionKey`,
      { allowHash: partitionKeyOfIndex === partitionKeySource },
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
