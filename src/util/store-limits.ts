import { ServiceLimits } from "./service-limits.js";

/**
 * The limits one backend enforces on what is written, so tablekit can refuse bad input before
 * any request instead of learning them from a 400. Azure Table storage's are the default.
 */
export interface StoreLimits {
  /** Largest PartitionKey, in bytes counted as `keyEncoding` says. */
  readonly maxPartitionKeyBytes: number;
  /** Largest RowKey, in bytes counted as `keyEncoding` says. */
  readonly maxRowKeyBytes: number;
  /** How key bytes are counted: UTF-16 (Table storage: 2 per code unit) or UTF-8 (Cosmos DB's JSON). */
  readonly keyEncoding: "utf16" | "utf8";
  /** Largest entity by the Table service's size formula. */
  readonly maxEntityBytes: number;
  /** User properties per entity. */
  readonly maxProperties: number;
  /** Operations per entity group transaction. */
  readonly maxTransactionOperations: number;
  /** Bytes of one transaction's request body (tablekit stays below it). */
  readonly maxTransactionBytes: number;
  /** Property names the backend keeps for itself (compared case-insensitively). */
  readonly reservedPropertyNames: readonly string[];
  /** Whether `Employees` and `employees` are two tables (they are one on Table storage). */
  readonly caseSensitiveTableNames: boolean;
  /**
   * The account URL the sub-requests of a `$batch` body name (each request line carries it), so a
   * batch is sized exactly (src/store/batch-body-size.ts). Absent: a nominal Azure endpoint
   * (`NOMINAL_ACCOUNT_URL`, the longest standard one).
   */
  readonly accountUrl?: string | undefined;
}

/** Azure Table storage (and Azurite): the Table service REST reference's limits (see service-limits.ts). */
export const AZURE_TABLE_LIMITS: StoreLimits = Object.freeze({
  maxPartitionKeyBytes: ServiceLimits.maxKeyBytes,
  maxRowKeyBytes: ServiceLimits.maxKeyBytes,
  keyEncoding: "utf16",
  maxEntityBytes: ServiceLimits.maxEntityBytes,
  maxProperties: ServiceLimits.maxProperties,
  maxTransactionOperations: ServiceLimits.maxTransactionOperations,
  maxTransactionBytes: ServiceLimits.maxTransactionBytes,
  reservedPropertyNames: Object.freeze([]),
  caseSensitiveTableNames: false,
});

/**
 * The Azure Cosmos DB for Table API, where it differs from Table storage
 * (https://learn.microsoft.com/en-us/azure/cosmos-db/table/faq, "Where is API for Table not identical
 * with Azure Table storage behavior?"): row keys up to 255 bytes, batches up to 2 MB, the property
 * names ID, rid, etag and ResourceId reserved, case-sensitive table names, and results not sorted by
 * key (`sortedResults: false`). Cosmos DB items may reach 2 MB (https://learn.microsoft.com/azure/cosmos-db/concepts-limits),
 * but the FAQ warns that its encoding inflates values (binary especially), so the Table API's 1 MiB
 * entity formula stays the safe limit. The other limits (100 operations per batch, 252 user
 * properties, 1 KiB PartitionKey) are the Table API contract both backends share. A store without an
 * account of its own (MemoryStore's Cosmos flavor) sizes batches on the longest Cosmos DB Table
 * endpoint: account names have at most 44 characters (Azure's resource naming rules,
 * Microsoft.DocumentDB/databaseAccounts), and the SDK sends that endpoint the Cosmos form of a body
 * (src/store/batch-body-size.ts).
 */
export const COSMOS_TABLE_LIMITS: StoreLimits = Object.freeze({
  maxPartitionKeyBytes: ServiceLimits.maxKeyBytes,
  maxRowKeyBytes: 255,
  keyEncoding: "utf8",
  maxEntityBytes: ServiceLimits.maxEntityBytes,
  maxProperties: ServiceLimits.maxProperties,
  maxTransactionOperations: ServiceLimits.maxTransactionOperations,
  maxTransactionBytes: 2 * 1024 * 1024,
  reservedPropertyNames: Object.freeze(["ID", "rid", "etag", "ResourceId"]),
  caseSensitiveTableNames: true,
  accountUrl: `https://${"a".repeat(44)}.table.cosmos.azure.com`,
});

/** A key's size as the backend counts it. */
export function keyBytes(limits: StoreLimits, key: string): number {
  return limits.keyEncoding === "utf8" ? Buffer.byteLength(key, "utf8") : key.length * 2;
}

/** The reserved property name `name` collides with, if any (case-insensitive). */
export function reservedPropertyName(limits: StoreLimits, name: string): string | undefined {
  if (limits.reservedPropertyNames.length === 0) return undefined;
  const lower = name.toLowerCase();
  return limits.reservedPropertyNames.find((reserved) => reserved.toLowerCase() === lower);
}

/** A byte limit as people read it: "4 MiB", else the exact count. */
export function describeBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}
