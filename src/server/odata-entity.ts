import { badRequest } from "../store/memory/service-errors.js";
import { ticksToIso } from "../store/memory/ticks.js";
import type { EntityRecord } from "../store/memory/typed-entity.js";
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
 * String and Boolean, unannotated numbers Int32 when integral and in range, else Double (the
 * service's inference). `odata.*` members and Timestamp are ignored; nulls mean "no property".
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
    out[name] = typedValue(name, value, annotation);
  }
  return out;
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
  const entity: WireEntity = { partitionKey, rowKey };
  for (const name in properties) {
    if (name === "PartitionKey" || name === "RowKey") continue;
    if (name === "partitionKey" || name === "rowKey" || name === "etag" || name === "timestamp") {
      // These names are the port's own fields; the memory store cannot hold them as user properties.
      throw badRequest("InvalidInput", `property name '${name}' is not supported by tablekit serve`);
    }
    const value = properties[name] as WireValue;
    // Assigning "__proto__" would replace the prototype instead of adding a property.
    if (name === "__proto__")
      Object.defineProperty(entity, name, { value, enumerable: true, writable: true, configurable: true });
    else entity[name] = value;
  }
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
  // With $select the keys and Timestamp still come (Azure sends Timestamp only when selected; kept
  // here because MemoryStore answers so through the port), and a selected property the entity lacks
  // comes as null, as Azure sends it (see test/store-azure/AZURITE-NOTES.md).
  out.PartitionKey = record.partitionKey;
  out.RowKey = record.rowKey;
  if (level !== "nometadata") out["Timestamp@odata.type"] = "Edm.DateTime";
  out.Timestamp = ticksToIso(record.timestamp);
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
