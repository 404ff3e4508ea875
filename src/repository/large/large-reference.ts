import { randomUUID } from "node:crypto";
import { SchemaError, ValidationError } from "../../errors.js";

/**
 * Where a large value lives, and how the row points at it (part of the stored format):
 * - container: `tablekit-` + the physical table name (with the context's `tablePrefix`) lowercased.
 *   Table names are 3-63 letters and digits and the service compares them case-insensitively, so the
 *   mapping is one-to-one; a container name may have at most 63 characters, so tables of more than
 *   54 characters cannot hold large values (`SchemaError`).
 * - blob: `k<PartitionKey>/k<RowKey>/<property>/<uuid>`, each key as base64url of its UTF-8 (no
 *   escaping pitfalls: `/`, `.`, `%` and control characters never appear), a fresh UUID per write, so a
 *   replace writes a new blob and the old one can be removed once the row no longer points at it.
 * - row: the column's property holds the String `tkblob1:<byte length>:<blob name>`.
 */

/** The prefix of every large-value container. */
export const LARGE_CONTAINER_PREFIX = "tablekit-";
/** Blob Storage's container name limit. */
const MAX_CONTAINER = 63;
/** Blob Storage's blob name limit. */
const MAX_BLOB_NAME = 1024;
/** The prefix of a reference stored in the row (version 1 of the format). */
const REFERENCE_PREFIX = "tkblob1:";

/** The container of a table's large values; `SchemaError` when the table name is too long for one. */
export function containerOf(table: string): string {
  const name = LARGE_CONTAINER_PREFIX + table.toLowerCase();
  if (name.length > MAX_CONTAINER) {
    throw new SchemaError(
      `table '${table}' cannot hold large values: their container '${name}' would be longer than Blob Storage's ${MAX_CONTAINER} characters (use a table name of at most ${MAX_CONTAINER - LARGE_CONTAINER_PREFIX.length} characters, prefix included)`,
    );
  }
  return name;
}

/** What a blob name says: the entity's keys and the column's property. */
export interface BlobOwner {
  partitionKey: string;
  rowKey: string;
  property: string;
}

/** A new, unique blob name for one write of one column of one entity; `ValidationError` if the keys are too long. */
export function newBlobName(owner: BlobOwner): string {
  const name = `${ownerPrefix(owner.partitionKey, owner.rowKey)}${owner.property}/${randomUUID()}`;
  if (name.length > MAX_BLOB_NAME) {
    throw new ValidationError(
      "large-keys",
      `the keys are too long for a large value's blob name (${name.length} of at most ${MAX_BLOB_NAME} characters; PartitionKey and RowKey are stored base64url-encoded)`,
    );
  }
  return name;
}

/** The name prefix of every blob of one entity. */
export function ownerPrefix(partitionKey: string, rowKey: string): string {
  return `k${encodeKey(partitionKey)}/k${encodeKey(rowKey)}/`;
}

/** The owner of a blob written by tablekit, or `undefined` for any other name (left alone). */
export function ownerOf(name: string): BlobOwner | undefined {
  const parts = name.split("/");
  if (parts.length !== 4) return undefined;
  const [pk, rk, property] = parts as [string, string, string, string];
  if (!pk.startsWith("k") || !rk.startsWith("k") || property === "") return undefined;
  return { partitionKey: decodeKey(pk.slice(1)), rowKey: decodeKey(rk.slice(1)), property };
}

/** The reference stored in the row. */
export function formatReference(byteLength: number, blobName: string): string {
  return `${REFERENCE_PREFIX}${byteLength}:${blobName}`;
}

/** The blob name a stored property refers to, or `undefined` when it holds no reference. */
export function parseReference(stored: unknown): string | undefined {
  if (typeof stored !== "string" || !stored.startsWith(REFERENCE_PREFIX)) return undefined;
  const at = stored.indexOf(":", REFERENCE_PREFIX.length);
  return at < 0 ? undefined : stored.slice(at + 1);
}

function encodeKey(key: string): string {
  return Buffer.from(key, "utf8").toString("base64url");
}

function decodeKey(text: string): string {
  return Buffer.from(text, "base64url").toString("utf8");
}
