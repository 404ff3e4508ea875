import { badRequest } from "../store/memory/service-errors.js";
import { ticksToIso } from "../store/memory/ticks.js";
import {
  type EntityRecord,
  SHADOWED_PROPERTIES,
  type WireEntityWithShadowed,
} from "../store/memory/typed-entity.js";
import { EDM_TYPES, type EdmType, type WireEntity, type WireValue } from "../wire/wire-entity.js";

/** The JSON metadata level a client asked for in `Accept` (`application/json;odata=…`). */
export type MetadataLevel = "nometadata" | "minimalmetadata" | "fullmetadata";

/** The metadata level of an `Accept` header; minimal metadata when absent or unspecified, as the service does. */
export function metadataLevel(accept: string | undefined): MetadataLevel {
  const match = /odata=(nometadata|minimalmetadata|fullmetadata)/i.exec(accept ?? "");
  return (match?.[1]?.toLowerCase() as MetadataLevel | undefined) ?? "minimalmetadata";
}

/**
 * Reads an OData JSON entity body into the port's wire shape, every value explicitly typed so no type
 * is guessed twice: `X@odata.type` annotations give the type; unannotated strings and booleans are
 * String and Boolean, unannotated numbers Int32 when written as an integer in range, else Double (the
 * service's inference, on the JSON text). `odata.*` members and Timestamp are ignored; nulls mean
 * "no property".
 */
export function parseEntityBody(text: string): Record<string, WireValue> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw badRequest("InvalidInput", "the request body is not valid JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw badRequest("InvalidInput", "the request body must be a JSON object");
  }
  const members = body as Record<string, unknown>;
  const out: Record<string, WireValue> = Object.create(null);
  const names = Object.keys(members);
  // Most bodies carry no annotations (the SDKs send them for Int64, DateTime, Guid, Binary, Double only).
  let annotated = false;
  for (const name of names) if (name.includes("@")) annotated = true;
  let fractional: ReadonlySet<string> | undefined;
  for (const name of names) {
    const value = members[name];
    if (name.startsWith("odata.") || name.includes("@")) continue;
    if (name === "Timestamp" || value === null) continue;
    const annotation = annotated ? members[`${name}@odata.type`] : undefined;
    if (name === "PartitionKey" || name === "RowKey") {
      if (typeof value !== "string") throw badRequest("InvalidInput", `${name} must be a string`);
      out[name] = value;
      continue;
    }
    // JSON.parse reads `1.0` as 1; the service reads the text, where a fraction or exponent makes a
    // Double. Only an unannotated whole number needs the text, so it is scanned only then.
    if (annotation === undefined && typeof value === "number" && Number.isInteger(value)) {
      // A fraction or exponent always follows a digit, so text without one needs no scan.
      fractional ??= MAY_HOLD_FRACTION.test(text) ? fractionalMembers(text) : NO_MEMBERS;
      if (fractional.has(name)) {
        out[name] = { type: "Double", value };
        continue;
      }
    }
    out[name] = typedValue(name, value, annotation);
  }
  return out;
}

const MAY_HOLD_FRACTION = /\d[.eE]/;
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
      return { type: "String", value };
    case "boolean":
      return value;
    case "number":
      return value; // the store infers Int32 or Double exactly as the service does
    default:
      throw badRequest("InvalidInput", `property '${name}': objects and arrays are not property values`);
  }
}

/** The port entity of a body whose keys come from the URL (update, merge, delete) or the body (insert). */
export function toWireEntity(
  properties: Record<string, WireValue>,
  keys: { partitionKey: string; rowKey: string } | undefined,
): WireEntity {
  const partitionKey = keys?.partitionKey ?? properties.PartitionKey;
  const rowKey = keys?.rowKey ?? properties.RowKey;
  if (typeof partitionKey !== "string" || typeof rowKey !== "string") {
    throw badRequest("PropertiesNeedValue", "PartitionKey and RowKey are required");
  }
  if (keys !== undefined) {
    // The URL names the entity; a body that names another one is refused as the service does.
    if (
      (properties.PartitionKey !== undefined && properties.PartitionKey !== keys.partitionKey) ||
      (properties.RowKey !== undefined && properties.RowKey !== keys.rowKey)
    ) {
      throw badRequest("InvalidInput", "the keys in the body differ from the keys in the URL");
    }
  }
  const entity: WireEntityWithShadowed = { partitionKey, rowKey };
  let shadowed: Record<string, WireValue> | undefined;
  for (const name in properties) {
    if (name === "PartitionKey" || name === "RowKey") continue;
    const value = properties[name] as WireValue;
    if (name === "partitionKey" || name === "rowKey" || name === "etag" || name === "timestamp") {
      // Ordinary property names to the service, but the port's own fields: passed beside the entity.
      shadowed ??= Object.create(null) as Record<string, WireValue>;
      shadowed[name] = value;
      continue;
    }
    // Assigning "__proto__" would replace the prototype instead of adding a property.
    if (name === "__proto__")
      Object.defineProperty(entity, name, { value, enumerable: true, writable: true, configurable: true });
    else entity[name] = value;
  }
  if (shadowed !== undefined) entity[SHADOWED_PROPERTIES] = shadowed;
  return entity;
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
  if (level !== "nometadata") {
    if (single) out["odata.metadata"] = `${context.base}/$metadata#${context.table}/@Element`;
    if (level === "fullmetadata") {
      const id = `${context.table}(PartitionKey='${quoteKey(record.partitionKey)}',RowKey='${quoteKey(record.rowKey)}')`;
      out["odata.type"] = `${context.account}.${context.table}`;
      out["odata.id"] = `${context.base}/${id}`;
      out["odata.etag"] = record.etag;
      out["odata.editLink"] = id;
    } else {
      out["odata.etag"] = record.etag;
    }
  }
  // With $select Azure sends only the selected properties: PartitionKey, RowKey and Timestamp too come
  // only when named (odata.etag always comes). A selected property the entity lacks comes as null.
  if (select === undefined || select.has("PartitionKey")) out.PartitionKey = record.partitionKey;
  if (select === undefined || select.has("RowKey")) out.RowKey = record.rowKey;
  if (select === undefined || select.has("Timestamp")) {
    // Azure annotates Timestamp only with full metadata (minimal metadata leaves it a bare string).
    if (level === "fullmetadata") out["Timestamp@odata.type"] = "Edm.DateTime";
    out.Timestamp = ticksToIso(record.timestamp);
  }
  for (const [name, v] of record.properties) {
    if (select !== undefined && !select.has(name)) continue;
    let json: unknown;
    let annotate = true;
    switch (v.type) {
      case "String":
        json = v.value;
        annotate = false;
        break;
      case "Boolean":
      case "Int32":
        json = v.value;
        annotate = false;
        break;
      case "Double":
        json = Number.isFinite(v.value)
          ? v.value
          : v.value > 0
            ? "Infinity"
            : v.value < 0
              ? "-Infinity"
              : "NaN";
        annotate = !Number.isFinite(v.value) || Number.isInteger(v.value);
        break;
      case "Int64":
        json = v.value.toString();
        break;
      case "DateTime":
        json = ticksToIso(v.value);
        break;
      case "Guid":
        json = v.value;
        break;
      case "Binary":
        json = Buffer.from(v.value.buffer, v.value.byteOffset, v.value.byteLength).toString("base64");
        break;
    }
    if (annotate && level !== "nometadata") out[`${name}@odata.type`] = `Edm.${v.type}`;
    out[name] = json;
  }
  // As Azure answers: a selected property the entity lacks comes as null (the service stores no nulls).
  if (select !== undefined) {
    for (const name of select) {
      if (!(name in out) && !SYSTEM_NAMES.has(name)) out[name] = null;
    }
  }
  return out;
}

const SYSTEM_NAMES: ReadonlySet<string> = new Set(["PartitionKey", "RowKey", "Timestamp"]);

/** A key inside `(PartitionKey='…')`: single quotes doubled, then URL-encoded. */
export function quoteKey(key: string): string {
  return encodeURIComponent(key.replaceAll("'", "''"));
}
