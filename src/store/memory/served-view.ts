import type { ServedStore } from "../served-store.js";
import type {
  StoreCapabilities,
  StorePage,
  StoreQuery,
  TableStore,
  TransactionAction,
  WireEntity,
  WriteMode,
  WriteResult,
} from "../table-store.js";

/** What a served view adds to the port: the reads and settings a `MemoryStore` keeps off its public class. */
export type ServedReads = Omit<ServedStore, keyof TableStore>;

/**
 * A `MemoryStore` as a table server sees it (`store.served()`): the store's own port methods, plus the
 * typed reads and settings it hands over, so the server needs no other door into the store.
 */
export class ServedView implements ServedStore {
  readonly #store: TableStore;
  readonly #reads: ServedReads;

  constructor(store: TableStore, reads: ServedReads) {
    this.#store = store;
    this.#reads = reads;
  }

  get name(): string {
    return this.#store.name;
  }
  get capabilities(): StoreCapabilities {
    return this.#store.capabilities;
  }
  get blobs(): TableStore["blobs"] {
    return this.#store.blobs;
  }

  createTable(table: string): Promise<void> {
    return this.#store.createTable(table);
  }
  deleteTable(table: string): Promise<void> {
    return this.#store.deleteTable(table);
  }
  listTables(prefix?: string): Promise<string[]> {
    return this.#store.listTables(prefix);
  }
  getEntity(table: string, partitionKey: string, rowKey: string, select?: readonly string[]) {
    return this.#store.getEntity(table, partitionKey, rowKey, select);
  }
  queryPage(table: string, query: StoreQuery): Promise<StorePage> {
    return this.#store.queryPage(table, query);
  }
  insert(table: string, entity: WireEntity): Promise<WriteResult> {
    return this.#store.insert(table, entity);
  }
  upsert(table: string, entity: WireEntity, mode: WriteMode): Promise<WriteResult> {
    return this.#store.upsert(table, entity, mode);
  }
  update(table: string, entity: WireEntity, mode: WriteMode, ifMatch: string): Promise<WriteResult> {
    return this.#store.update(table, entity, mode, ifMatch);
  }
  delete(table: string, partitionKey: string, rowKey: string, ifMatch: string): Promise<boolean> {
    return this.#store.delete(table, partitionKey, rowKey, ifMatch);
  }
  submitTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]> {
    return this.#store.submitTransaction(table, partitionKey, actions);
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
  sizeBatchesFor(accountUrl: string): void {
    this.#reads.sizeBatchesFor(accountUrl);
  }
}
