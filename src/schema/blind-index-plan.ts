import { SchemaError } from "../errors.js";
import { ServiceLimits } from "../util/service-limits.js";
import type { ColumnType } from "../wire/column-type.js";
import { LIBRARY_PROPERTY_PREFIX } from "../wire/system-properties.js";
import type { BlindIndexOptions } from "./entity-options.js";

/** The resolved blind index of an encrypted column (`@Column({ encrypt: true, blindIndex })`). */
export interface BlindIndexModel {
  /** Bits of the HMAC kept in the row's blind property. */
  readonly bits: number;
  /** The property the truncated HMAC is stored under: `_tkB_` + the column's stored name. */
  readonly property: string;
}

/** The column types a blind index takes: their canonical text is exact (see blind-index.ts). */
export const BLIND_INDEX_TYPES: readonly ColumnType[] = ["String", "Guid", "Int32", "Int64"];

/** Bits kept when neither `bits` nor `expectedRows` is given (see `maxSafeBlindIndexBits`). */
export const DEFAULT_BLIND_INDEX_BITS = 16;
export const MIN_BLIND_INDEX_BITS = 8;
export const MAX_BLIND_INDEX_BITS = 64;

/** The stored name of a column's blind value: one more property of the row (it counts towards the 255). */
export function blindPropertyOf(property: string): string {
  return `${LIBRARY_PROPERTY_PREFIX}B_${property}`;
}

/**
 * The most bits a blind index over `rows` rows may keep: the smallest L whose coincidence count
 * R / 2^L is at most 2, so every value shares its blind value with about two rows or more.
 * CipherSweet's planner (paragonie/ciphersweet, src/Planner/FieldIndexPlanner.php, `recommend()`:
 * coincidences = R / 2^L, the maximum is the last L before they exceed the boundary max(2, …)).
 * @example maxSafeBlindIndexBits(300) // 8; maxSafeBlindIndexBits(1_000_000) // 19
 */
export function maxSafeBlindIndexBits(rows: number): number {
  const population = Math.max(1, rows);
  for (let bits = 256; bits >= 1; bits--) {
    if (population / 2 ** bits > 2) return bits + 1;
  }
  return 256;
}

/** Resolves `@Column({ blindIndex })`; `undefined` when the column has none; every misuse a `SchemaError`. */
export function resolveBlindIndex(
  what: string,
  option: boolean | BlindIndexOptions | undefined,
  column: { type: ColumnType; property: string; encrypt: boolean; large: boolean; series: boolean },
): BlindIndexModel | undefined {
  if (option === undefined || option === false) return undefined;
  if (option !== true && (option === null || typeof option !== "object")) {
    throw new SchemaError(`${what}: blindIndex must be true or { bits?, expectedRows? }`);
  }
  if (!column.encrypt) {
    throw new SchemaError(
      `${what}: blindIndex is for encrypted columns; add encrypt: true (a plain column is filtered on directly)`,
    );
  }
  if (!BLIND_INDEX_TYPES.includes(column.type)) {
    throw new SchemaError(
      `${what}: a blind index takes "String", "Guid", "Int32" or "Int64" columns, not "${column.type}"`,
    );
  }
  if (column.large || column.series) {
    throw new SchemaError(
      `${what}: a ${column.large ? "large column" : "data series"} cannot have a blind index`,
    );
  }
  const property = blindPropertyOf(column.property);
  if (property.length > ServiceLimits.maxPropertyNameLength) {
    throw new SchemaError(
      `${what}: its blind value is stored as '${property}', longer than ${ServiceLimits.maxPropertyNameLength} characters; set a shorter @Column({ name })`,
    );
  }
  const { bits, expectedRows } = option === true ? {} : option;
  if (expectedRows !== undefined && (!Number.isSafeInteger(expectedRows) || expectedRows < 1)) {
    throw new SchemaError(
      `${what}: blindIndex.expectedRows must be a positive integer, got ${String(expectedRows)}`,
    );
  }
  const safe = expectedRows === undefined ? undefined : maxSafeBlindIndexBits(expectedRows);
  if (bits === undefined) {
    const chosen = safe === undefined ? DEFAULT_BLIND_INDEX_BITS : clampBits(safe);
    return { bits: chosen, property };
  }
  if (!Number.isInteger(bits) || bits < MIN_BLIND_INDEX_BITS || bits > MAX_BLIND_INDEX_BITS) {
    throw new SchemaError(
      `${what}: blindIndex.bits must be an integer from ${MIN_BLIND_INDEX_BITS} to ${MAX_BLIND_INDEX_BITS}, got ${String(bits)}`,
    );
  }
  if (safe !== undefined && expectedRows !== undefined && bits > safe) {
    throw new SchemaError(
      `${what}: blindIndex.bits ${bits} is above the safe maximum of ${safe} bits for ${expectedRows} rows ` +
        `(CipherSweet's planner: each blind value should be shared by about 2 rows or more, R / 2^bits >= 2); ` +
        "more bits make blind values nearly unique, so equal values stand out; use fewer bits (false matches are dropped after decrypting)",
    );
  }
  return { bits, property };
}

function clampBits(bits: number): number {
  return Math.min(MAX_BLIND_INDEX_BITS, Math.max(MIN_BLIND_INDEX_BITS, bits));
}

/**
 * The canonical text a blind value is computed from (see blind-index.ts): a string as given, a Guid in
 * lower case, an integer in decimal; from an entity field or its wire form (`{ type, value }`).
 * `undefined` for a value of another type.
 */
export function blindCanonicalText(type: ColumnType, value: unknown): string | undefined {
  const raw =
    typeof value === "object" && value !== null && !(value instanceof Date) && "value" in value
      ? (value as { value: unknown }).value
      : value;
  switch (type) {
    case "String":
      return typeof raw === "string" ? raw : undefined;
    case "Guid":
      return typeof raw === "string" ? raw.toLowerCase() : undefined;
    case "Int32":
      if (typeof raw === "number" && Number.isInteger(raw)) return String(raw);
      return typeof raw === "string" && /^-?\d+$/.test(raw) ? String(Number(raw)) : undefined;
    case "Int64":
      if (typeof raw === "bigint") return raw.toString();
      if (typeof raw === "number" && Number.isSafeInteger(raw)) return String(raw);
      return typeof raw === "string" && /^-?\d+$/.test(raw) ? BigInt(raw).toString() : undefined;
    default:
      return undefined;
  }
}

/**
 * The blind properties a row gains when sent, by the column property they sit beside: the most bytes
 * each adds by the service's size formula (a String of at most 16 hex digits). For wide entities, so
 * each lands in its column's row without passing the row's limits.
 */
export function blindSidecars(columns: readonly { property: string; blindIndex?: BlindIndexModel }[]) {
  const sidecars = new Map<string, number>();
  for (const column of columns) {
    const index = column.blindIndex;
    if (index !== undefined) sidecars.set(column.property, 8 + index.property.length * 2 + 4 + 16 * 2);
  }
  return sidecars;
}
