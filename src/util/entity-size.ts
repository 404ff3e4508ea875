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
