import type {
  StoreCapabilities,
  StoredEntity,
  StorePage,
  StoreQuery,
  TableStore,
  TransactionAction,
  WireEntity,
  WriteMode,
  WriteResult,
} from "../../src/store/table-store.js";

/** The request-making methods of a `TableStore`. */
export type StoreMethod = Exclude<keyof TableStore, "name" | "capabilities">;

/** One recorded call: which method, on which table. */
export interface StoreCall {
  method: StoreMethod;
  table: string;
}

const METHODS: readonly StoreMethod[] = [
  "createTable",
  "deleteTable",
  "getEntity",
  "queryPage",
  "insert",
  "upsert",
  "update",
  "delete",
  "submitTransaction",
];

/** Wraps a `TableStore` and counts every call per method, so tests can assert how many requests were made. */
export class CountingStore implements TableStore {
  readonly inner: TableStore;
  /** Calls per method. */
  readonly calls: Record<StoreMethod, number> = emptyCounts();
  /** Every call in order. */
  readonly log: StoreCall[] = [];
  /** The most entities any `queryPage` call returned. */
  largestPage = 0;

  constructor(inner: TableStore) {
    this.inner = inner;
  }

  get name(): string {
    return this.inner.name;
  }

  get capabilities(): StoreCapabilities {
    return this.inner.capabilities;
  }

  /** Total calls of every method since creation or the last `reset()`. */
  get requests(): number {
    return this.log.length;
  }

  /** Forgets every recorded call. */
  reset(): void {
    this.log.length = 0;
    this.largestPage = 0;
    for (const method of METHODS) this.calls[method] = 0;
  }

  createTable(table: string): Promise<void> {
    this.#record("createTable", table);
    return this.inner.createTable(table);
  }

  deleteTable(table: string): Promise<void> {
    this.#record("deleteTable", table);
    return this.inner.deleteTable(table);
  }

  getEntity(
    table: string,
    partitionKey: string,
    rowKey: string,
    select?: readonly string[],
  ): Promise<StoredEntity | undefined> {
    this.#record("getEntity", table);
    return this.inner.getEntity(table, partitionKey, rowKey, select);
  }

  async queryPage(table: string, query: StoreQuery): Promise<StorePage> {
    this.#record("queryPage", table);
    const page = await this.inner.queryPage(table, query);
    this.largestPage = Math.max(this.largestPage, page.items.length);
    return page;
  }

  insert(table: string, entity: WireEntity): Promise<WriteResult> {
    this.#record("insert", table);
    return this.inner.insert(table, entity);
  }

  upsert(table: string, entity: WireEntity, mode: WriteMode): Promise<WriteResult> {
    this.#record("upsert", table);
    return this.inner.upsert(table, entity, mode);
  }

  update(table: string, entity: WireEntity, mode: WriteMode, ifMatch: string): Promise<WriteResult> {
    this.#record("update", table);
    return this.inner.update(table, entity, mode, ifMatch);
  }

  delete(table: string, partitionKey: string, rowKey: string, ifMatch: string): Promise<boolean> {
    this.#record("delete", table);
    return this.inner.delete(table, partitionKey, rowKey, ifMatch);
  }

  submitTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]> {
    this.#record("submitTransaction", table);
    return this.inner.submitTransaction(table, partitionKey, actions);
  }

  #record(method: StoreMethod, table: string): void {
    this.calls[method] += 1;
    this.log.push({ method, table });
  }
}

function emptyCounts(): Record<StoreMethod, number> {
  return Object.fromEntries(METHODS.map((method) => [method, 0])) as Record<StoreMethod, number>;
}
