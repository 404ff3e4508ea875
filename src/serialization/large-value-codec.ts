import { ValidationError } from "../errors.js";
import type { MappedColumn } from "./mapped-column.js";
import { createValueReader, jsonText } from "./value-codecs.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });
/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The bytes a large column's value is stored as: a `String` as UTF-8, `Binary` as is, `Json` as the
 * UTF-8 of its JSON text. Bad values are a `ValidationError` before any request; a string with a lone
 * surrogate is refused, since UTF-8 cannot carry it and it would not read back as written.
 */
export function encodeLargeValue(column: MappedColumn, value: unknown): Uint8Array {
  const { field } = column;
  switch (column.type) {
    case "String":
      if (typeof value !== "string") {
        throw new ValidationError("type", `${field}: expected a string, got ${typeof value}`, { field });
      }
      if (LONE_SURROGATE.test(value)) {
        throw new ValidationError("string", `${field}: the string has a lone surrogate (not valid Unicode)`, {
          field,
        });
      }
      return encoder.encode(value);
    case "Binary":
      if (!(value instanceof Uint8Array)) {
        throw new ValidationError("type", `${field}: expected a Uint8Array or Buffer, got ${typeof value}`, {
          field,
        });
      }
      return value;
    default:
      return encoder.encode(jsonText(field, column.jsonClass, value));
  }
}

/** The value of a large column from its stored bytes (the inverse of `encodeLargeValue`). */
export function decodeLargeValue(column: MappedColumn, bytes: Uint8Array): unknown {
  switch (column.type) {
    case "String":
      return decoder.decode(bytes);
    case "Binary":
      return bytes;
    default:
      return createValueReader("Json", column.field, column.jsonClass)(decoder.decode(bytes));
  }
}
