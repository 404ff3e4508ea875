import { etagOf } from "./entity-etag.js";
import { firstPartEtag } from "./wide-rows.js";

/**
 * The service's ETag of an entity is its Timestamp, URL-encoded:
 * `W/"datetime'2026-11-25T13%3A00%3A00.1234567Z'"` (Azure Table, Azurite, Cosmos DB Table API and
 * MemoryStore alike). Reading it out of the tracked ETag gives reads and writes the same answer
 * (a write's response carries the ETag, not the Timestamp) with no second record per instance.
 */
const ETAG_TIMESTAMP = /^W\/"datetime'([^']+)'"$/;

/**
 * The service's last-modified time of an entity read or written through a repository (its
 * Timestamp, to the millisecond), or `undefined` when tablekit has not seen it stored.
 * @example
 * const e = await employees.getOrThrow(key);
 * console.log(timestampOf(e)?.toISOString());
 */
export function timestampOf(entity: object): Date | undefined {
  const tracked = etagOf(entity);
  // A wide entity's rows are written in one transaction: its first row's Timestamp is the entity's.
  const etag = tracked?.startsWith("[") ? firstPartEtag(tracked) : tracked;
  if (etag === undefined) return undefined;
  const match = ETAG_TIMESTAMP.exec(etag);
  if (!match) return undefined;
  let text: string;
  try {
    text = decodeURIComponent(match[1] as string);
  } catch {
    return undefined;
  }
  const at = new Date(text);
  return Number.isNaN(at.getTime()) ? undefined : at;
}
