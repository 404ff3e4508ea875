import { ValidationError } from "../errors.js";

/** The column types a key placeholder may hold. */
export type KeyFieldType = "String" | "Guid" | "Int32" | "Int64" | "DateTime";

/** Where a placeholder sits, so errors can name the template, the field and the placeholder. */
export interface PlaceholderSite {
  /** The template's label, e.g. `Employee.rowKey`. */
  readonly what: string;
  readonly field: string;
  /** The placeholder as written, e.g. `{employeeId:6}`. */
  readonly token: string;
}

/** Encodes the value of one placeholder as key text and back; built once per placeholder at parse time. */
export interface KeyCodec {
  /** Characters every encoding takes, or `undefined` when the width varies (strings). */
  readonly width: number | undefined;
  /** True when the key keeps only part of the value (a period), so `decode` gives a representative. */
  readonly lossy?: boolean;
  /** The key text of a present value; throws `ValidationError` when the value cannot be encoded. */
  encode(value: unknown): string;
  /** The value encoded in `key[start, end)`, or `undefined` when that text is no valid encoding. */
  decode(key: string, start: number, end: number): unknown;
}

/** Builds the `ValidationError` for a value that cannot go into a placeholder. */
export function keyValueError(site: PlaceholderSite, rule: string, reason: string): ValidationError {
  return new ValidationError(rule, `${site.what}: field '${site.field}' (${site.token}) ${reason}`, {
    field: site.field,
  });
}

/** Describes a value for an error message without dumping large strings. */
export function describeValue(value: unknown): string {
  switch (typeof value) {
    case "string":
      return value.length > 40 ? `string '${value.slice(0, 40)}…'` : `string '${value}'`;
    case "bigint":
      return `bigint ${value}`;
    case "number":
      return `number ${value}`;
    case "object":
      return value === null ? "null" : `${value.constructor?.name ?? "object"}`;
    default:
      return typeof value;
  }
}

/** Parses `key[start, end)` as ASCII digits into a number, or returns -1; the caller keeps it under 2^53. */
export function parseDigits(key: string, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i++) {
    const digit = key.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    n = n * 10 + digit;
  }
  return n;
}

/** Parses `key[start, end)` as ASCII digits into a bigint, or returns -1n. */
export function parseBigDigits(key: string, start: number, end: number): bigint {
  for (let i = start; i < end; i++) {
    const digit = key.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1n;
  }
  return BigInt(key.slice(start, end));
}
