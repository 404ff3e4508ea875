import { ServiceLimits } from "../../util/service-limits.js";
import { storedDouble } from "../../util/stored-double.js";
import { msToTicks, parseIsoTicks } from "../../util/unix-ticks.js";
import type { EdmType, WireValue } from "../table-store.js";
import type { EdmValue } from "./edm-value.js";
import { badRequest } from "./service-errors.js";

const MIN_DATETIME_TICKS = msToTicks(ServiceLimits.minDateTimeMs);
// The service keeps 100-ns precision, so the last representable instant is 9999-12-31T23:59:59.9999999Z.
const MAX_DATETIME_TICKS = msToTicks(ServiceLimits.maxDateTimeMs) + 9_999n;
const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Converts one written property value to its stored EDM value, inferring the type the way the service
 * does for `@azure/data-tables`' JSON: an integer `number` in Int32 range is Int32 (no annotation is
 * sent), any other `number` is Double, `{ type, value }` is that type. `null`/`undefined` mean "absent"
 * (the service ignores null properties). Invalid values raise the service's 400 error.
 */
export function wireToEdm(name: string, raw: WireValue | undefined): EdmValue | undefined {
  if (raw === null || raw === undefined) return undefined;
  switch (typeof raw) {
    case "string":
      return checkString(name, raw);
    case "boolean":
      return { type: "Boolean", value: raw };
    case "number":
      return Number.isInteger(raw) && raw >= ServiceLimits.minInt32 && raw <= ServiceLimits.maxInt32
        ? { type: "Int32", value: raw === 0 ? 0 : raw } // -0 has no Int32 form
        : { type: "Double", value: storedDouble(raw) };
    case "bigint":
      return checkInt64(name, raw);
    case "object":
      if (raw instanceof Date) return dateToEdm(name, raw);
      if (raw instanceof Uint8Array) return checkBinary(name, new Uint8Array(raw)); // copy: never alias caller memory
      if (typeof raw.type === "string" && raw.value !== undefined && raw.value !== null) {
        return typedToEdm(name, raw.type, raw.value);
      }
  }
  throw invalid(name, `unsupported value ${describe(raw)}`);
}

function typedToEdm(name: string, type: EdmType | string, value: unknown): EdmValue {
  switch (type) {
    case "String":
      if (typeof value === "string") return checkString(name, value);
      break;
    case "Boolean":
      if (typeof value === "boolean") return { type: "Boolean", value };
      if (value === "true" || value === "false") return { type: "Boolean", value: value === "true" };
      break;
    case "Int32": {
      const n = typeof value === "string" && INTEGER.test(value) ? Number(value) : value;
      if (typeof n === "number" && Number.isInteger(n)) {
        if (n < ServiceLimits.minInt32 || n > ServiceLimits.maxInt32) {
          throw invalid(name, `Int32 value ${String(value)} is outside -2^31..2^31-1`);
        }
        return { type: "Int32", value: n === 0 ? 0 : n };
      }
      break;
    }
    case "Int64":
      if (typeof value === "string" && INTEGER.test(value)) return checkInt64(name, BigInt(value));
      if (typeof value === "number" && Number.isSafeInteger(value)) return checkInt64(name, BigInt(value));
      if (typeof value === "bigint") return checkInt64(name, value);
      break;
    case "Double":
      if (typeof value === "number") return { type: "Double", value: storedDouble(value) };
      if (typeof value === "string") {
        const d = parseDouble(value);
        if (d !== undefined) return { type: "Double", value: storedDouble(d) };
      }
      break;
    case "DateTime":
      if (value instanceof Date) return dateToEdm(name, value);
      if (typeof value === "string") {
        const ticks = parseIsoTicks(value);
        if (ticks !== undefined) return checkDateTime(name, ticks);
      }
      break;
    case "Guid":
      if (typeof value === "string" && GUID.test(value)) return { type: "Guid", value: value.toLowerCase() };
      break;
    case "Binary":
      if (value instanceof Uint8Array) return checkBinary(name, new Uint8Array(value));
      if (typeof value === "string" && BASE64.test(value)) {
        return checkBinary(name, new Uint8Array(Buffer.from(value, "base64")));
      }
      break;
    default:
      throw invalid(name, `unknown EDM type '${type}'`);
  }
  throw invalid(name, `${describe(value)} is not a valid Edm.${type} value`);
}

function parseDouble(text: string): number | undefined {
  if (text === "NaN") return Number.NaN;
  if (text === "Infinity" || text === "INF") return Number.POSITIVE_INFINITY;
  if (text === "-Infinity" || text === "-INF") return Number.NEGATIVE_INFINITY;
  if (!DECIMAL.test(text)) return undefined;
  // A number past Double's range is refused, not stored as Infinity (Azure: 400 InvalidInput, Azurite #2387).
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}

function checkString(name: string, value: string): EdmValue {
  if (value.length > ServiceLimits.maxStringLength) {
    throw badRequest(
      "PropertyValueTooLarge",
      `property '${name}' is a string of ${value.length} UTF-16 units; at most ${ServiceLimits.maxStringLength} are accepted`,
    );
  }
  return { type: "String", value };
}

function checkBinary(name: string, value: Uint8Array): EdmValue {
  if (value.byteLength > ServiceLimits.maxBinaryBytes) {
    throw badRequest(
      "PropertyValueTooLarge",
      `property '${name}' holds ${value.byteLength} bytes; binary values may hold at most ${ServiceLimits.maxBinaryBytes}`,
    );
  }
  return { type: "Binary", value };
}

function checkInt64(name: string, value: bigint): EdmValue {
  if (value < ServiceLimits.minInt64 || value > ServiceLimits.maxInt64) {
    throw invalid(name, `Int64 value ${value} is outside -2^63..2^63-1`);
  }
  return { type: "Int64", value };
}

function dateToEdm(name: string, date: Date): EdmValue {
  const ms = date.getTime();
  if (Number.isNaN(ms)) throw invalid(name, "Invalid Date");
  return checkDateTime(name, msToTicks(ms));
}

function checkDateTime(name: string, ticks: bigint): EdmValue {
  if (ticks < MIN_DATETIME_TICKS || ticks > MAX_DATETIME_TICKS) {
    throw badRequest(
      "OutOfRangeInput",
      `property '${name}': DateTime values must lie between 1601-01-01T00:00:00Z and 9999-12-31T23:59:59.9999999Z`,
    );
  }
  return { type: "DateTime", value: ticks };
}

function invalid(name: string, detail: string) {
  return badRequest("InvalidInput", `property '${name}': ${detail}`);
}

function describe(value: unknown): string {
  if (typeof value === "string") return `'${value.length > 40 ? `${value.slice(0, 40)}…` : value}'`;
  if (typeof value === "object" && value !== null) return `object ${Object.prototype.toString.call(value)}`;
  return `${typeof value} ${String(value)}`;
}
