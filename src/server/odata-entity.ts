import {
  type EdmValue,
  type EntityRecord,
  SHADOWED_PROPERTIES,
  type WireEntityWithShadowed,
} from "../store/served-store.js";
import { ticksToIso } from "../util/unix-ticks.js";
import { EDM_TYPES, type EdmType, type WireEntity, type WireValue } from "../wire/wire-entity.js";
import { badRequest } from "./service-error.js";

/** The JSON metadata level a client asked for in `Accept` (`application/json;odata=…`). */
export type MetadataLevel = "nometadata" | "minimalmetadata" | "fullmetadata";

/**
 * The metadata level a request asks for: from its `$format` query option when given, which takes
 * precedence over the `Accept` header (OData v3 "System Query Options": "If the $format query option is
 * present in a request it MUST take precedence over the value(s) specified in the Accept request
 * header"); minimal metadata when neither names a level (`$format=json`), as the service does.
 */
export function metadataLevel(accept: string | undefined, format?: string | null): MetadataLevel {
  const text = format === null || format === undefined ? accept : format;
  const match = /odata=(nometadata|minimalmetadata|fullmetadata)/i.exec(text ?? "");
  return (match?.[1]?.toLowerCase() as MetadataLevel | undefined) ?? "minimalmetadata";
}

/** A JSON request body that must be an object (400 InvalidInput otherwise). */
export function parseJsonObject(text: string): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw badRequest("InvalidInput", "the request body is not valid JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw badRequest("InvalidInput", "the request body must be a JSON object");
  }
  return body as Record<string, unknown>;
}

/** The keys an entity's URL names (update, merge, delete); an insert takes them from the body. */
export interface EntityKeys {
  readonly partitionKey: string;
  readonly rowKey: string;
}

/**
 * Reads an OData JSON entity body straight into the port's wire entity. `X@odata.type` annotations
 * give a value's type; unannotated strings and booleans stay bare (String, Boolean), unannotated
 * numbers are Int32 when written as an integer in range, else Double (the service's inference, on the
 * JSON text). `odata.*` members and Timestamp are ignored; nulls mean "no property". With `keys` (from
 * the URL) body keys are optional but must agree; without them the body must carry both.
 */
export function readEntityBody(text: string, keys: EntityKeys | undefined): WireEntity {
  const members = parseJsonObject(text);
  const bodyPartitionKey = bodyKey(members, "PartitionKey");
  const bodyRowKey = bodyKey(members, "RowKey");
  const partitionKey = keys?.partitionKey ?? bodyPartitionKey;
  const rowKey = keys?.rowKey ?? bodyRowKey;
  if (partitionKey === undefined || rowKey === undefined) {
    throw badRequest("PropertiesNeedValue", "PartitionKey and RowKey are required");
  }
  if (
    keys !== undefined &&
    ((bodyPartitionKey !== undefined && bodyPartitionKey !== keys.partitionKey) ||
      (bodyRowKey !== undefined && bodyRowKey !== keys.rowKey))
  ) {
    // The URL names the entity; a body that names another one is refused as the service does.
    throw badRequest("InvalidInput", "the keys in the body differ from the keys in the URL");
  }
  const entity: WireEntityWithShadowed = { partitionKey, rowKey };
  const names = Object.keys(members);
  // Most bodies carry no annotations (the SDKs send them for Int64, DateTime, Guid, Binary, Double only).
  let annotated = false;
  for (const name of names) if (name.includes("@")) annotated = true;
  let fractional: ReadonlySet<string> | undefined;
  let shadowed: Record<string, WireValue> | undefined;
  for (const name of names) {
    const value = members[name];
    if (value === null || name === "PartitionKey" || name === "RowKey" || name === "Timestamp") continue;
    if (name.startsWith("odata.") || (annotated && name.includes("@"))) continue;
    const annotation = annotated ? members[`${name}@odata.type`] : undefined;
    let wire: WireValue;
    // JSON.parse reads `1.0` as 1; the service reads the text, where a fraction or exponent makes a
    // Double. Only an unannotated whole number needs the text, so it is scanned only then.
    if (annotation === undefined && typeof value === "number" && Number.isInteger(value)) {
      fractional ??= INTEGRAL_FRACTION.test(text) ? fractionalMembers(text) : NO_MEMBERS;
      wire = fractional.has(name) ? { type: "Double", value } : value;
    } else {
      wire = typedValue(name, value, annotation);
    }
    if (name === "partitionKey" || name === "rowKey" || name === "etag" || name === "timestamp") {
      // Ordinary property names to the service, but the port's own fields: passed beside the entity.
      shadowed ??= Object.create(null) as Record<string, WireValue>;
      shadowed[name] = wire;
    } else if (name === "__proto__") {
      // Assigning "__proto__" would replace the prototype instead of adding a property.
      Object.defineProperty(entity, name, {
        value: wire,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      entity[name] = wire;
    }
  }
  if (shadowed !== undefined) entity[SHADOWED_PROPERTIES] = shadowed;
  return entity;
}

/** A key member of the body: undefined when absent or null, 400 when not a string. */
function bodyKey(members: Record<string, unknown>, name: "PartitionKey" | "RowKey"): string | undefined {
  const value = members[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw badRequest("InvalidInput", `${name} must be a string`);
  return value;
}

// Number text whose value JSON.parse makes whole although the service reads a Double: a fraction of
// zeros only (`1.0`, `2.00`) or an exponent (`2e3`, `1.5E1`). Other fractions (`0.5`) parse to a
// non-integer anyway, so text without these needs no scan (strings that happen to match only cost one).
const INTEGRAL_FRACTION = /\d(?:\.0*(?![0-9])|[eE][+-]?\d)/;
const NO_MEMBERS: ReadonlySet<string> = new Set();

/**
 * The top-level members of a JSON object text whose value is a number written with a fraction or an
 * exponent (`1.0`, `2e3`). The text has already parsed, so the scan only tracks strings and nesting.
 */
export function fractionalMembers(text: string): Set<string> {
  const found = new Set<string>();
  let depth = 0;
  let key: string | undefined;
  let afterColon = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      if (depth === 1 && !afterColon) key = JSON.parse(text.slice(i, j + 1)) as string;
      i = j + 1;
      continue;
    }
    if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
    else if (depth === 1 && c === ":") afterColon = true;
    else if (depth === 1 && c === ",") afterColon = false;
    else if (depth === 1 && afterColon && key !== undefined && (c === "-" || (c >= "0" && c <= "9"))) {
      let j = i + 1;
      while (j < text.length && /[0-9.eE+-]/.test(text[j] as string)) j++;
      // The last occurrence of a member wins, as in JSON.parse.
      if (/[.eE]/.test(text.slice(i, j))) found.add(key);
      else found.delete(key);
      i = j;
      continue;
    }
    i++;
  }
  return found;
}

function typedValue(name: string, value: unknown, annotation: unknown): WireValue {
  if (annotation !== undefined) {
    const type = typeof annotation === "string" && annotation.startsWith("Edm.") ? annotation.slice(4) : "";
    if (!EDM_TYPES.has(type))
      throw badRequest("InvalidInput", `property '${name}': unknown type ${String(annotation)}`);
    if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") {
      throw badRequest("InvalidInput", `property '${name}': a ${type} value must be a JSON scalar`);
    }
    return { type: type as EdmType, value };
  }
  switch (typeof value) {
    case "string":
    case "boolean":
    case "number":
      return value; // bare: the store types strings, booleans and numbers exactly as the service does
    default:
      throw badRequest("InvalidInput", `property '${name}': objects and arrays are not property values`);
  }
}

/** Where the rendered JSON points its metadata links. */
export interface RenderContext {
  readonly level: MetadataLevel;
  /** The account's base URL, e.g. `http://127.0.0.1:10002/devstoreaccount1`. */
  readonly base: string;
  readonly account: string;
  readonly table: string;
}

/**
 * Renders a record as the service's JSON: keys, Timestamp with seven fraction digits, values with
 * `@odata.type` where JSON alone would lose the type (Int64, DateTime, Guid, Binary, and Doubles
 * that look integral or are not finite), plus `odata.etag` and links by metadata level.
 */
export function renderRecord(
  record: EntityRecord,
  context: RenderContext,
  select: ReadonlySet<string> | undefined,
  single: boolean,
): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null);
  const { level } = context;
  if (level !== "nometadata") renderMetadata(out, record, context, single);
  renderSystemProperties(out, record, level, select);
  for (const [name, v] of record.properties) {
    if (select !== undefined && !select.has(name)) continue;
    if (level !== "nometadata" && isAnnotated(v)) out[`${name}@odata.type`] = `Edm.${v.type}`;
    out[name] = jsonValue(v);
  }
  // As Azure answers: a selected property the entity lacks comes as null (the service stores no nulls).
  if (select !== undefined) {
    for (const name of select) {
      if (!(name in out) && !SYSTEM_NAMES.has(name)) out[name] = null;
    }
  }
  return out;
}

/** `odata.metadata` (of a single entity), then `odata.etag`, with the type, id and edit link at full metadata. */
function renderMetadata(
  out: Record<string, unknown>,
  record: EntityRecord,
  context: RenderContext,
  single: boolean,
): void {
  if (single) out["odata.metadata"] = `${context.base}/$metadata#${context.table}/@Element`;
  if (context.level === "fullmetadata") {
    const id = `${context.table}(PartitionKey='${quoteKey(record.partitionKey)}',RowKey='${quoteKey(record.rowKey)}')`;
    out["odata.type"] = `${context.account}.${context.table}`;
    out["odata.id"] = `${context.base}/${id}`;
    out["odata.etag"] = record.etag;
    out["odata.editLink"] = id;
  } else {
    out["odata.etag"] = record.etag;
  }
}

/**
 * PartitionKey, RowKey and Timestamp. With $select Azure sends only the selected properties: these too
 * come only when named (odata.etag always comes). A selected property the entity lacks comes as null.
 */
function renderSystemProperties(
  out: Record<string, unknown>,
  record: EntityRecord,
  level: MetadataLevel,
  select: ReadonlySet<string> | undefined,
): void {
  if (select === undefined || select.has("PartitionKey")) out.PartitionKey = record.partitionKey;
  if (select === undefined || select.has("RowKey")) out.RowKey = record.rowKey;
  if (select === undefined || select.has("Timestamp")) {
    // Azure annotates Timestamp only with full metadata (minimal metadata leaves it a bare string).
    if (level === "fullmetadata") out["Timestamp@odata.type"] = "Edm.DateTime";
    out.Timestamp = ticksToIso(record.timestamp);
  }
}

/**
 * Whether a value carries `@odata.type`: where JSON alone would lose its type (Int64, DateTime, Guid,
 * Binary, and Doubles that look integral or are not finite).
 */
function isAnnotated(v: EdmValue): boolean {
  switch (v.type) {
    case "String":
    case "Boolean":
    case "Int32":
      return false;
    case "Double":
      return !Number.isFinite(v.value) || Number.isInteger(v.value);
    default:
      return true;
  }
}

/** A value as the service's JSON: Int64 as text, DateTime as ISO text, Binary as base64, non-finite Doubles by name. */
function jsonValue(v: EdmValue): unknown {
  switch (v.type) {
    case "String":
    case "Boolean":
    case "Int32":
    case "Guid":
      return v.value;
    case "Double":
      return Number.isFinite(v.value)
        ? v.value
        : v.value > 0
          ? "Infinity"
          : v.value < 0
            ? "-Infinity"
            : "NaN";
    case "Int64":
      return v.value.toString();
    case "DateTime":
      return ticksToIso(v.value);
    case "Binary":
      return Buffer.from(v.value.buffer, v.value.byteOffset, v.value.byteLength).toString("base64");
  }
}

const SYSTEM_NAMES: ReadonlySet<string> = new Set(["PartitionKey", "RowKey", "Timestamp"]);

/** A key inside `(PartitionKey='…')`: single quotes doubled, then URL-encoded. */
export function quoteKey(key: string): string {
  return encodeURIComponent(key.replaceAll("'", "''"));
}
