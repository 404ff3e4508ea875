/**
 * Property names tablekit itself keeps in rows. Defined once, below every layer that needs them.
 */

/** Each row's discriminator (`type@version`), as in the heterogeneous-types pattern. */
export const ENTITY_TYPE_PROPERTY = "EntityType";

/** Bookkeeping properties (index copies, their owners, copy lists) start with this; user columns may not. */
export const LIBRARY_PROPERTY_PREFIX = "_tk";

/** Marks a row as an index copy or index entity: the index name (such rows are never entities). */
export const COPY_INDEX_PROPERTY = "_tkIndex";

/** Marks a summary row: the summary's name (such rows are never entities). */
export const SUMMARY_PROPERTY = "_tkSummary";

/**
 * On every row of a wide entity: `"<parts>:<writeId>"`, the entity's row count and the id of the
 * write that stored them, so a reader can tell a whole entity from rows of two different writes.
 */
export const WIDE_PART_PROPERTY = "_tkWide";

/**
 * On an index copy elsewhere: which write made it, the entity version it reflects or a claim in
 * progress (repository/index/copy-stamp.ts).
 */
export const COPY_STAMP_PROPERTY = "_tkStamp";

/**
 * tablekit's properties on an index copy row: the discriminator, the index's name, the keys of
 * the entity it copies and its stamp (repository/index/copy-builder.ts). They count towards the service's 255.
 */
export const COPY_ROW_PROPERTIES: readonly string[] = [
  ENTITY_TYPE_PROPERTY,
  COPY_INDEX_PROPERTY,
  "_tkSourcePK",
  "_tkSourceRK",
  COPY_STAMP_PROPERTY,
];

/** tablekit's properties on the row of an entity with indexes: the discriminator and its copies' keys (`_tkIndexKeys`). */
export const INDEXED_ENTITY_ROW_PROPERTIES: readonly string[] = [ENTITY_TYPE_PROPERTY, "_tkIndexKeys"];

/**
 * The service's property budget: 255 per entity including PartitionKey, RowKey and Timestamp
 * (Azure Table storage, "Understanding the Table service data model"), so 252 others.
 */
export const PROPERTY_BUDGET = 255;

/**
 * What a projected query must always fetch besides the caller's columns: the keys (key fields
 * decode from them), the discriminator (rows of other types are skipped) and the copy and summary markers.
 */
export function withSystemProperties(properties: readonly string[]): string[] {
  return [
    ...new Set([
      "PartitionKey",
      "RowKey",
      ENTITY_TYPE_PROPERTY,
      COPY_INDEX_PROPERTY,
      SUMMARY_PROPERTY,
      ...properties,
    ]),
  ];
}

/** A row's property names that are not the user's: keys, service metadata, discriminator, bookkeeping. */
export function isUserProperty(name: string): boolean {
  return !NOT_USER.has(name) && !name.startsWith(LIBRARY_PROPERTY_PREFIX) && !name.startsWith("odata.");
}

const NOT_USER = new Set(["partitionKey", "rowKey", "etag", "timestamp", ENTITY_TYPE_PROPERTY]);
