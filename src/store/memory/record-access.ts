import type { StoreQuery } from "../table-store.js";
import type { RenderedPage } from "./query-pager.js";
import type { EntityRecord } from "./typed-entity.js";

/**
 * What the table server reads from a `MemoryStore` beyond the port: stored records with their EDM
 * types (the port reads Int32 and Double alike as `number`, the wire must tell them apart) and
 * whether a table exists (the wire answers 409/404 where the port's create/delete are idempotent),
 * and the settings the server keeps in the store (service properties, table ACLs). Kept off the public class so the port stays the only public surface.
 */
export interface RecordAccess {
  /** The table's name as created, or `undefined` when it does not exist. */
  tableName(table: string): string | undefined;
  /** Point read of a record; 404 TableNotFound as a `StoreError` when the table is missing. */
  getRecord(table: string, partitionKey: string, rowKey: string): EntityRecord | undefined;
  /** One page of records, exactly as `queryPage` pages (same filter parser, limits and breaks). */
  queryRecords(table: string, query: StoreQuery): RenderedPage<EntityRecord>;
  /** An account-level setting (opaque text the server owns); undefined when unset. */
  accountSetting(name: string): string | undefined;
  /**
   * Sets an account-level setting (undefined removes it): journaled, with `{ file }`, before it is
   * applied, so it survives a restart or SIGKILL like any answered write; a failed append changes nothing.
   */
  setAccountSetting(name: string, value: string | undefined): void;
  /** A table's setting; undefined when unset or when the table does not exist. */
  tableSetting(table: string, name: string): string | undefined;
  /**
   * Sets a table's setting (undefined removes it), journaled like `setAccountSetting`. Deleting the
   * table drops its settings in the same journal line; 404 TableNotFound when the table is missing.
   */
  setTableSetting(table: string, name: string, value: string | undefined): void;
  /**
   * Sizes the `$batch` body of later transactions on `accountUrl` (the server's own endpoint, which
   * its clients' request lines name) instead of the nominal Azure endpoint (batch-body-size.ts).
   */
  sizeBatchesFor(accountUrl: string): void;
}

const registry = new WeakMap<object, RecordAccess>();

/** Called by a `MemoryStore` on construction. */
export function registerRecordAccess(store: object, access: RecordAccess): void {
  registry.set(store, access);
}

/** The record access of a `MemoryStore`, or `undefined` for any other object. */
export function recordAccessOf(store: object): RecordAccess | undefined {
  return registry.get(store);
}
