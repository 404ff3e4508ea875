import type { EdmType } from "../wire/wire-entity.js";

/**
 * Bytes one property value counts for in the service's entity size formula
 * (4 + 2 × (PartitionKey + RowKey length) + Σ (8 + 2 × name length + value size)):
 * String 4 + 2 per UTF-16 unit, Binary 4 + bytes, Int32 4, Boolean 1, Guid 16, others 8.
 * `length` is the string's length or the binary's byte count, unused for fixed-size types.
 */
export function propertyValueBytes(type: EdmType | "Json", length: number): number {
  switch (type) {
    case "String":
    case "Json":
      return 4 + length * 2;
    case "Binary":
      return 4 + length;
    case "Int32":
      return 4;
    case "Boolean":
      return 1;
    case "Guid":
      return 16;
    default:
      return 8;
  }
}

/**
 * Wire names that are the port's metadata, not properties stored under that name: the keys, `etag`,
 * `timestamp` and `odata.*` annotations (compared directly: this runs for every property sent).
 */
function isMetadata(name: string): boolean {
  switch (name) {
    case "partitionKey":
    case "rowKey":
    case "etag":
    case "timestamp":
      return true;
    default:
      return name.charCodeAt(0) === 111 /* o */ && name.startsWith("odata.");
  }
}

/**
 * A wire row's size by the service's entity size formula, with each value's EDM type as the service
 * infers it from the wire form (an integer `number` in Int32 range is an Int32, a typed value its
 * type), and its property count (keys and Timestamp not included).
 */
export function wireEntityBytes(entity: Readonly<Record<string, unknown>>): {
  bytes: number;
  properties: number;
} {
  const partitionKey = entity.partitionKey;
  const rowKey = entity.rowKey;
  let bytes =
    4 +
    2 *
      ((typeof partitionKey === "string" ? partitionKey.length : 0) +
        (typeof rowKey === "string" ? rowKey.length : 0));
  let properties = 0;
  for (const name in entity) {
    if (isMetadata(name)) continue;
    const value = entity[name];
    if (value === undefined || value === null) continue; // not stored
    properties++;
    bytes += 8 + 2 * name.length + wireValueBytes(value);
  }
  return { bytes, properties };
}

function wireValueBytes(value: unknown): number {
  switch (typeof value) {
    case "string":
      return propertyValueBytes("String", value.length);
    case "number":
      return Number.isInteger(value) && value >= -2_147_483_648 && value <= 2_147_483_647 ? 4 : 8;
    case "boolean":
      return 1;
    case "object": {
      if (value instanceof Uint8Array) return propertyValueBytes("Binary", value.byteLength);
      if (value instanceof Date) return 8;
      const typed = value as { type?: unknown; value?: unknown };
      const inner = typed.value;
      if (typed.type === "Binary" && typeof inner === "string")
        return propertyValueBytes("Binary", Buffer.byteLength(inner, "base64"));
      return propertyValueBytes(typed.type as EdmType, typeof inner === "string" ? inner.length : 0);
    }
    default:
      return 8; // bigint: Int64
  }
}
