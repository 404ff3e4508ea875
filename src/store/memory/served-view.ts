import { DelegatingStore } from "../delegating-store.js";
import type { ServedStore } from "../served-store.js";
import type { StoreQuery, TableStore, TransactionAction } from "../table-store.js";

/** What a served view adds to the port: the reads and settings a `MemoryStore` keeps off its public class. */
export type ServedReads = Omit<ServedStore, keyof TableStore>;

/**
 * A `MemoryStore` as a table server sees it (`store.served()`): the store's own port methods (passed
 * through), plus the typed reads and settings it hands over, so the server needs no other door into
 * the store.
 */
export class ServedView extends DelegatingStore implements ServedStore {
  readonly #reads: ServedReads;

  constructor(store: TableStore, reads: ServedReads) {
    super(store);
    this.#reads = reads;
  }

  tableName(table: string): string | undefined {
    return this.#reads.tableName(table);
  }
  tableNames(filter?: string): string[] {
    return this.#reads.tableNames(filter);
  }
  getRecord(table: string, partitionKey: string, rowKey: string) {
    return this.#reads.getRecord(table, partitionKey, rowKey);
  }
  queryRecords(table: string, query: StoreQuery) {
    return this.#reads.queryRecords(table, query);
  }
  accountSetting(name: string): string | undefined {
    return this.#reads.accountSetting(name);
  }
  setAccountSetting(name: string, value: string | undefined): void {
    this.#reads.setAccountSetting(name, value);
  }
  tableSetting(table: string, name: string): string | undefined {
    return this.#reads.tableSetting(table, name);
  }
  setTableSetting(table: string, name: string, value: string | undefined): void {
    this.#reads.setTableSetting(table, name, value);
  }
  submitReceivedTransaction(table: string, partitionKey: string, actions: readonly TransactionAction[]) {
    return this.#reads.submitReceivedTransaction(table, partitionKey, actions);
  }
}
