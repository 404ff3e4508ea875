/**
 * The Table service's limits (Azure Table storage REST reference; see PATTERNS.md).
 * tablekit checks these before any request so bad input never reaches the network.
 */
export const ServiceLimits = {
  /** PartitionKey and RowKey: up to 1 KiB each (counted in UTF-16 code units × 2 bytes by the service). */
  maxKeyBytes: 1024,
  /** Entity: up to 1 MiB, sized with the service's formula (see entity-size.ts). */
  maxEntityBytes: 1024 * 1024,
  /**
   * String properties: 32,768 UTF-16 units. "Understanding the Table service data model" (Azure Storage
   * REST reference, Property types): "Edm.String: A UTF-16-encoded value. String values can be up to
   * 64 KiB in size", i.e. 65,536 bytes of UTF-16 = 32,768 units; Azurite checks the same bound
   * (`length > 32 * 1024` in its TableHandler) and its own tests write 32,768-character strings.
   */
  maxStringLength: 32_768,
  /** Binary properties: up to 64 KiB. */
  maxBinaryBytes: 64 * 1024,
  /** User properties per entity (255 including PartitionKey, RowKey and Timestamp). */
  maxProperties: 252,
  /** Property names: up to 255 characters. */
  maxPropertyNameLength: 255,
  /** Entity group transaction: up to 100 operations... */
  maxTransactionOperations: 100,
  /** ...with a payload under 4 MiB. */
  maxTransactionBytes: 4 * 1024 * 1024,
  /** A query page holds at most 1,000 entities. */
  maxPageSize: 1000,
  /** A filter may hold at most 15 comparisons. */
  maxFilterComparisons: 15,
  /** DateTime range: 1601-01-01T00:00:00Z .. 9999-12-31T23:59:59.999Z. */
  minDateTimeMs: Date.UTC(1601, 0, 1),
  maxDateTimeMs: Date.UTC(9999, 11, 31, 23, 59, 59, 999),
  minInt32: -2_147_483_648,
  maxInt32: 2_147_483_647,
  minInt64: -(2n ** 63n),
  maxInt64: 2n ** 63n - 1n,
} as const;

/** Characters the service forbids in PartitionKey and RowKey: / \ # ? and control characters. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what the service forbids
export const FORBIDDEN_KEY_CHARACTERS = /[/\\#?\u0000-\u001f\u007f-\u009f]/;

/** Table names: 3-63 alphanumeric characters, starting with a letter; "tables" is reserved. */
export const TABLE_NAME = /^[A-Za-z][A-Za-z0-9]{2,62}$/;

/** Property names follow C# identifier rules. */
export const PROPERTY_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
