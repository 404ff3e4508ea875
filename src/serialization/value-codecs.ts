import { createRequire } from "node:module";
import { ValidationError } from "../errors.js";
import { propertyValueBytes } from "../util/entity-size.js";
import { ServiceLimits } from "../util/service-limits.js";
import type { ColumnType } from "../wire/column-type.js";
import type { WireValue } from "../wire/wire-entity.js";

let transformer: typeof import("class-transformer") | undefined;

/**
 * class-transformer, loaded on the first Json column with a `jsonClass`: importing its CommonJS
 * build from an ES module costs tens of milliseconds of cold start that most programs never use.
 * `__filename` exists in the CommonJS build, `import.meta.url` in the ES one.
 */
function classTransformer(): typeof import("class-transformer") {
  transformer ??= createRequire(typeof __filename === "string" ? __filename : import.meta.url)(
    "class-transformer",
  ) as typeof import("class-transformer");
  return transformer;
}

/** Converts a field value to its wire form, validating it; named by `field` in errors. */
export type ValueWriter = (value: unknown) => WireValue;
/** Converts a wire value read from any client (tablekit, plain SDK, .NET) to the field's JS type. */
export type ValueReader = (value: unknown) => unknown;

const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

const LOWER_GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * True for a GUID already in the one spelling tablekit writes (lower-case hex): the mapper's fast
 * path, with no copy. Anything else goes through the Guid writer (its check, its error, `toLowerCase`).
 */
export function isLowerGuid(value: string): boolean {
  return LOWER_GUID.test(value);
}

function fail(field: string, rule: string, message: string): never {
  throw new ValidationError(rule, `${field}: ${message}`, { field });
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (value instanceof Date) return "a Date";
  if (value instanceof Uint8Array) return "bytes";
  if (Array.isArray(value)) return "an array";
  return typeof value === "string"
    ? `'${value.length > 40 ? `${value.slice(0, 40)}…` : value}'`
    : `${typeof value} ${String(value)}`;
}

/** What an encrypted column's error may say about a value: its kind only. */
function describeType(value: unknown): string {
  if (value === null) return "null";
  if (value instanceof Date) return "a Date";
  if (value instanceof Uint8Array) return "bytes";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value} (not shown: the column is encrypted)`;
}

function assertString(field: string, value: string): void {
  if (value.length > ServiceLimits.maxStringLength) {
    fail(
      field,
      "string-size",
      `string of ${value.length} UTF-16 units exceeds the service limit of ${ServiceLimits.maxStringLength} (64 KiB per property)`,
    );
  }
}

/**
 * The writer for one column: the value checks the service would make, done before any request.
 * With `redact` (encrypted columns) its errors name the field and the rule, never the value.
 */
export function createValueWriter(
  type: ColumnType,
  field: string,
  jsonClass?: new () => object,
  redact = false,
): ValueWriter {
  const write = createPlainWriter(type, field, jsonClass, redact);
  if (!redact) return write;
  return (value) => {
    const wire = write(value);
    const bytes =
      typeof wire === "string"
        ? Buffer.byteLength(wire, "utf8")
        : wire instanceof Uint8Array
          ? wire.byteLength
          : 0;
    // Checked here, before any request (an indexed write records its intent first): the exact size
    // is checked again once sealed, when the wrapped key's length is known.
    if (bytes + MIN_ENVELOPE_OVERHEAD > ServiceLimits.maxBinaryBytes) {
      fail(
        field,
        "encrypted-size",
        `the encrypted value would be over ${bytes + MIN_ENVELOPE_OVERHEAD} bytes; a Binary property holds at most ${ServiceLimits.maxBinaryBytes} (64 KiB), counting text as UTF-8 plus the encryption header`,
      );
    }
    return wire;
  };
}

/**
 * The least an encryption envelope adds to a value's bytes: the type byte, version, key id length,
 * a 1-byte key id, the wrapped key's length and at least 32 bytes of wrapped key, IV and GCM tag.
 */
const MIN_ENVELOPE_OVERHEAD = 1 + 1 + 1 + 1 + 2 + 32 + 12 + 16;

function createPlainWriter(
  type: ColumnType,
  field: string,
  jsonClass: (new () => object) | undefined,
  redact: boolean,
): ValueWriter {
  const describe = redact ? describeType : describeValue;
  const text = (value: unknown): string => (redact ? "the value" : String(value));
  switch (type) {
    case "String":
      return (value) => {
        if (typeof value !== "string") fail(field, "type", `expected a string, got ${describe(value)}`);
        assertString(field, value);
        return value;
      };
    case "Int32":
      return (value) => {
        if (typeof value !== "number" || !Number.isInteger(value))
          fail(field, "type", `expected an integer (Int32), got ${describe(value)}`);
        if (value < ServiceLimits.minInt32 || value > ServiceLimits.maxInt32)
          fail(field, "range", `${text(value)} is outside the Int32 range`);
        // A plain JSON integer without annotation is read by the service as Int32.
        return value;
      };
    case "Int64":
      return (value) => {
        let big: bigint;
        if (typeof value === "bigint") big = value;
        else if (typeof value === "number" && Number.isSafeInteger(value)) big = BigInt(value);
        else fail(field, "type", `expected a bigint (Int64), got ${describe(value)}`);
        if (big < ServiceLimits.minInt64 || big > ServiceLimits.maxInt64)
          fail(field, "range", `${text(big)} is outside the Int64 range`);
        return { type: "Int64", value: big.toString() };
      };
    case "Double":
      return (value) => {
        if (typeof value !== "number")
          fail(field, "type", `expected a number (Double), got ${describe(value)}`);
        // Always annotated: a whole value like 5 would otherwise be stored as Int32. NaN and ±Infinity
        // are stored too (the service keeps them; the stores send them as "NaN", "Infinity", "-Infinity").
        return { type: "Double", value };
      };
    case "Boolean":
      return (value) => {
        if (typeof value !== "boolean") fail(field, "type", `expected a boolean, got ${describe(value)}`);
        return value;
      };
    case "DateTime":
      return (value) => {
        if (!(value instanceof Date)) fail(field, "type", `expected a Date, got ${describe(value)}`);
        const ms = value.getTime();
        if (Number.isNaN(ms)) fail(field, "type", "Invalid Date");
        if (ms < ServiceLimits.minDateTimeMs || ms > ServiceLimits.maxDateTimeMs) {
          fail(
            field,
            "range",
            `${text(value.toISOString())} is outside the service's DateTime range (1601-01-01 to 9999-12-31)`,
          );
        }
        return value;
      };
    case "Guid":
      return (value) => {
        if (typeof value !== "string" || !GUID.test(value))
          fail(field, "type", `expected a GUID string, got ${describe(value)}`);
        // One spelling per GUID: the service compares them as GUIDs, keys and filters compare text.
        return { type: "Guid", value: value.toLowerCase() };
      };
    case "Binary":
      return (value) => {
        if (!(value instanceof Uint8Array))
          fail(field, "type", `expected a Uint8Array or Buffer, got ${describe(value)}`);
        if (value.byteLength > ServiceLimits.maxBinaryBytes) {
          fail(
            field,
            "binary-size",
            `${value.byteLength} bytes exceeds the service limit of ${ServiceLimits.maxBinaryBytes} bytes`,
          );
        }
        return value;
      };
    case "Json":
      return (value) => {
        const text = jsonText(field, jsonClass, value);
        assertString(field, text);
        return text;
      };
  }
}

/** A Json column's value as JSON text (a `jsonClass` instance through class-transformer); `ValidationError` if it has none. */
export function jsonText(field: string, jsonClass: (new () => object) | undefined, value: unknown): string {
  let text: string | undefined;
  try {
    const plain = jsonClass && typeof value === "object" ? classTransformer().instanceToPlain(value) : value;
    text = JSON.stringify(plain, (_key, v) => {
      if (typeof v === "bigint")
        throw new ValidationError(
          "unsupported-value",
          "a bigint has no JSON form (use an Int64 column or a string)",
        );
      return v;
    });
  } catch (error) {
    throw new ValidationError(
      "unsupported-value",
      `${field}: value cannot be stored as JSON (${String(error)})`,
      {
        field,
        cause: error,
      },
    );
  }
  if (text === undefined) fail(field, "unsupported-value", `${describeType(value)} cannot be stored as JSON`);
  return text;
}

function unwrap(value: unknown): unknown {
  // The SDK returns Guid (and, with type conversion off, every type) as { type, value }.
  return typeof value === "object" && value !== null && "value" in value && "type" in value
    ? (value as { value: unknown }).value
    : value;
}

/** The reader for one column: lenient about how other clients typed the value, strict about the result's type. */
export function createValueReader(
  type: ColumnType,
  field: string,
  jsonClass?: new () => object,
): ValueReader {
  switch (type) {
    case "String":
      return (value) => (typeof value === "string" ? value : String(unwrap(value)));
    case "Int32":
      return (value) => (typeof value === "number" ? value : Number(unwrap(value)));
    case "Double":
      // Non-finite doubles travel as the strings "NaN", "Infinity", "-Infinity".
      return (value) => (typeof value === "number" ? value : Number(unwrap(value)));
    case "Int64":
      return (value) => {
        if (typeof value === "bigint") return value;
        const raw = unwrap(value);
        return typeof raw === "number" ? BigInt(Math.trunc(raw)) : BigInt(String(raw));
      };
    case "Boolean":
      return (value) => (typeof value === "boolean" ? value : String(unwrap(value)) === "true");
    case "DateTime":
      return (value) => (value instanceof Date ? value : new Date(String(unwrap(value))));
    case "Guid":
      return (value) => String(unwrap(value));
    case "Binary":
      return (value) => {
        // Always a plain Uint8Array (the Azure SDK hands out Buffers), so both stores read back alike.
        if (value instanceof Buffer) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
        if (value instanceof Uint8Array) return value;
        return new Uint8Array(Buffer.from(String(unwrap(value)), "base64"));
      };
    case "Json":
      return (value) => {
        const text = unwrap(value);
        if (typeof text !== "string") return text;
        try {
          const parsed: unknown = JSON.parse(text);
          return jsonClass && parsed !== null && typeof parsed === "object"
            ? classTransformer().plainToInstance(jsonClass, parsed)
            : parsed;
        } catch (error) {
          throw new ValidationError("json", `${field}: stored value is not valid JSON`, {
            field,
            cause: error,
          });
        }
      };
  }
}

/** Bytes a value adds to the entity size under the service's formula (String 4 + 2/char, Binary 4 + bytes, …). */
export function wireValueSize(type: ColumnType, wire: WireValue): number {
  const length = typeof wire === "string" ? wire.length : wire instanceof Uint8Array ? wire.byteLength : 0;
  return propertyValueBytes(type, length);
}
