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

/** Every request-making method, in port order. */
export const STORE_METHODS: readonly StoreMethod[] = [
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

/** What a wrapper learns about one request besides its method. */
export interface StoreRequest {
  method: StoreMethod;
  table: string;
  /** Set for transactions. */
  partitionKey?: string;
}

/**
 * A `TableStore` in front of another: every request goes through `around`, so a test wrapper
 * (counting, fault injection, crash simulation) writes only what it adds.
 */
export abstract class StoreWrapper implements TableStore {
  readonly inner: TableStore;

  constructor(inner: TableStore) {
    this.inner = inner;
  }

  get name(): string {
    return this.inner.name;
  }

  get capabilities(): StoreCapabilities {
    return this.inner.capabilities;
  }

  /** Runs one request: call `send` to pass it on to the inner store. */
  protected abstract around<T>(request: StoreRequest, send: () => Promise<T>): Promise<T>;

  createTable(table: string): Promise<void> {
    return this.around({ method: "createTable", table }, () => this.inner.createTable(table));
  }

  deleteTable(table: string): Promise<void> {
    return this.around({ method: "deleteTable", table }, () => this.inner.deleteTable(table));
  }

  getEntity(
    table: string,
    partitionKey: string,
    rowKey: string,
    select?: readonly string[],
  ): Promise<StoredEntity | undefined> {
    return this.around({ method: "getEntity", table }, () =>
      this.inner.getEntity(table, partitionKey, rowKey, select),
    );
  }

  queryPage(table: string, query: StoreQuery): Promise<StorePage> {
    return this.around({ method: "queryPage", table }, () => this.inner.queryPage(table, query));
  }

  insert(table: string, entity: WireEntity): Promise<WriteResult> {
    return this.around({ method: "insert", table }, () => this.inner.insert(table, entity));
  }

  upsert(table: string, entity: WireEntity, mode: WriteMode): Promise<WriteResult> {
    return this.around({ method: "upsert", table }, () => this.inner.upsert(table, entity, mode));
  }

  update(table: string, entity: WireEntity, mode: WriteMode, ifMatch: string): Promise<WriteResult> {
    return this.around({ method: "update", table }, () => this.inner.update(table, entity, mode, ifMatch));
  }

  delete(table: string, partitionKey: string, rowKey: string, ifMatch: string): Promise<boolean> {
    return this.around({ method: "delete", table }, () =>
      this.inner.delete(table, partitionKey, rowKey, ifMatch),
    );
  }

  submitTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]> {
    return this.around({ method: "submitTransaction", table, partitionKey }, () =>
      this.inner.submitTransaction(table, partitionKey, actions),
    );
  }
}
