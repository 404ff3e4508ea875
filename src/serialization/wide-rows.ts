import { ValidationError } from "../errors.js";
import { propertyValueBytes } from "../util/entity-size.js";
import { ENTITY_TYPE_PROPERTY, WIDE_PART_PROPERTY } from "../wire/system-properties.js";
import type { StoredEntity, WireEntity, WireValue } from "../wire/wire-entity.js";

/**
 * The stored format of wide entities (part of the stored format: it never changes between versions).
 *
 * An entity whose RowKey is `K` is stored as rows `K + " 00"`, `K + " 01"`, … (a space, then the part
 * number in two digits; at most 100 parts, what one entity group transaction carries). The space is
 * the smallest character a key may hold (the service forbids control characters) and a wide entity's
 * RowKey may not contain one, so:
 * - the rows starting with `K + " "` are exactly K's parts: another entity's RowKey `K2` never starts
 *   with `K + " "`, even when `K` is a prefix of `K2` (`K2` would need a space after `K`);
 * - parts sort like their entities' RowKeys (`K + " "` sorts before `K + c` for every allowed `c`),
 *   each entity's parts are contiguous, and a RowKey range `[ge, lt)` of entity keys holds exactly the
 *   parts of the entities in it.
 * Every part carries `EntityType` and `_tkWide` = `"<parts>:<writeId>"`; the columns are spread over the
 * parts in declaration order, each part filled up to the service's per-row limits (252 properties
 * including those two, 1 MiB by the entity size formula) before the next one starts.
 */

/** Separates the entity's RowKey from the part number. */
export const WIDE_SEPARATOR = " ";

/** At most this many parts: one entity group transaction holds at most 100 operations. */
export const MAX_WIDE_PARTS = 100;

/** One row of a wide entity, recognised by its RowKey suffix and `_tkWide`. */
export interface WidePart {
  /** The entity's RowKey (without the suffix). */
  base: string;
  index: number;
  count: number;
  writeId: string;
}

/** The row limits a wide entity is split by (the backend's). */
export interface WideRowLimits {
  readonly maxProperties: number;
  readonly maxEntityBytes: number;
}

/** The RowKey of one part. */
export function partRowKey(base: string, index: number): string {
  return `${base}${WIDE_SEPARATOR}${String(index).padStart(2, "0")}`;
}

/** The RowKey range holding exactly the parts of the entity `base`: `[base + " ", base + "!")`. */
export function partRange(base: string): { ge: string; lt: string } {
  return { ge: `${base}${WIDE_SEPARATOR}`, lt: `${base}!` };
}

/** `ValidationError` when a wide entity's RowKey holds the separator (its parts would mix with others'). */
export function assertWideRowKey(entity: string, rowKey: string): void {
  if (!rowKey.includes(WIDE_SEPARATOR)) return;
  throw new ValidationError(
    "wide-row-key",
    `${entity}: a wide entity's RowKey may not contain a space ('${rowKey}'): the space separates the RowKey from the part number of each row`,
    { field: "RowKey" },
  );
}

/** The part a stored row is, or `undefined` for rows that are not parts of a wide entity. */
export function parsePart(row: StoredEntity): WidePart | undefined {
  const marker = row[WIDE_PART_PROPERTY];
  if (typeof marker !== "string") return undefined;
  const rowKey = row.rowKey;
  const at = rowKey.length - 3;
  if (at < 0 || rowKey[at] !== WIDE_SEPARATOR) return undefined;
  const index = Number(rowKey.slice(at + 1));
  const colon = marker.indexOf(":");
  const count = Number(marker.slice(0, colon));
  if (!Number.isInteger(index) || colon < 0 || !Number.isInteger(count) || index >= count) return undefined;
  return { base: rowKey.slice(0, at), index, count, writeId: marker.slice(colon + 1) };
}

/**
 * Splits a wide entity's wire form (one object with every column) into its parts, in declaration
 * order. `ValidationError` when it needs more than `maxParts` rows. `sidecars`: bytes of a property
 * the store adds beside a column when it is sent (a blind value), kept in the column's row.
 */
export function splitWide(
  entity: string,
  wire: WireEntity,
  limits: WideRowLimits,
  writeId: string,
  maxParts: number,
  sidecars?: ReadonlyMap<string, number>,
): WireEntity[] {
  const { partitionKey, rowKey } = wire;
  assertWideRowKey(entity, rowKey);
  const type = wire[ENTITY_TYPE_PROPERTY];
  const columns = Object.keys(wire).filter(
    (name) => name !== "partitionKey" && name !== "rowKey" && name !== ENTITY_TYPE_PROPERTY,
  );
  // Each part's fixed share: its keys (suffix included), EntityType and the `_tkWide` marker.
  const marker = `${maxParts}:${writeId}`;
  const fixedBytes =
    4 +
    (partitionKey.length + partRowKey(rowKey, 0).length) * 2 +
    propertyBytes(ENTITY_TYPE_PROPERTY, type) +
    propertyBytes(WIDE_PART_PROPERTY, marker);
  const perPart = limits.maxProperties - 2;
  const groups: string[][] = [[]];
  let bytes = fixedBytes;
  let properties = 0;
  for (const name of columns) {
    // A property the store adds beside this one when it is sent (a blind value) goes in the same row.
    const sidecar = wire[name] === undefined || wire[name] === null ? undefined : sidecars?.get(name);
    const size = propertyBytes(name, wire[name]) + (sidecar ?? 0);
    const count = sidecar === undefined ? 1 : 2;
    let group = groups[groups.length - 1] as string[];
    if (properties + count > perPart || bytes + size > limits.maxEntityBytes) {
      group = [];
      groups.push(group);
      bytes = fixedBytes;
      properties = 0;
    }
    group.push(name);
    bytes += size;
    properties += count;
  }
  if (groups.length > maxParts) {
    throw new ValidationError(
      "wide-parts",
      `${entity}: this entity needs ${groups.length} rows; one entity group transaction carries at most ${maxParts} operations, so a wide entity has at most ${maxParts} rows`,
    );
  }
  const count = groups.length;
  return groups.map((names, index) => {
    const part: WireEntity = { partitionKey, rowKey: partRowKey(rowKey, index) };
    for (const name of names) part[name] = wire[name] as WireValue;
    if (type !== undefined) part[ENTITY_TYPE_PROPERTY] = type;
    part[WIDE_PART_PROPERTY] = `${count}:${writeId}`;
    return part;
  });
}

/**
 * One stored entity from the rows of its parts (any order), its ETag listing every part's; or
 * `undefined` when the rows are not one whole write (a part missing, or parts of two writes).
 */
export function assembleWide(rows: readonly StoredEntity[]): StoredEntity | undefined {
  const parts = rows.map((row) => ({ row, part: parsePart(row) }));
  const first = parts[0]?.part;
  if (first === undefined || parts.length !== first.count) return undefined;
  const ordered: StoredEntity[] = [];
  for (const { row, part } of parts) {
    if (part === undefined || part.base !== first.base || part.writeId !== first.writeId) return undefined;
    if (part.count !== first.count || ordered[part.index] !== undefined) return undefined;
    ordered[part.index] = row;
  }
  const head = ordered[0] as StoredEntity;
  const merged: StoredEntity = { partitionKey: head.partitionKey, rowKey: first.base, etag: "" };
  for (const row of ordered) {
    for (const name in row) {
      if (name === "partitionKey" || name === "rowKey" || name === "etag" || name === "timestamp") continue;
      if (name === WIDE_PART_PROPERTY || name.startsWith("odata.")) continue;
      merged[name] = row[name] as WireValue;
    }
  }
  merged.etag = wideEtag(ordered.map((row) => row.etag));
  if (head.timestamp !== undefined) merged.timestamp = head.timestamp;
  return merged;
}

/** A wide entity's ETag: every part's ETag in part order, as a JSON array (one opaque string). */
export function wideEtag(etags: readonly string[]): string {
  return JSON.stringify(etags);
}

/** The part ETags of a wide entity's ETag; `ValidationError` for any other text. */
export function parseWideEtag(entity: string, etag: string): string[] {
  let parsed: unknown;
  try {
    parsed = etag.startsWith("[") ? JSON.parse(etag) : undefined;
  } catch {
    parsed = undefined;
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length === 0 ||
    parsed.length > MAX_WIDE_PARTS ||
    !parsed.every((value) => typeof value === "string" && value !== "" && value !== "*")
  ) {
    throw new ValidationError(
      "wide-etag",
      `${entity}: ifMatch of a wide entity must be the ETag tablekit tracked for it (etagOf(entity): every row's ETag) or "*"`,
      { field: "ifMatch" },
    );
  }
  return parsed as string[];
}

/** The first row's ETag in a wide entity's ETag, or `undefined` when the text is not one. */
export function firstPartEtag(etag: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(etag);
    return Array.isArray(parsed) && typeof parsed[0] === "string" ? parsed[0] : undefined;
  } catch {
    return undefined;
  }
}

/** Bytes one property counts for in the service's entity size formula (see entity-size.ts). */
function propertyBytes(name: string, value: WireValue | undefined): number {
  return 8 + name.length * 2 + valueBytes(value);
}

function valueBytes(value: WireValue | undefined): number {
  if (value === undefined || value === null) return 0;
  switch (typeof value) {
    case "string":
      return propertyValueBytes("String", value.length);
    case "number":
      // The mapper writes Int32 as a bare number; other numbers are typed objects.
      return propertyValueBytes("Int32", 0);
    case "boolean":
      return propertyValueBytes("Boolean", 0);
    case "bigint":
      return propertyValueBytes("Int64", 0);
    default:
      if (value instanceof Date) return propertyValueBytes("DateTime", 0);
      if (value instanceof Uint8Array) return propertyValueBytes("Binary", value.byteLength);
      if (value.type === "String") return propertyValueBytes("String", String(value.value).length);
      if (value.type === "Binary")
        return propertyValueBytes("Binary", Math.ceil((String(value.value).length * 3) / 4));
      return propertyValueBytes(value.type, 0);
  }
}
