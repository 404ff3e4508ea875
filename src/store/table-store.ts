/**
 * The store port: the only surface the repository layer talks to. Two adapters implement it,
 * `AzureStore` (the Table service through `@azure/data-tables`) and `MemoryStore` (the reference store).
 *
 * Entities cross the port in the shape `@azure/data-tables` uses (see `WireEntity`), so the Azure
 * adapter passes them through without copying and the memory adapter mirrors the service.
 * Adapters translate service failures into tablekit errors (errors.ts) in exactly one place each.
 */

import type { StoreLimits } from "../util/store-limits.js";
import type {
  PropertyTypes,
  StoreContinuation,
  StoredEntity,
  TransactionAction,
  WireEntity,
  WriteMode,
  WriteResult,
} from "../wire/wire-entity.js";
import type { BlobStore } from "./blob-store.js";

export type { StoreLimits } from "../util/store-limits.js";
export type {
  EdmType,
  PropertyTypes,
  StoreContinuation,
  StoredEntity,
  TransactionAction,
  TypedValue,
  WireEntity,
  WireValue,
  WriteMode,
  WriteResult,
} from "../wire/wire-entity.js";
export type { BlobInfo, BlobListOptions, BlobPage, BlobStore } from "./blob-store.js";

/** One request for one page of a query. */
export interface StoreQuery {
  /** OData filter text; absent means every entity. */
  filter?: string | undefined;
  /**
   * Property names to return (`$select`). Every store answers as the service does: each row carries
   * its `etag` and only the named properties it has; `partitionKey`, `rowKey` and `timestamp` too
   * come only when `PartitionKey`, `RowKey` or `Timestamp` is named (the row's type still lists the
   * keys: a caller that reads them names them). Rows with encrypted columns are opened with their
   * keys, so name both. Absent or empty: every property.
   */
  select?: readonly string[] | undefined;
  /** Maximum entities in this page (`$top`), at most 1,000. */
  top?: number | undefined;
  continuation?: StoreContinuation | undefined;
  /**
   * The types the caller expects of the rows' properties (a typed repository's model). A store may
   * use them to read lighter payloads (`AzureStore`: `odata=nometadata`); the rows it returns are the
   * same either way. Absent for rows of unknown shape.
   */
  types?: PropertyTypes | undefined;
}

/** One page of a store query: the entities and, when more may follow, where to continue. */
export interface StorePage {
  items: StoredEntity[];
  /** Present when the service may have more results; a page may be empty and still have one. */
  continuation?: StoreContinuation;
}

/** What differs between backends, so callers can adapt instead of guessing. */
export interface StoreCapabilities {
  /**
   * Results come sorted by PartitionKey then RowKey (false on the Cosmos DB Table API). When false,
   * tablekit answers order-dependent queries (`first`, `take`, `latest`, `toArray`) by reading the
   * whole partition range and sorting, and refuses them on table scans (see query.ts).
   */
  sortedResults: boolean;
  /** What the backend accepts (key sizes, batch limits, reserved names); absent means Azure Table storage's. */
  limits?: StoreLimits;
}

/**
 * The port both stores implement. Every method is one service request (one HTTP call on Azure).
 * Failures are tablekit errors: `EntityAlreadyExistsError` (409 on insert), `EntityNotFoundError`
 * (404 on update), `ConcurrencyError` (412), `TransactionError` (any failed transaction),
 * `StoreError` (anything else, with status and service code).
 */
export interface TableStore {
  readonly name: string;
  readonly capabilities: StoreCapabilities;
  /** The service's origin (`https://account.table.core.windows.net`, no credentials), for telemetry; absent in process. */
  readonly endpoint?: string | undefined;
  /**
   * Where large entity values (`@Column({ large: true })`) are kept; `undefined` when the store has
   * no blob endpoint, and then an entity with a large column is refused before any request.
   */
  readonly blobs?: BlobStore | undefined;

  /** Creates the table; succeeds if it already exists. */
  createTable(table: string): Promise<void>;
  /** Deletes the table; succeeds if it does not exist. */
  deleteTable(table: string): Promise<void>;
  /**
   * The names of the existing tables that start with `prefix` (compared case-sensitively, as written
   * at creation), in ascending order. One request per page of 1,000 names.
   */
  listTables(prefix?: string): Promise<string[]>;

  /** Point read; `undefined` when absent. `select` and `types`: as in `StoreQuery` (a point read's `$select` returns the keys only when named too). */
  getEntity(
    table: string,
    partitionKey: string,
    rowKey: string,
    select?: readonly string[],
    types?: PropertyTypes,
  ): Promise<StoredEntity | undefined>;
  /** One page of a query. */
  queryPage(table: string, query: StoreQuery): Promise<StorePage>;

  /** Fails with `EntityAlreadyExistsError` when the key exists. */
  insert(table: string, entity: WireEntity): Promise<WriteResult>;
  /** InsertOrReplace / InsertOrMerge. */
  upsert(table: string, entity: WireEntity, mode: WriteMode): Promise<WriteResult>;
  /** Update (replace) or Merge of an existing entity; `ifMatch` is an ETag or `*`. */
  update(table: string, entity: WireEntity, mode: WriteMode, ifMatch: string): Promise<WriteResult>;
  /** Deletes; resolves `false` when the entity did not exist; `ConcurrencyError` on ETag mismatch. */
  delete(table: string, partitionKey: string, rowKey: string, ifMatch: string): Promise<boolean>;

  /** Submits an entity group transaction atomically; resolves one result per action, in order. */
  submitTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]>;

  /**
   * Optional: one page of a query (its filter, `top` and continuation; `select` is not applied) whose
   * values keep their EDM type exactly, each in the form a write stores back unchanged: Double as
   * `{ type: "Double", value }` (a whole number too, which `queryPage` answers as a plain `number`, then
   * written back as Int32), Int64 `{ type: "Int64", value: "<digits>" }`, DateTime `{ type: "DateTime",
   * value: "<ISO 8601 with 7 fraction digits>" }` (100-ns ticks a `Date` would round), Guid
   * `{ type: "Guid", value }`, Binary `Uint8Array`; Int32, String and Boolean as `queryPage` answers.
   * For copying rows between stores (a `ShardedStore`'s move); continuations are its own.
   */
  queryTypedPage?(table: string, query: StoreQuery): Promise<StorePage>;

  /**
   * Optional: finishes work the store itself left unfinished in a crash (a `ShardedStore`'s shard move
   * cut short). `db.repair()` calls it first, when the context's store has it, and reports its counts
   * under `store`; work touched less than `minIntentAgeMs` ago is left alone. Stores without such work
   * leave it out.
   */
  repair?(options: StoreRepairOptions): Promise<Readonly<Record<string, number>>>;
}

/** What `TableStore.repair` is given by `db.repair()`. */
export interface StoreRepairOptions {
  /** Work its owner touched less than this many milliseconds ago is left alone (it may still be running). */
  readonly minIntentAgeMs: number;
}

/** What a scoped table SAS grants: see `TableSasIssuer.tableSas`. */
export interface TableSasRequest {
  /** Letters of `r` (query), `a` (add), `u` (update), `d` (delete). */
  permissions: string;
  expiresOn: Date;
  startsOn?: Date | undefined;
  /** The one partition the token reaches. */
  partitionKey: string;
  /** An inclusive RowKey range within it (absent: the whole partition). */
  rowKeys?: { start: string; end: string } | undefined;
}

/** A store that can sign SAS tokens for its tables locally (an `AzureStore` with an account key). */
export interface TableSasIssuer {
  /** A SAS token (query string without `?`) for `table`, limited as `request` says; no request is sent. */
  tableSas(table: string, request: TableSasRequest): string;
}

/** True when the store can sign table SAS tokens (it may still refuse: see `AzureStore.tableSas`). */
export function isTableSasIssuer(store: TableStore): store is TableStore & TableSasIssuer {
  return typeof (store as Partial<TableSasIssuer>).tableSas === "function";
}
