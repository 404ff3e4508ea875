import { SchemaError } from "../errors.js";
import { PROPERTY_NAME, ServiceLimits } from "../util/service-limits.js";
import { COLUMN_TYPES, type ColumnType } from "../wire/column-type.js";
import { ENTITY_TYPE_PROPERTY, LIBRARY_PROPERTY_PREFIX } from "../wire/system-properties.js";
import { resolveBlindIndex } from "./blind-index-plan.js";
import type { ColumnRecord } from "./column-record.js";
import type { ColumnModel } from "./entity-model.js";
import type { ColumnOptions } from "./entity-options.js";
import { inferColumnType } from "./infer-column-type.js";

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

/** Resolves one `@Column` record into its column model: type, stored property name(s), flags; or a `SchemaError`. */
export function resolveColumn(entity: string, record: ColumnRecord): ColumnModel {
  const { field, options } = record;
  const type = resolveColumnType(entity, record);
  const property = resolvePropertyName(entity, field, options.name);
  const large = resolveStorageFlags(entity, field, options, type);
  const series = options.series === undefined ? undefined : seriesSlots(entity, record, property);
  if (series !== undefined) assertScalarSlots(entity, field, options, large);
  const blindIndex = resolveBlindIndex(`${entity}.${field}`, options.blindIndex, {
    type,
    property,
    encrypt: options.encrypt === true,
    large: large === true,
    series: series !== undefined,
  });
  const column = {
    field,
    property,
    type,
    ...(options.jsonClass ? { jsonClass: options.jsonClass } : {}),
    ...(options.encrypt ? { encrypted: true as const } : {}),
    ...(blindIndex ? { blindIndex } : {}),
    ...(large ? { large: true } : {}),
  };
  return series === undefined
    ? { ...column, properties: [property] }
    : { ...column, properties: series, series: series.length };
}

/** The column's type: given (one of the known types), or inferred from `design:type` where the dialect records it. */
function resolveColumnType(entity: string, record: ColumnRecord): ColumnType {
  const { field, options } = record;
  const type = options.type;
  if (type === undefined) {
    const inferred = inferColumnType(record.designType);
    if (inferred !== undefined) return inferred;
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
  if (!COLUMN_TYPES.includes(type)) {
    throw new SchemaError(
      `${entity}.${field}: unknown column type '${String(type)}' (expected one of ${COLUMN_TYPES.join(", ")})`,
    );
  }
  return type;
}

/** The stored property name (the field's by default): a valid name the service and SDK do not reserve. */
function resolvePropertyName(entity: string, field: string, name: string | undefined): string {
  const property = name ?? field;
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
  return property;
}

/** Checks `jsonClass`, `encrypt` and `large` against the type; returns `large`. */
function resolveStorageFlags(
  entity: string,
  field: string,
  options: ColumnOptions,
  type: ColumnType,
): boolean | undefined {
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
  return large;
}

/** Each slot of a series is one plain property: neither encrypted nor large. */
function assertScalarSlots(
  entity: string,
  field: string,
  options: ColumnOptions,
  large: boolean | undefined,
): void {
  if (options.encrypt) {
    // A sealed value is bound to one property name; per-slot sealing is not built.
    throw new SchemaError(
      `${entity}.${field}: a data series cannot be encrypted; encrypt a scalar or Json column`,
    );
  }
  if (large) {
    throw new SchemaError(`${entity}.${field}: a data series cannot be large; each slot is one property`);
  }
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
