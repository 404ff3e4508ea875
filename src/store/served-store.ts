/**
 * The served-store port: what `tablekit serve` (src/server) needs of a store beyond `TableStore` to
 * speak the Table service's wire protocol. The server depends on this file only, never on a store's
 * internals; `MemoryStore` implements it (`memoryStore.served()`).
 */

import type {
  StoreContinuation,
  StoreQuery,
  TableStore,
  TransactionAction,
  WireEntity,
  WriteResult,
} from "./table-store.js";

/**
 * A property value as the service keeps it: its EDM type (which the port's `number` cannot tell for
 * Int32 and Double) and a lossless JavaScript value (Int64 and DateTime as `bigint`; DateTime in
 * 100-ns ticks since 1970). Values are immutable; Binary arrays are never shared with callers.
 */
export type EdmValue =
  | { readonly type: "String"; readonly value: string }
  | { readonly type: "Int32"; readonly value: number }
  | { readonly type: "Int64"; readonly value: bigint }
  | { readonly type: "Double"; readonly value: number }
  | { readonly type: "Boolean"; readonly value: boolean }
  | { readonly type: "DateTime"; readonly value: bigint }
  | { readonly type: "Guid"; readonly value: string }
  | { readonly type: "Binary"; readonly value: Uint8Array };

/** An entity's user properties by name, typed. */
export interface PropertyMap extends Iterable<[string, EdmValue]> {
  readonly size: number;
  get(name: string): EdmValue | undefined;
}

/** A stored entity as the table server reads it: keys, server Timestamp (100-ns ticks since 1970), its ETag, typed user properties. */
export interface EntityRecord {
  readonly partitionKey: string;
  readonly rowKey: string;
  readonly timestamp: bigint;
  readonly etag: string;
  readonly properties: PropertyMap;
}

/** One page of records, paged exactly as `TableStore.queryPage` pages (same filter rules, limits and breaks). */
export interface RecordPage {
  items: EntityRecord[];
  continuation?: StoreContinuation;
}

/**
 * User properties whose names are the port's own fields (`partitionKey`, `rowKey`, `etag`,
 * `timestamp`): ordinary property names to the service, which a client other than the JavaScript SDK
 * may send. The server attaches them to a written entity under this symbol; the port's read shape
 * cannot return them, the records do.
 */
export const SHADOWED_PROPERTIES: unique symbol = Symbol("tablekit.shadowedProperties");

/** A wire entity that may carry shadowed user properties (see SHADOWED_PROPERTIES). */
export type WireEntityWithShadowed = WireEntity & {
  [SHADOWED_PROPERTIES]?: Readonly<Record<string, WireEntity[string]>>;
};

/**
 * A store as a table server sees it: the port's writes and transactions (entities may carry
 * `SHADOWED_PROPERTIES`), plus typed reads, table existence and the settings the server keeps in the
 * store. Reads are synchronous, so a write and the read of its result happen in one step.
 */
export interface ServedStore extends TableStore {
  /** The table's name as created, or `undefined` when it does not exist (names are case-insensitive). */
  tableName(table: string): string | undefined;
  /** The names of the existing tables matching an OData filter over `TableName` (all when absent), ascending. */
  tableNames(filter?: string): string[];
  /** Point read of a record; 404 TableNotFound as a `StoreError` when the table is missing. */
  getRecord(table: string, partitionKey: string, rowKey: string): EntityRecord | undefined;
  /** One page of records of a query. */
  queryRecords(table: string, query: StoreQuery): RecordPage;
  /** An account-level setting (opaque text the server owns); undefined when unset. */
  accountSetting(name: string): string | undefined;
  /**
   * Sets an account-level setting (undefined removes it), durably before it is applied when the store
   * persists (so it survives a restart like any answered write); a failed write changes nothing.
   */
  setAccountSetting(name: string, value: string | undefined): void;
  /** A table's setting; undefined when unset or when the table does not exist. */
  tableSetting(table: string, name: string): string | undefined;
  /**
   * Sets a table's setting (undefined removes it), kept like `setAccountSetting`. Deleting the table
   * drops its settings with it; 404 TableNotFound when the table is missing.
   */
  setTableSetting(table: string, name: string, value: string | undefined): void;
  /**
   * `submitTransaction` for a `$batch` the server received: every rule of an entity group transaction
   * but the body's size, which the server has already judged on the bytes it received (4 MiB, 413
   * `RequestBodyTooLarge` as the response's status). A client other than the JavaScript SDK writes
   * other part headers, so the size of the body that SDK would send is no measure of this one.
   */
  submitReceivedTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]>;
}

/** A store that can be served: `served()` is its served-store view, or `undefined` when it cannot be (e.g. the Cosmos flavour). */
export interface ServableStore extends TableStore {
  served(): ServedStore | undefined;
}
