import { ValidationError } from "../errors.js";
import type { TypedValue } from "../wire/wire-entity.js";

const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** A value the `odata` template can render as a typed OData literal. */
export type ODataValue = string | number | bigint | boolean | Date | Uint8Array | TypedValue;

/** Renders a string literal: single quotes, an embedded quote doubled (OData's only escape). */
export function quoteString(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** Renders a Double literal; whole values keep a fraction so the service reads them as Edm.Double. */
export function formatDouble(value: number): string {
  if (!Number.isFinite(value)) throw new ValidationError("filter-value", `Cannot compare with ${value}`);
  const text = String(value);
  if (/e/i.test(text)) return formatExponent(value);
  return Number.isInteger(value) ? `${text}.0` : text;
}

/**
 * Very large or small doubles as plain decimals: exponent forms (`1e+21`) are not read alike by every
 * backend (Azurite finds nothing), while a decimal expansion is exact for any double.
 */
function formatExponent(value: number): string {
  if (Math.abs(value) >= 1) return `${BigInt(value)}.0`; // |value| ≥ 1e21: always an integer
  const [mantissa = "0", exponent = "0"] = value.toExponential().split("e");
  const fraction = mantissa.split(".")[1]?.length ?? 0;
  return value.toFixed(Math.min(100, fraction - Number(exponent)));
}

/** Renders a GUID literal after checking its shape (so user text cannot escape the quotes). */
export function formatGuid(value: string): string {
  if (!GUID.test(value)) throw new ValidationError("filter-value", `'${value}' is not a GUID`);
  return `guid'${value.toLowerCase()}'`;
}

/** Renders a DateTime literal (ISO 8601 UTC). */
export function formatDateTime(value: Date): string {
  if (Number.isNaN(value.getTime()))
    throw new ValidationError("filter-value", "Cannot compare with an Invalid Date");
  return `datetime'${value.toISOString()}'`;
}

/** Renders a Binary literal. */
export function formatBinary(value: Uint8Array): string {
  return `X'${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("hex")}'`;
}

/** Renders any supported JS value as the OData literal of its natural type. */
export function formatLiteral(value: ODataValue): string {
  switch (typeof value) {
    case "string":
      return quoteString(value);
    case "boolean":
      return value ? "true" : "false";
    case "bigint":
      // Int64 literals need the L suffix (the SDK's own template omits it).
      return `${value}L`;
    case "number":
      if (!Number.isFinite(value)) throw new ValidationError("filter-value", `Cannot compare with ${value}`);
      if (!Number.isInteger(value)) return formatDouble(value);
      // A plain integer literal is an Int32 to the service: larger ones must say which type they are.
      if (value < -2_147_483_648 || value > 2_147_483_647) {
        throw new ValidationError(
          "filter-value",
          `${value} is outside Int32: pass a bigint for an Int64 comparison, or { type: "Double", value } for a Double`,
        );
      }
      return String(value);
    case "object":
      if (value instanceof Date) return formatDateTime(value);
      if (value instanceof Uint8Array) return formatBinary(value);
      if (value !== null && typeof value.type === "string") return formatTyped(value);
  }
  throw new ValidationError(
    "filter-value",
    `Cannot use ${value === null ? "null" : typeof value} in a filter`,
  );
}

function formatTyped(value: TypedValue): string {
  switch (value.type) {
    case "String":
      return quoteString(String(value.value));
    case "Guid":
      return formatGuid(String(value.value));
    case "Double":
      return formatDouble(Number(value.value));
    case "Int64":
      if (!/^-?\d+$/.test(String(value.value)))
        throw new ValidationError("filter-value", `'${value.value}' is not an Int64`);
      return `${BigInt(value.value as string | number)}L`;
    case "Int32":
      if (!/^-?\d+$/.test(String(value.value)) || !Number.isSafeInteger(Number(value.value))) {
        throw new ValidationError("filter-value", `'${value.value}' is not an Int32`);
      }
      return String(Number(value.value));
    case "Boolean":
      return value.value === true || value.value === "true" ? "true" : "false";
    case "DateTime":
      return formatDateTime(new Date(value.value as string));
    case "Binary":
      return formatBinary(Buffer.from(String(value.value), "base64"));
  }
  throw new ValidationError("filter-value", `Unknown EDM type '${String(value.type)}'`);
}

/**
 * Builds an OData filter with every interpolated value escaped and typed, so user text can
 * never change the query's meaning.
 * @example
 * odata`lastName eq ${name} and age gt ${30} and rowVersion lt ${5n}`
 * // lastName eq 'O''Brien' and age gt 30 and rowVersion lt 5L
 */
export function odata(strings: TemplateStringsArray, ...values: ODataValue[]): string {
  let out = strings[0] ?? "";
  for (let i = 0; i < values.length; i++) {
    out += formatLiteral(values[i] as ODataValue) + (strings[i + 1] ?? "");
  }
  return out;
}
