import type { EdmType, StoredEntity, WireValue } from "../table-store.js";

const ANNOTATION = "@odata.type";

/**
 * A row of a minimal-metadata response parsed from text with whole Doubles marked (double-marks.ts:
 * a number wrapped in an array is a Double), in the port's typed-read form (`TableStore.queryTypedPage`):
 * annotated values (`Edm.Int64`, `Edm.DateTime`, `Edm.Guid`, `Edm.Binary`, a Double's "NaN") as their
 * type says, a marked number as a Double, any other number as the Int32 the service wrote unannotated.
 */
export function typedRowFromJson(json: unknown): StoredEntity {
  const object = json as Record<string, unknown>;
  const row: StoredEntity = {
    partitionKey: String(object.PartitionKey),
    rowKey: String(object.RowKey),
    etag: typeof object["odata.etag"] === "string" ? object["odata.etag"] : "",
  };
  if (typeof object.Timestamp === "string") row.timestamp = new Date(object.Timestamp);
  for (const [name, raw] of Object.entries(object)) {
    if (name.startsWith("odata.") || name.endsWith(ANNOTATION)) continue;
    if (name === "PartitionKey" || name === "RowKey" || name === "Timestamp") continue;
    const annotation = object[`${name}${ANNOTATION}`];
    const type = typeof annotation === "string" ? (annotation.replace(/^Edm\./, "") as EdmType) : undefined;
    Object.defineProperty(row, name, {
      value: typedValue(raw, type),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return row;
}

function typedValue(raw: unknown, type: EdmType | undefined): WireValue {
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (type === "Binary" && typeof value === "string") return new Uint8Array(Buffer.from(value, "base64"));
  if (type === "Double" || Array.isArray(raw)) {
    return { type: "Double", value: typeof value === "number" ? value : String(value) } as WireValue;
  }
  if (type === "Int64" || type === "DateTime" || type === "Guid") return { type, value: String(value) };
  return value as WireValue;
}
