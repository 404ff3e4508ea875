import type {
  BlobStore,
  PropertyTypes,
  StoreCapabilities,
  StoredEntity,
  StorePage,
  StoreQuery,
  TableStore,
  TransactionAction,
  WireEntity,
  WriteMode,
  WriteResult,
} from "./table-store.js";

/** A blob request's name: the Azure SDK method it stands for. */
export type BlobOperation =
  | "uploadBlob"
  | "downloadBlob"
  | "deleteBlob"
  | "createContainer"
  | "deleteContainer"
  | "listBlobs";

/**
 * A request's name, given to `send`: the Azure SDK method it stands for (`upsertEntity`,
 * `listEntities`, …), or a blob request's.
 */
export type StoreOperation =
  | "createTable"
  | "deleteTable"
  | "listTables"
  | "getEntity"
  | "listEntities"
  | "createEntity"
  | "upsertEntity"
  | "updateEntity"
  | "deleteEntity"
  | "submitTransaction"
  | BlobOperation;

/**
 * A `TableStore` in front of another that passes every request through `send`, so a wrapper that
 * adds one concern (a concurrency cap, backend limit checks) writes only that concern.
 */
export abstract class DelegatingStore implements TableStore {
  protected readonly inner: TableStore;
  #blobs: BlobStore | undefined;

  constructor(inner: TableStore) {
    this.inner = inner;
  }

  get name(): string {
    return this.inner.name;
  }

  get capabilities(): StoreCapabilities {
    return this.inner.capabilities;
  }

  /** The inner store's blobs, each request passed through `send` like the table requests. */
  get blobs(): BlobStore | undefined {
    const inner = this.inner.blobs;
    if (inner === undefined) return undefined;
    this.#blobs ??= {
      put: (container, name, data) =>
        this.send(() => inner.put(container, name, data), "uploadBlob", container),
      get: (container, name) => this.send(() => inner.get(container, name), "downloadBlob", container),
      delete: (container, name) => this.send(() => inner.delete(container, name), "deleteBlob", container),
      ...(inner.createContainer && {
        createContainer: (container: string) =>
          this.send(
            () => inner.createContainer?.(container) ?? Promise.resolve(),
            "createContainer",
            container,
          ),
      }),
      deleteContainer: (container) =>
        this.send(() => inner.deleteContainer(container), "deleteContainer", container),
      list: (container, options) => this.send(() => inner.list(container, options), "listBlobs", container),
    };
    return this.#blobs;
  }

  /**
   * Sends one request to the inner store; override to wrap every request alike. `operation` names
   * the request and `target` is its table (a `listTables` prefix, a blob request's container).
   */
  protected send<T>(request: () => Promise<T>, _operation: StoreOperation, _target: string): Promise<T> {
    return request();
  }

  createTable(table: string): Promise<void> {
    return this.send(() => this.inner.createTable(table), "createTable", table);
  }

  deleteTable(table: string): Promise<void> {
    return this.send(() => this.inner.deleteTable(table), "deleteTable", table);
  }

  listTables(prefix?: string): Promise<string[]> {
    return this.send(() => this.inner.listTables(prefix), "listTables", prefix ?? "");
  }

  getEntity(
    table: string,
    partitionKey: string,
    rowKey: string,
    select?: readonly string[],
    types?: PropertyTypes,
  ): Promise<StoredEntity | undefined> {
    return this.send(
      () => this.inner.getEntity(table, partitionKey, rowKey, select, types),
      "getEntity",
      table,
    );
  }

  queryPage(table: string, query: StoreQuery): Promise<StorePage> {
    return this.send(() => this.inner.queryPage(table, query), "listEntities", table);
  }

  insert(table: string, entity: WireEntity): Promise<WriteResult> {
    return this.send(() => this.inner.insert(table, entity), "createEntity", table);
  }

  upsert(table: string, entity: WireEntity, mode: WriteMode): Promise<WriteResult> {
    return this.send(() => this.inner.upsert(table, entity, mode), "upsertEntity", table);
  }

  update(table: string, entity: WireEntity, mode: WriteMode, ifMatch: string): Promise<WriteResult> {
    return this.send(() => this.inner.update(table, entity, mode, ifMatch), "updateEntity", table);
  }

  delete(table: string, partitionKey: string, rowKey: string, ifMatch: string): Promise<boolean> {
    return this.send(() => this.inner.delete(table, partitionKey, rowKey, ifMatch), "deleteEntity", table);
  }

  submitTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]> {
    return this.send(
      () => this.inner.submitTransaction(table, partitionKey, actions),
      "submitTransaction",
      table,
    );
  }
}
