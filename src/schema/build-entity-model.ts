import { SchemaError } from "../errors.js";
import type { KeyFieldType } from "../keys/key-template.js";
import { TableTemplate } from "../keys/table-template.js";
import { compileEntityMapper } from "../serialization/entity-mapper.js";
import { ServiceLimits } from "../util/service-limits.js";
import type { ColumnType } from "../wire/column-type.js";
import { ENTITY_TYPE_PROPERTY, PROPERTY_BUDGET } from "../wire/system-properties.js";
import type { ColumnRecord } from "./column-record.js";
import type { ColumnModel, EntityClass, EntityModel } from "./entity-model.js";
import type { EntityOptions } from "./entity-options.js";
import { assertPropertyBudget, indexBookkeepingBytes } from "./property-budget.js";
import { resolveChangeFeed } from "./resolve-change-feed.js";
import { resolveColumn } from "./resolve-column.js";
import { resolveExpiry } from "./resolve-expiry.js";
import { resolveIndexes } from "./resolve-indexes.js";
import { resolveSummaries } from "./resolve-summaries.js";
import { schemaWarnings } from "./schema-warnings.js";
import { assertNotEncrypted, assertTableName, parseTemplate } from "./template-checks.js";
import { assertWideColumnCount, assertWideCombinations } from "./wide-entity-rules.js";

export { ENTITY_TYPE_PROPERTY, LIBRARY_PROPERTY_PREFIX } from "../wire/system-properties.js";

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

  const { columns, columnsByField, properties } = resolveColumns(name, records);
  const wide = resolveWide(name, options, properties, columns.length);
  const fieldTypeIn = keyFieldTypes(records, columnsByField);
  const { partitionKey, rowKey, tableTemplate } = resolveKeys(
    name,
    options,
    periodTable,
    columnsByField,
    fieldTypeIn,
  );
  const { type, version, upcast } = resolveVersioning(name, ctor, options);

  if (wide) assertWideCombinations(name, partitionKey, rowKey);
  const indexes = resolveIndexes(name, options, columnsByField, fieldTypeIn, partitionKey.source, rowKey);
  const expiry = resolveExpiry(
    { name, type, wide, partitionKey, rowKey, tableTemplate, fieldType: fieldTypeIn },
    options.expiresAt,
    columnsByField,
  );
  if (expiry) {
    // A copy must say when its entity expires, so index lookups can hide it too: projections carry the expiry.
    const field = expiry.expiry.field;
    for (const index of indexes.values()) {
      if (index.project && !index.project.includes(field))
        indexes.set(index.name, { ...index, project: [...index.project, field] });
    }
    indexes.set(expiry.index.name, expiry.index);
  }
  assertPropertyBudget(
    name,
    properties,
    columns,
    indexes,
    [...partitionKey.fields, ...rowKey.fields, ...(tableTemplate ? [tableTemplate.field] : [])],
    wide,
  );
  const summaries = resolveSummaries(name, options, columnsByField, rowKey, indexes, {
    table: options.table,
    periodTable: tableTemplate !== undefined,
    partitionKey,
    fieldType: fieldTypeIn,
  });
  const changeFeed = resolveChangeFeed(name, options, properties);
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
    ...(expiry === undefined ? {} : { expiry: expiry.expiry }),

    ...(changeFeed === undefined ? {} : { changeFeed }),
  };
  const bookkeepingBytes = indexBookkeepingBytes(indexes);
  return { ...partial, mapper: compileEntityMapper<T>({ ...partial, bookkeepingBytes }) };
}

/** The columns, by field, and how many properties they store; two fields stored as one property are refused. */
function resolveColumns(
  name: string,
  records: readonly ColumnRecord[],
): { columns: ColumnModel[]; columnsByField: Map<string, ColumnModel>; properties: number } {
  const columns = records.map((record) => resolveColumn(name, record));
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
    // A blind index keeps its value in one more property of the row.
    properties += column.properties.length + (column.blindIndex === undefined ? 0 : 1);
    columnsByField.set(column.field, column);
  }
  return { columns, columnsByField, properties };
}

/** Whether the entity is wide; an entity that is not must hold its properties in one row. */
function resolveWide(name: string, options: EntityOptions, properties: number, columnCount: number): boolean {
  const wide = options.wide ?? false;
  if (typeof wide !== "boolean") throw new SchemaError(`${name}: wide must be true or false`);
  // Every slot of a series is a property of its own.
  if (wide) assertWideColumnCount(name, properties);
  else if (properties + 1 > ServiceLimits.maxProperties) {
    const slots = properties === columnCount ? "" : ` (series count one per slot, a blind index one more)`;
    throw new SchemaError(
      `${name} has ${properties} column properties${slots}; an entity holds at most ${ServiceLimits.maxProperties} properties including '${ENTITY_TYPE_PROPERTY}' (the service's budget is ${PROPERTY_BUDGET} properties per entity including PartitionKey, RowKey and Timestamp)`,
    );
  }
  return wide;
}

/** Which key type a template field has (`what` names the template in errors). */
type FieldTypeIn = (what: string) => (field: string) => KeyFieldType | "unsupported" | undefined;

/** Which key type a template field has; a series is refused by name (it is many properties, not one value). */
function keyFieldTypes(
  records: readonly ColumnRecord[],
  columnsByField: ReadonlyMap<string, ColumnModel>,
): FieldTypeIn {
  // Fields whose type was inferred from `design:type` Number (a Double): named in key errors.
  const inferredFromNumber = new Set(
    records
      .filter((record) => record.options.type === undefined && record.designType === Number)
      .map((r) => r.field),
  );
  return (what) => (field) => {
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
}

/** The partition and row key templates and the period table's, none of them naming an encrypted field. */
function resolveKeys(
  name: string,
  options: EntityOptions,
  periodTable: boolean,
  columnsByField: ReadonlyMap<string, ColumnModel>,
  fieldTypeIn: FieldTypeIn,
) {
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
  return { partitionKey, rowKey, tableTemplate };
}

/** The discriminator stored in every row, the class's version and how older rows are upcast. */
function resolveVersioning(name: string, ctor: EntityClass<object>, options: EntityOptions) {
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
  return { type, version, upcast };
}
