/**
 * The typed NDJSON line format of `tablekit export` / `import` (docs/data-movement.md): one entity per
 * line in the Table service's JSON form, every non-String property annotated with `@odata.type`.
 * A `Row` is the in-memory form: values kept as the service's JSON spells them (Int64, DateTime, Guid
 * and Binary as text), so nothing is rounded on the way through.
 */

import { propertyValueBytes } from "../util/entity-size.js";
import { assertValidKey } from "../util/key-rules.js";
import { ServiceLimits } from "../util/service-limits.js";
import { storedDouble } from "../util/stored-double.js";
import { EDM_TYPES, type EdmType } from "../wire/wire-entity.js";

/** One property: Int32 and Double are numbers, Boolean a boolean, everything else text. */
export interface RowProperty {
  readonly name: string;
  readonly type: EdmType;
  readonly value: string | number | boolean;
}

/** One entity with typed values. */
export interface Row {
  readonly partitionKey: string;
  readonly rowKey: string;
  /** The service's Timestamp (canonical DateTime text); absent in lines written by hand. */
  readonly timestamp?: string | undefined;
  readonly properties: readonly RowProperty[];
}

/** Why a line or an entity cannot be imported (reported with its line number). */
export class RowError extends Error {}

const ANNOTATION = "@odata.type";
const INT64 = /^-?\d{1,19}$/;
const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DATE_TIME = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(:\d{2})?(?:\.(\d{1,7}))?(Z|[+-]\d{2}:\d{2})$/;
const PROPERTY_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SYSTEM = new Set(["PartitionKey", "RowKey", "Timestamp"]);
const CANONICAL_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{7}Z$/;

/** The JSON pieces of a property name, built once per name: `,"name":` and `,"name@odata.type":"Edm.`. */
interface NamePieces {
  readonly annotationKey: string;
  readonly value: string;
  readonly annotation: string;
}
const namePieces = new Map<string, NamePieces>();

function piecesOf(name: string): NamePieces {
  let pieces = namePieces.get(name);
  if (pieces === undefined) {
    const quoted = JSON.stringify(name);
    pieces = {
      annotationKey: `${name}${ANNOTATION}`,
      value: `,${quoted}:`,
      annotation: `,${quoted.slice(0, -1)}${ANNOTATION}":"Edm.`,
    };
    // Bounded: a file with ever new names must not grow it without end.
    if (namePieces.size < 10_000) namePieces.set(name, pieces);
  }
  return pieces;
}

/**
 * A row from a JSON object: a line of the format, or an entity of a service response. In a response
 * (`marked`), a number wrapped in an array is a Double whose JSON text had a fraction or an exponent
 * (see double-marks.ts). Throws `RowError` naming what is wrong.
 */
export function rowFromJson(json: unknown, marked = false): Row {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new RowError("a line must be a JSON object");
  }
  const object = json as Record<string, unknown>;
  const partitionKey = object.PartitionKey;
  const rowKey = object.RowKey;
  if (typeof partitionKey !== "string") throw new RowError("PartitionKey is missing or not a string");
  if (typeof rowKey !== "string") throw new RowError("RowKey is missing or not a string");
  let timestamp: string | undefined;
  if (object.Timestamp !== undefined) {
    if (typeof object.Timestamp !== "string") throw new RowError("Timestamp must be a DateTime string");
    timestamp = canonicalDateTime(object.Timestamp, "Timestamp");
  }
  const properties: RowProperty[] = [];
  for (const name in object) {
    if (SYSTEM.has(name) || name.startsWith("odata.")) continue;
    if (name.endsWith(ANNOTATION)) {
      const base = name.slice(0, -ANNOTATION.length);
      if (!(base in object)) throw new RowError(`'${name}' annotates a property that is not there`);
      continue;
    }
    const value = object[name];
    if (marked && value === null) continue; // a $select-ed property the entity lacks
    const annotation = object[piecesOf(name).annotationKey];
    properties.push(propertyOf(name, value, annotation, marked));
  }
  return { partitionKey, rowKey, timestamp, properties };
}

function propertyOf(name: string, raw: unknown, annotation: unknown, marked: boolean): RowProperty {
  if (annotation !== undefined) {
    if (
      typeof annotation !== "string" ||
      !annotation.startsWith("Edm.") ||
      !EDM_TYPES.has(annotation.slice(4))
    ) {
      throw new RowError(`'${name}@odata.type' must name an Edm type, got ${JSON.stringify(annotation)}`);
    }
    const type = annotation.slice(4) as EdmType;
    if (marked && Array.isArray(raw) && raw.length === 1) raw = raw[0];
    return { name, type, value: typedValue(name, type, raw) };
  }
  if (marked && Array.isArray(raw) && raw.length === 1 && typeof raw[0] === "number") {
    return { name, type: "Double", value: storedDouble(raw[0]) };
  }
  switch (typeof raw) {
    case "string":
      return { name, type: "String", value: raw };
    case "boolean":
      return { name, type: "Boolean", value: raw };
    case "number":
      return Number.isInteger(raw) && raw >= ServiceLimits.minInt32 && raw <= ServiceLimits.maxInt32
        ? { name, type: "Int32", value: storedDouble(raw) } // -0 has no Int32 form
        : { name, type: "Double", value: raw };
    default:
      throw new RowError(
        `property '${name}' has no Table service value (${raw === null ? "null" : typeof raw})`,
      );
  }
}

function typedValue(name: string, type: EdmType, raw: unknown): string | number | boolean {
  const wrong = () => new RowError(`property '${name}' is not a valid Edm.${type}: ${JSON.stringify(raw)}`);
  switch (type) {
    case "String":
      if (typeof raw !== "string") throw wrong();
      return raw;
    case "Boolean":
      if (typeof raw !== "boolean") throw wrong();
      return raw;
    case "Int32":
      if (
        typeof raw !== "number" ||
        !Number.isInteger(raw) ||
        raw < ServiceLimits.minInt32 ||
        raw > ServiceLimits.maxInt32
      )
        throw wrong();
      return Object.is(raw, -0) ? 0 : raw;
    case "Int64": {
      const text = typeof raw === "number" && Number.isSafeInteger(raw) ? String(raw) : raw;
      if (typeof text !== "string" || !INT64.test(text)) throw wrong();
      const n = BigInt(text);
      if (n < ServiceLimits.minInt64 || n > ServiceLimits.maxInt64) throw wrong();
      return n.toString();
    }
    case "Double":
      if (typeof raw === "number") return storedDouble(raw);
      // The service's spelling of the doubles JSON has no number for.
      if (raw === "NaN") return Number.NaN;
      if (raw === "Infinity") return Number.POSITIVE_INFINITY;
      if (raw === "-Infinity") return Number.NEGATIVE_INFINITY;
      throw wrong();
    case "DateTime":
      if (typeof raw !== "string") throw wrong();
      return canonicalDateTime(raw, name);
    case "Guid":
      // Kept as written (Azurite and serve answer a Guid in the case it was sent); compared ignoring case.
      if (typeof raw !== "string" || !GUID.test(raw)) throw wrong();
      return raw;
    case "Binary":
      if (typeof raw !== "string" || !BASE64.test(raw)) throw wrong();
      return raw;
  }
}

/**
 * A DateTime as `YYYY-MM-DDTHH:MM:SS.fffffffZ` (seven fraction digits, UTC), the service's full
 * precision (100 ns ticks), so equal instants compare equal as text.
 */
export function canonicalDateTime(text: string, name: string): string {
  if (CANONICAL_DATE_TIME.test(text)) return text;
  const match = DATE_TIME.exec(text);
  if (match === null)
    throw new RowError(`property '${name}' is not a valid Edm.DateTime: ${JSON.stringify(text)}`);
  const [, minute, seconds = ":00", fraction = "", zone] = match;
  const digits = fraction.padEnd(7, "0");
  if (zone === "Z") return `${minute}${seconds}.${digits}Z`;
  // An offset: shift the whole seconds in UTC; the fraction stays as written.
  const local = new Date(`${minute}${seconds}Z`);
  if (Number.isNaN(local.getTime()))
    throw new RowError(`property '${name}' is not a valid Edm.DateTime: ${text}`);
  const sign = zone!.startsWith("-") ? -1 : 1;
  const offsetMs = sign * (Number(zone!.slice(1, 3)) * 60 + Number(zone!.slice(4, 6))) * 60_000;
  const utc = new Date(local.getTime() - offsetMs).toISOString();
  return `${utc.slice(0, 19)}.${digits}Z`;
}

/**
 * Checks what the service would refuse in any case, before a request: key characters and sizes,
 * property names and count, String/Binary sizes and the entity size. Throws `RowError`.
 */
export function checkRow(row: Row): void {
  try {
    assertValidKey("PartitionKey", row.partitionKey);
    assertValidKey("RowKey", row.rowKey);
  } catch (error) {
    throw new RowError((error as Error).message);
  }
  if (row.properties.length > ServiceLimits.maxProperties) {
    throw new RowError(
      `the entity has ${row.properties.length} properties; the service allows ${ServiceLimits.maxProperties}`,
    );
  }
  let bytes = 4 + 2 * (row.partitionKey.length + row.rowKey.length);
  for (const p of row.properties) {
    if (!PROPERTY_NAME.test(p.name) || p.name.length > ServiceLimits.maxPropertyNameLength) {
      throw new RowError(`'${p.name}' is not a valid property name`);
    }
    let length = 0;
    if (p.type === "String") {
      length = (p.value as string).length;
      if (length > ServiceLimits.maxStringLength) {
        throw new RowError(
          `property '${p.name}' is ${length} characters; the service allows 32,767 (tablekit: 32,000)`,
        );
      }
    } else if (p.type === "Binary") {
      length = binaryLength(p.value as string);
      if (length > ServiceLimits.maxBinaryBytes) {
        throw new RowError(`property '${p.name}' is ${length} bytes; the service allows 65,536`);
      }
    }
    bytes += 8 + 2 * p.name.length + propertyValueBytes(p.type, length);
  }
  if (bytes > ServiceLimits.maxEntityBytes) {
    throw new RowError(`the entity is ${bytes} bytes by the service's formula; the service allows 1 MiB`);
  }
}

function binaryLength(base64: string): number {
  const padding = base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0;
  return (base64.length / 4) * 3 - padding;
}

/** A Double as JSON text: a number (`-0` kept), or the service's "NaN" / "Infinity" / "-Infinity". */
function doubleJson(value: number): string {
  if (Number.isFinite(value)) return Object.is(value, -0) ? "-0.0" : String(value);
  return Number.isNaN(value) ? '"NaN"' : value > 0 ? '"Infinity"' : '"-Infinity"';
}

function valueJson(p: RowProperty): string {
  switch (p.type) {
    case "Int32":
      return String(p.value);
    case "Int64":
    case "DateTime":
    case "Guid":
    case "Binary":
      // Digits, ISO dates, hex and base64 (checked on the way in) need no escaping.
      return `"${p.value}"`;
    case "Double":
      return doubleJson(p.value as number);
    case "Boolean":
      return p.value ? "true" : "false";
    default:
      return JSON.stringify(p.value);
  }
}

/**
 * One line of the format: PartitionKey, RowKey, Timestamp, then the properties in the service's
 * order, every non-String one preceded by its annotation. No line break at the end.
 */
export function formatLine(row: Row): string {
  let line = `{"PartitionKey":${JSON.stringify(row.partitionKey)},"RowKey":${JSON.stringify(row.rowKey)}`;
  if (row.timestamp !== undefined) {
    line += `,"Timestamp@odata.type":"Edm.DateTime","Timestamp":"${row.timestamp}"`;
  }
  for (const p of row.properties) {
    const pieces = piecesOf(p.name);
    if (p.type !== "String") line += `${pieces.annotation}${p.type}"`;
    line += pieces.value + valueJson(p);
  }
  return `${line}}`;
}

/**
 * The JSON body of a write of `row`: keys and properties, annotated where JSON alone would lose the
 * type (Int64, Double, DateTime, Guid, Binary: as `@azure/data-tables` sends them). No Timestamp.
 */
export function entityBody(row: Row): string {
  let body = `{"PartitionKey":${JSON.stringify(row.partitionKey)},"RowKey":${JSON.stringify(row.rowKey)}`;
  for (const p of row.properties) {
    const pieces = piecesOf(p.name);
    if (p.type !== "String" && p.type !== "Int32" && p.type !== "Boolean") {
      body += `${pieces.annotation}${p.type}"`;
    }
    body += pieces.value + valueJson(p);
  }
  return `${body}}`;
}

/** The first difference between two rows' properties (Timestamp aside), or `undefined` when equal. */
export function rowDifference(a: Row, b: Row): string | undefined {
  const theirs = new Map(b.properties.map((p) => [p.name, p]));
  for (const p of a.properties) {
    const q = theirs.get(p.name);
    if (q === undefined) return `'${p.name}' is missing on the second side`;
    if (q.type !== p.type)
      return `'${p.name}' is Edm.${p.type} on the first side, Edm.${q.type} on the second`;
    const same =
      p.type === "Guid"
        ? (p.value as string).toLowerCase() === (q.value as string).toLowerCase()
        : Object.is(p.value, q.value);
    if (!same) {
      return `'${p.name}' differs: ${valueJson(p)} vs ${valueJson(q)}`;
    }
    theirs.delete(p.name);
  }
  for (const name of theirs.keys()) return `'${name}' is missing on the first side`;
  return undefined;
}
