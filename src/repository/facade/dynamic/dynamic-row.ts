import { ValidationError } from "../../../errors.js";
import type { EdmType, StoredEntity, WireEntity, WireValue } from "../../../store/table-store.js";
import { propertyValueBytes } from "../../../util/entity-size.js";
import { assertValidKey } from "../../../util/key-rules.js";
import { PROPERTY_NAME, ServiceLimits } from "../../../util/service-limits.js";
import { EDM_TYPES } from "../../../wire/wire-entity.js";

/**
 * A row of `db.dynamic(table)`: its keys and its properties as typed wire values. Written: `string`,
 * `boolean`, a `number` (Int32 when a 32-bit integer, else Double), `bigint` (Int64), `Date`
 * (DateTime), `Uint8Array` (Binary), or `{ type, value }` for any EDM type (e.g.
 * `{ type: "Guid", value: "…" }`, `{ type: "Double", value: 1 }`). Read: the same, with Int32 and
 * Double as `number`, Int64 as `bigint` and Guid as `{ type: "Guid", value }`. The ETag and
 * Timestamp are not properties: `etagOf(row)` and `timestampOf(row)` give them.
 */
export interface DynamicRow {
  partitionKey: string;
  rowKey: string;
  [property: string]: WireValue | undefined;
}

// Names the service or the SDK keep for itself: writing them would be refused or silently dropped.
const RESERVED = new Set(["PartitionKey", "RowKey", "Timestamp", "etag", "timestamp"]);
const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const INTEGER = /^[+-]?\d+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The keys of a dynamic row, checked against the service's key rules. */
export function checkRowKeys(partitionKey: unknown, rowKey: unknown): void {
  assertValidKey("PartitionKey", partitionKey as string, "partitionKey");
  assertValidKey("RowKey", rowKey as string, "rowKey");
}

/**
 * A dynamic row as the wire entity to send, after checking it against the service's rules (keys,
 * property names, values, 252 properties, 1 MiB by the service's size formula): bad input is a
 * `ValidationError` before any request. `undefined` and `null` properties are left out (the
 * service ignores null properties).
 */
export function rowToWire(row: DynamicRow): WireEntity {
  if (row === null || typeof row !== "object" || Array.isArray(row)) {
    throw new ValidationError(
      "row",
      "a dynamic row must be an object { partitionKey, rowKey, ...properties }",
      {
        field: "row",
      },
    );
  }
  checkRowKeys(row.partitionKey, row.rowKey);
  const out: WireEntity = { partitionKey: row.partitionKey, rowKey: row.rowKey };
  let size = 4 + (row.partitionKey.length + row.rowKey.length) * 2;
  let count = 0;
  for (const name of Object.keys(row)) {
    if (name === "partitionKey" || name === "rowKey") continue;
    const value = row[name];
    if (value === undefined || value === null) continue;
    checkPropertyName(name);
    size += 8 + name.length * 2 + valueBytes(name, value);
    count++;
    Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
  }
  if (count > ServiceLimits.maxProperties) {
    throw new ValidationError(
      "property-count",
      `the row has ${count} properties; the service allows at most ${ServiceLimits.maxProperties}`,
    );
  }
  if (size > ServiceLimits.maxEntityBytes) {
    throw new ValidationError(
      "entity-size",
      `the row is ${size} bytes; the service allows at most ${ServiceLimits.maxEntityBytes} bytes (1 MiB)`,
    );
  }
  return out;
}

/** A stored entity as a dynamic row: its keys and properties (the ETag and Timestamp are tracked apart). */
export function storedToRow(stored: StoredEntity): DynamicRow {
  const row: DynamicRow = { partitionKey: stored.partitionKey, rowKey: stored.rowKey };
  for (const name of Object.keys(stored)) {
    if (name === "partitionKey" || name === "rowKey" || name === "etag" || name === "timestamp") continue;
    const raw = stored[name];
    // A Buffer (the Azure SDK's Binary) is shown as the plain Uint8Array every store documents.
    const value =
      raw instanceof Uint8Array && raw.constructor !== Uint8Array
        ? new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength)
        : raw;
    Object.defineProperty(row, name, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return row;
}

function checkPropertyName(name: string): void {
  if (name.length > ServiceLimits.maxPropertyNameLength || !PROPERTY_NAME.test(name) || RESERVED.has(name)) {
    throw new ValidationError(
      "property-name",
      `'${name.slice(0, 60)}' is no valid property name: a letter or '_', then letters, digits or '_', at most ${ServiceLimits.maxPropertyNameLength} characters, not ${[...RESERVED].join(", ")}`,
      { field: name },
    );
  }
}

/** Bytes the value counts for in the service's size formula, after checking it fits its EDM type. */
function valueBytes(name: string, value: WireValue): number {
  switch (typeof value) {
    case "string":
      return stringBytes(name, value);
    case "boolean":
      return propertyValueBytes("Boolean", 0);
    case "number":
      return Number.isInteger(value) && value >= ServiceLimits.minInt32 && value <= ServiceLimits.maxInt32
        ? propertyValueBytes("Int32", 0)
        : propertyValueBytes("Double", 0);
    case "bigint":
      return int64Bytes(name, value);
    case "object":
      if (value instanceof Date) return dateBytes(name, value);
      if (value instanceof Uint8Array) return binaryBytes(name, value.byteLength);
      if (value !== null && typeof value.type === "string") return typedBytes(name, value.type, value.value);
  }
  throw invalid(
    name,
    "is not a wire value (string, boolean, number, bigint, Date, Uint8Array or { type, value })",
  );
}

function typedBytes(name: string, type: string, value: unknown): number {
  if (!EDM_TYPES.has(type)) throw invalid(name, `has unknown EDM type '${type}'`);
  switch (type as EdmType) {
    case "String":
      if (typeof value === "string") return stringBytes(name, value);
      break;
    case "Boolean":
      if (typeof value === "boolean") return propertyValueBytes("Boolean", 0);
      break;
    case "Int32": {
      const n = typeof value === "string" && INTEGER.test(value) ? Number(value) : value;
      if (
        typeof n === "number" &&
        Number.isInteger(n) &&
        n >= ServiceLimits.minInt32 &&
        n <= ServiceLimits.maxInt32
      )
        return propertyValueBytes("Int32", 0);
      break;
    }
    case "Int64":
      if (typeof value === "string" && INTEGER.test(value)) return int64Bytes(name, BigInt(value));
      if (typeof value === "number" && Number.isSafeInteger(value)) return int64Bytes(name, BigInt(value));
      break;
    case "Double":
      if (typeof value === "number") return propertyValueBytes("Double", 0);
      if (typeof value === "string" && value.trim() !== "" && !Number.isNaN(Number(value)))
        return propertyValueBytes("Double", 0);
      break;
    case "DateTime":
      if (typeof value === "string") return dateBytes(name, new Date(value));
      break;
    case "Guid":
      if (typeof value === "string" && GUID.test(value)) return propertyValueBytes("Guid", 0);
      break;
    case "Binary":
      if (typeof value === "string" && BASE64.test(value))
        return binaryBytes(name, Buffer.byteLength(value, "base64"));
      break;
  }
  throw invalid(name, `holds ${typeof value} ${String(value).slice(0, 40)}, no valid Edm.${type} value`);
}

function stringBytes(name: string, value: string): number {
  if (value.length > ServiceLimits.maxStringLength) {
    throw invalid(
      name,
      `is a string of ${value.length} UTF-16 units; at most ${ServiceLimits.maxStringLength}`,
    );
  }
  return propertyValueBytes("String", value.length);
}

function int64Bytes(name: string, value: bigint): number {
  if (value < ServiceLimits.minInt64 || value > ServiceLimits.maxInt64) {
    throw invalid(name, `is outside the Int64 range: ${value}`);
  }
  return propertyValueBytes("Int64", 0);
}

function dateBytes(name: string, value: Date): number {
  const ms = value.getTime();
  if (Number.isNaN(ms) || ms < ServiceLimits.minDateTimeMs || ms > ServiceLimits.maxDateTimeMs) {
    throw invalid(name, "is no DateTime between 1601-01-01 and 9999-12-31");
  }
  return propertyValueBytes("DateTime", 0);
}

function binaryBytes(name: string, bytes: number): number {
  if (bytes > ServiceLimits.maxBinaryBytes) {
    throw invalid(name, `holds ${bytes} bytes; binary values hold at most ${ServiceLimits.maxBinaryBytes}`);
  }
  return propertyValueBytes("Binary", bytes);
}

function invalid(name: string, detail: string): ValidationError {
  return new ValidationError("property-value", `property '${name}' ${detail}`, { field: name });
}
