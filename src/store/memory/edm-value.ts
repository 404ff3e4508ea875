import { ticksToMs } from "../../util/unix-ticks.js";
import type { EdmValue } from "../served-store.js";
import type { WireValue } from "../table-store.js";

// The typed value of a stored property is the served-store port's vocabulary (the server renders it).
export type { EdmValue } from "../served-store.js";

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
