import type { EdmValue } from "./edm-value.js";

/**
 * Orders two typed values the way the filter evaluator needs: negative, zero or positive; `NaN` when a
 * Double NaN takes part (only `ne` holds then); `undefined` when the types are not comparable.
 *
 * Types must match, with one deliberate exception: Int32 and Double compare by value, so `Score gt 5`
 * finds a Double score. Int64 compares only with Int64 literals (`5L`): the service's documentation
 * says types must match, and Azurite too finds nothing for `Big eq 5` on an Int64 property. Strings compare ordinally (UTF-16 code
 * units, case-sensitive); Guids as their lower-case text; DateTimes by instant at 100-ns precision
 * (ms values, the common case, therefore compare by ms); Binary bytewise; false < true.
 */
export function compareEdm(a: EdmValue, b: EdmValue): number | undefined {
  if (isNumeric(a) && isNumeric(b) && (a.type === "Int64") === (b.type === "Int64"))
    return compareNumeric(a, b);
  if (a.type !== b.type) return undefined;
  switch (a.type) {
    case "String":
    case "Guid":
      return compareOrdered(a.value, b.value as string);
    case "DateTime":
      return compareOrdered(a.value, b.value as bigint);
    case "Boolean":
      return Number(a.value) - Number(b.value as boolean);
    case "Binary":
      return compareBytes(a.value, b.value as Uint8Array);
    default:
      return undefined;
  }
}

type NumericValue = Extract<EdmValue, { type: "Int32" | "Int64" | "Double" }>;

function isNumeric(v: EdmValue): v is NumericValue {
  return v.type === "Int32" || v.type === "Int64" || v.type === "Double";
}

function compareNumeric(a: NumericValue, b: NumericValue): number {
  if (a.type === "Int64") {
    return b.type === "Int64" ? compareOrdered(a.value, b.value) : compareBigToNumber(a.value, b.value);
  }
  if (b.type === "Int64") return -compareBigToNumber(b.value, a.value);
  if (Number.isNaN(a.value) || Number.isNaN(b.value)) return Number.NaN;
  return compareOrdered(a.value, b.value);
}

/** Compares an Int64 with a Double exactly (no rounding of the bigint to a double). */
function compareBigToNumber(x: bigint, y: number): number {
  if (Number.isNaN(y)) return Number.NaN;
  if (y === Number.POSITIVE_INFINITY) return -1;
  if (y === Number.NEGATIVE_INFINITY) return 1;
  const floor = Math.floor(y);
  const c = compareOrdered(x, BigInt(floor));
  return c !== 0 ? c : floor === y ? 0 : -1;
}

function compareOrdered<T extends string | number | bigint>(a: T, b: T): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i] !== b[i]) return a[i]! - b[i]!;
  }
  return a.length - b.length;
}
