import type { TableEntity } from "@azure/data-tables";
import type { StoredEntity, TypedValue, WireEntity } from "../table-store.js";

/**
 * Entities cross the port in `@azure/data-tables`' own shape, so the adapter passes them through.
 * Only values the SDK would serialize wrongly are fixed, and only then is the entity copied.
 */

/** Returns `entity` ready for the SDK's serializer: itself, or a fixed shallow copy when a value needs it. */
export function toSdkEntity(entity: WireEntity): TableEntity {
  for (const key in entity) {
    if (needsFix(key, entity[key])) return fixedCopy(entity);
  }
  return entity as TableEntity;
}

/** Brings a point-read result to the port's `StoredEntity` shape (in place: the SDK built a fresh object). */
export function fromSdkPointEntity(entity: Record<string, unknown>): StoredEntity {
  // A point read carries the response's `odata.metadata` URL as if it were a property.
  for (const key in entity) {
    if (key.startsWith("odata.")) delete entity[key];
  }
  return fromSdkQueryEntity(entity);
}

/** Brings one query result to the port's `StoredEntity` shape (in place). */
export function fromSdkQueryEntity(entity: Record<string, unknown>): StoredEntity {
  // Azure answers a $select-ed property the entity lacks with null (it stores no nulls): leave it out,
  // so a selected bookkeeping property (e.g. a summary row's marker) is present only where it was written.
  for (const key in entity) {
    if (entity[key] === null) delete entity[key];
  }
  // The service sends Timestamp without an Edm.DateTime annotation, so the SDK leaves it a string.
  const timestamp = entity.timestamp;
  if (typeof timestamp === "string") entity.timestamp = new Date(timestamp);
  return entity as StoredEntity;
}

function needsFix(key: string, value: unknown): boolean {
  // The SDK maps these two names onto the system properties odata.etag / Timestamp: never send them.
  if (key === "etag" || key === "timestamp") return true;
  if (typeof value === "number") return !Number.isFinite(value);
  if (typeof value !== "object" || value === null) return false;
  if (value instanceof Uint8Array) return isPartialView(value);
  const typed = value as Partial<TypedValue>;
  return typed.type === "Double" && typeof typed.value === "number" && !Number.isFinite(typed.value);
}

function fixedCopy(entity: WireEntity): TableEntity {
  const copy: Record<string, unknown> = {};
  for (const key in entity) {
    if (key === "etag" || key === "timestamp") continue;
    copy[key] = fixValue(entity[key]);
  }
  return copy as TableEntity;
}

function fixValue(value: unknown): unknown {
  // JSON has no NaN/Infinity (they would become null, which the service rejects): the service's
  // wire form for these doubles is the string "NaN" / "Infinity" / "-Infinity" with an Edm.Double annotation.
  if (typeof value === "number")
    return Number.isFinite(value) ? value : { type: "Double", value: String(value) };
  if (value instanceof Uint8Array) {
    // The SDK base64-encodes `value.buffer`, i.e. the whole backing store of a view: hand it a Buffer
    // over exactly the viewed bytes (no copy).
    return isPartialView(value) ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : value;
  }
  if (typeof value === "object" && value !== null) {
    const typed = value as TypedValue;
    if (typed.type === "Double" && typeof typed.value === "number" && !Number.isFinite(typed.value)) {
      return { type: "Double", value: String(typed.value) };
    }
  }
  return value;
}

function isPartialView(bytes: Uint8Array): boolean {
  return !Buffer.isBuffer(bytes) && (bytes.byteOffset !== 0 || bytes.byteLength !== bytes.buffer.byteLength);
}
