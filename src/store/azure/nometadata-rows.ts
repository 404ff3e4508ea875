import type { EdmType, PropertyTypes, StoredEntity } from "../table-store.js";

/**
 * Rows read with `odata=nometadata` carry no type annotations and no `odata.etag`: Int64, DateTime,
 * Guid and Binary arrive as plain strings. The reader's model supplies the types, and every value
 * becomes exactly what `@azure/data-tables` returns for the same row read with minimal metadata
 * (serialization.js `getTypedObject`): Int64 → `bigint`, DateTime → `Date`, Guid → `{ type: "Guid", value }`,
 * Binary → `Buffer`, Double → the number or the service's "NaN" / "Infinity" / "-Infinity" text.
 *
 * Numbers and booleans arrive alike in both formats, so they pass through whatever the model says.
 * A string whose text cannot be the model's type (another client wrote a different type, e.g. a
 * string in an Int32 column) makes the row untypable: the reader returns `undefined` and the caller
 * reads it again with minimal metadata. What nometadata cannot tell apart is a String whose text is a
 * valid value of the column's type (e.g. "42" in an Int64 column); the column readers of tablekit read
 * such a String to the same value under either format.
 */

/** Turns one parsed nometadata row into the port's `StoredEntity`, or `undefined` when a value does not fit the model. */
export type NometadataRowReader = (row: Record<string, unknown>) => StoredEntity | undefined;

const readers = new WeakMap<PropertyTypes, NometadataRowReader>();

/** The compiled reader of rows of one model (cached per `types` object). */
export function nometadataRowReader(types: PropertyTypes): NometadataRowReader {
  let reader = readers.get(types);
  if (reader === undefined) {
    reader = compileRowReader(types);
    readers.set(types, reader);
  }
  return reader;
}

/**
 * A row read under `$select` as the port answers one (table-store.ts `StoreQuery.select`): the keys
 * and `timestamp` only when named. A nometadata read always asks for Timestamp (the ETag is derived
 * from it) and the reader sets the keys from what came back; both are dropped here when not named.
 */
export function asSelected(entity: StoredEntity, select: readonly string[] | undefined): StoredEntity {
  if (select === undefined || select.length === 0) return entity;
  const row = entity as Partial<StoredEntity>;
  if (!select.includes("PartitionKey")) delete row.partitionKey;
  if (!select.includes("RowKey")) delete row.rowKey;
  if (!select.includes("Timestamp")) delete row.timestamp;
  return entity;
}

/**
 * The service's ETag of an entity is its Timestamp in a weak `datetime'…'` literal, URL-encoded, with
 * the fraction of the second always written to 7 digits (100 ns ticks): `W/"datetime'2026-11-25T13%3A00%3A00.1200000Z'"`
 * for the Timestamp `2026-11-25T13:00:00.12Z`. Checked against Azurite's minimal-metadata ETags in
 * test/store-azure/azure-nometadata.test.ts. `undefined` when the text is not such a Timestamp.
 */
export function etagFromTimestamp(timestamp: unknown): string | undefined {
  if (typeof timestamp !== "string") return undefined;
  // The common form, already 7 digits: "2026-11-25T13:00:00.1234567Z".
  if (timestamp.length === 28 && FULL_TIMESTAMP.test(timestamp)) {
    return `W/"datetime'${timestamp.slice(0, 13)}%3A${timestamp.slice(14, 16)}%3A${timestamp.slice(17)}'"`;
  }
  const match = TIMESTAMP.exec(timestamp);
  if (match === null) return undefined;
  const [, hour, minute, second, fraction = ""] = match;
  return `W/"datetime'${hour}%3A${minute}%3A${second}.${fraction.padEnd(7, "0")}Z'"`;
}

const FULL_TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$/;
/** Date and hour, minute, second, fraction of a Timestamp (the fraction may be shorter or absent). */
const TIMESTAMP = /^(\d{4}-\d\d-\d\dT\d\d):(\d\d):(\d\d)(?:\.(\d{1,7}))?Z$/;

/** Text forms the service sends for each annotated type under nometadata. */
const INT64 = /^-?\d{1,19}$/;
const DATE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d{1,7})?)?Z$/;
const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const NON_FINITE = new Set(["NaN", "Infinity", "-Infinity"]);

/** The generated statement typing one string value `v` of a column, or failing the row. */
function stringCase(type: EdmType): string {
  switch (type) {
    case "String":
      return "";
    case "Int32":
    case "Boolean":
      return "return undefined;";
    case "Double":
      return "if (!nonFinite.has(v)) return undefined;";
    case "Int64":
      return "if (!int64.test(v)) return undefined; v = BigInt(v);";
    case "DateTime":
      return "if (!dateTime.test(v)) return undefined; v = new Date(v);";
    case "Guid":
      return 'if (!guid.test(v)) return undefined; v = { type: "Guid", value: v };';
    case "Binary":
      return 'if (!base64.test(v)) return undefined; v = Buffer.from(v, "base64");';
  }
}

function compileRowReader(types: PropertyTypes): NometadataRowReader {
  const names = Object.keys(types).filter((n) => n !== "PartitionKey" && n !== "RowKey" && n !== "Timestamp");
  const skip = ["PartitionKey", "RowKey", "Timestamp", ...names];
  const body = [
    "const ts = r.Timestamp;",
    "const etag = etagOf(ts);",
    "if (etag === undefined) return undefined;",
    "const o = { partitionKey: r.PartitionKey, rowKey: r.RowKey, etag, timestamp: new Date(ts) };",
    "let v;",
    ...names.map((name) => {
      const key = JSON.stringify(name);
      const typed = stringCase(types[name] as EdmType);
      return typed === ""
        ? `v = r[${key}]; if (v != null) o[${key}] = v;`
        : `v = r[${key}]; if (v != null) { if (typeof v === "string") { ${typed} } o[${key}] = v; }`;
    }),
    // Properties outside the model (other types' columns, bookkeeping) keep their JSON values. A null
    // is a $select-ed property the entity lacks (the service stores no nulls): it is left out.
    "for (const k in r) {",
    `  switch (k) { ${skip.map((n) => `case ${JSON.stringify(n)}:`).join(" ")} break; default: if (r[k] !== null) o[k] = r[k]; }`,
    "}",
    "return o;",
  ].join("\n");
  return new Function(
    "etagOf",
    "nonFinite",
    "int64",
    "dateTime",
    "guid",
    "base64",
    "Buffer",
    `return function readNometadataRow(r) {\n${body}\n};`,
  )(etagFromTimestamp, NON_FINITE, INT64, DATE_TIME, GUID, BASE64, Buffer) as NometadataRowReader;
}
