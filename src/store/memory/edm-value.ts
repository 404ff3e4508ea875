import type { WireValue } from "../table-store.js";
import { ticksToMs } from "./ticks.js";

/**
 * A property value as the memory store keeps it: the EDM type the service would have stored plus a
 * lossless JavaScript value (Int64 and DateTime as `bigint`; DateTime in 100-ns ticks since 1970).
 * Values are immutable once stored; Binary arrays are never shared with callers.
 */
export type EdmValue =
  | { readonly type: "String"; readonly value: string }
  | { readonly type: "Int32"; readonly value: number }
  | { readonly type: "Int64"; readonly value: bigint }
  | { readonly type: "Double"; readonly value: number }
  | { readonly type: "Boolean"; readonly value: boolean }
  | { readonly type: "DateTime"; readonly value: bigint }
  | { readonly type: "Guid"; readonly value: string }
  | { readonly type: "Binary"; readonly value: Uint8Array };

/**
 * The value as `@azure/data-tables` returns it with default type conversion, as a fresh copy:
 * Int32/Double → number, Int64 → bigint, DateTime → Date (ms), Guid → `{ type: "Guid", value }`,
 * Binary → Uint8Array.
 */
export function edmToWire(v: EdmValue): WireValue {
  switch (v.type) {
    case "DateTime":
      return new Date(ticksToMs(v.value));
    case "Guid":
      return { type: "Guid", value: v.value };
    case "Binary":
      return v.value.slice();
    default:
      return v.value;
  }
}
