import type { StoredEntity } from "../table-store.js";

/**
 * Entities read through the SDK arrive in the port's own shape but for a few names and values;
 * these bring them the rest of the way. (Writes are serialised by entity-writes.ts and batch-request.ts.)
 */

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
