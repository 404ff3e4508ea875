import { DelegatingStore } from "../store/delegating-store.js";
import type {
  BlobStore,
  PropertyTypes,
  StoredEntity,
  StorePage,
  StoreQuery,
  TableStore,
  TransactionAction,
  WireEntity,
  WriteMode,
  WriteResult,
} from "../store/table-store.js";
import type { ServerAddress, Telemetry } from "./telemetry.js";

/** `db.system.name` of large values' blob requests (no convention names Azure Blob storage either; its host is the blob endpoint's, not known here). */
const BLOB_SYSTEM = "azure.blobs";

/**
 * A store each of whose requests is a CLIENT span (`db.operation.name` is the Azure SDK's method name:
 * `upsertEntity`, `listEntities`, …) timed into `db.client.operation.duration`. The context puts it
 * innermost, right around the real store, so a span times the service call and not the wait for a
 * request slot or a pace.
 */
export class TracedStore extends DelegatingStore {
  readonly #telemetry: Telemetry;
  readonly #server: ServerAddress | undefined;
  #tracedBlobs: BlobStore | undefined;

  constructor(inner: TableStore, telemetry: Telemetry) {
    super(inner);
    this.#telemetry = telemetry;
    this.#server = serverOf(inner.endpoint);
  }

  get endpoint(): string | undefined {
    return this.inner.endpoint;
  }

  #request<T>(operation: string, table: string, send: () => Promise<T>): Promise<T> {
    return this.#telemetry.request(operation, table, this.#server, send);
  }

  override get blobs(): BlobStore | undefined {
    const inner = this.inner.blobs;
    if (inner === undefined) return undefined;
    const span = <T>(operation: string, container: string, send: () => Promise<T>) =>
      this.#telemetry.request(operation, container, undefined, send, BLOB_SYSTEM);
    this.#tracedBlobs ??= {
      put: (container, name, data) => span("uploadBlob", container, () => inner.put(container, name, data)),
      get: (container, name) => span("downloadBlob", container, () => inner.get(container, name)),
      delete: (container, name) => span("deleteBlob", container, () => inner.delete(container, name)),
      deleteContainer: (container) =>
        span("deleteContainer", container, () => inner.deleteContainer(container)),
      list: (container, options) => span("listBlobs", container, () => inner.list(container, options)),
    };
    return this.#tracedBlobs;
  }

  override createTable(table: string): Promise<void> {
    return this.#request("createTable", table, () => this.inner.createTable(table));
  }

  override deleteTable(table: string): Promise<void> {
    return this.#request("deleteTable", table, () => this.inner.deleteTable(table));
  }

  override listTables(prefix?: string): Promise<string[]> {
    return this.#request("listTables", prefix ?? "", () => this.inner.listTables(prefix));
  }

  override getEntity(
    table: string,
    partitionKey: string,
    rowKey: string,
    select?: readonly string[],
    types?: PropertyTypes,
  ): Promise<StoredEntity | undefined> {
    return this.#request("getEntity", table, () =>
      this.inner.getEntity(table, partitionKey, rowKey, select, types),
    );
  }

  override queryPage(table: string, query: StoreQuery): Promise<StorePage> {
    return this.#request("listEntities", table, () => this.inner.queryPage(table, query));
  }

  override insert(table: string, entity: WireEntity): Promise<WriteResult> {
    return this.#request("createEntity", table, () => this.inner.insert(table, entity));
  }

  override upsert(table: string, entity: WireEntity, mode: WriteMode): Promise<WriteResult> {
    return this.#request("upsertEntity", table, () => this.inner.upsert(table, entity, mode));
  }

  override update(table: string, entity: WireEntity, mode: WriteMode, ifMatch: string): Promise<WriteResult> {
    return this.#request("updateEntity", table, () => this.inner.update(table, entity, mode, ifMatch));
  }

  override delete(table: string, partitionKey: string, rowKey: string, ifMatch: string): Promise<boolean> {
    return this.#request("deleteEntity", table, () =>
      this.inner.delete(table, partitionKey, rowKey, ifMatch),
    );
  }

  override submitTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]> {
    return this.#request("submitTransaction", table, () =>
      this.inner.submitTransaction(table, partitionKey, actions),
    );
  }
}

/** `server.address` and `server.port` of an endpoint URL (the port only when the URL names one). */
function serverOf(endpoint: string | undefined): ServerAddress | undefined {
  if (endpoint === undefined) return undefined;
  const url = new URL(endpoint);
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  return url.port === ""
    ? { "server.address": host }
    : { "server.address": host, "server.port": Number(url.port) };
}
