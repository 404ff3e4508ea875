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
} from "../index.js";

/** The request-making methods of a `TableStore`. */
export type StoreMethod = Exclude<
  keyof TableStore,
  "name" | "capabilities" | "endpoint" | "blobs" | "repair"
>;

/** Every request-making method, in port order. */
export const STORE_METHODS: readonly StoreMethod[] = [
  "createTable",
  "deleteTable",
  "listTables",
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
  /** Set for entity requests and transactions. */
  partitionKey?: string;
  /**
   * The request apart from its table (whose name is random per run): its keys, or its query. Two
   * attempts of one request share it; fault plans decide per identity, not per arrival order.
   */
  identity: string;
}

/** Joins the parts of a request identity unambiguously. */
export function requestIdentity(...parts: ReadonlyArray<string | number | undefined>): string {
  return parts.map((part) => (part === undefined ? "" : String(part))).join("\u0001");
}

/**
 * A `TableStore` in front of another: every request goes through `around`, so a test wrapper
 * (`faultyStore`, and the repository's own test kit: counting, fault injection, crash simulation)
 * writes only what it adds. Not exported from `tablekit/testing`.
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

  /** The inner store's blobs, passed straight through (blob requests are not table requests). */
  get blobs(): BlobStore | undefined {
    return this.inner.blobs;
  }

  /** Runs one request: call `send` to pass it on to the inner store. */
  protected abstract around<T>(request: StoreRequest, send: () => Promise<T>): Promise<T>;

  createTable(table: string): Promise<void> {
    return this.around({ method: "createTable", table, identity: "" }, () => this.inner.createTable(table));
  }

  deleteTable(table: string): Promise<void> {
    return this.around({ method: "deleteTable", table, identity: "" }, () => this.inner.deleteTable(table));
  }

  listTables(prefix?: string): Promise<string[]> {
    return this.around({ method: "listTables", table: "", identity: prefix ?? "" }, () =>
      this.inner.listTables(prefix),
    );
  }

  getEntity(
    table: string,
    partitionKey: string,
    rowKey: string,
    select?: readonly string[],
    types?: PropertyTypes,
  ): Promise<StoredEntity | undefined> {
    const identity = requestIdentity(partitionKey, rowKey, select?.join(","));
    return this.around({ method: "getEntity", table, partitionKey, identity }, () =>
      this.inner.getEntity(table, partitionKey, rowKey, select, types),
    );
  }

  queryPage(table: string, query: StoreQuery): Promise<StorePage> {
    return this.around({ method: "queryPage", table, identity: queryIdentity(query) }, () =>
      this.inner.queryPage(table, query),
    );
  }

  insert(table: string, entity: WireEntity): Promise<WriteResult> {
    return this.around({ method: "insert", table, ...entityIdentity(entity) }, () =>
      this.inner.insert(table, entity),
    );
  }

  upsert(table: string, entity: WireEntity, mode: WriteMode): Promise<WriteResult> {
    return this.around({ method: "upsert", table, ...entityIdentity(entity) }, () =>
      this.inner.upsert(table, entity, mode),
    );
  }

  update(table: string, entity: WireEntity, mode: WriteMode, ifMatch: string): Promise<WriteResult> {
    return this.around({ method: "update", table, ...entityIdentity(entity) }, () =>
      this.inner.update(table, entity, mode, ifMatch),
    );
  }

  delete(table: string, partitionKey: string, rowKey: string, ifMatch: string): Promise<boolean> {
    const identity = requestIdentity(partitionKey, rowKey);
    return this.around({ method: "delete", table, partitionKey, identity }, () =>
      this.inner.delete(table, partitionKey, rowKey, ifMatch),
    );
  }

  submitTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]> {
    const rowKeys = actions.map((action) =>
      action.kind === "delete" ? action.rowKey : action.entity.rowKey,
    );
    const identity = requestIdentity(partitionKey, ...rowKeys.sort());
    return this.around({ method: "submitTransaction", table, partitionKey, identity }, () =>
      this.inner.submitTransaction(table, partitionKey, actions),
    );
  }
}

function entityIdentity(entity: WireEntity): { partitionKey: string; identity: string } {
  return { partitionKey: entity.partitionKey, identity: requestIdentity(entity.partitionKey, entity.rowKey) };
}

function queryIdentity(query: StoreQuery): string {
  return JSON.stringify([query.filter, query.select, query.top, query.continuation]);
}
