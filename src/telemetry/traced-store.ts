import { type BlobOperation, DelegatingStore, type StoreOperation } from "../store/delegating-store.js";
import type {
  TableStore,
  TransactionAction,
  WireEntity,
  WriteMode,
  WriteResult,
} from "../store/table-store.js";
import type { ServerAddress, Telemetry } from "./telemetry.js";

/** `db.system.name` of large values' blob requests (no convention names Azure Blob storage either; its host is the blob endpoint's, not known here). */
const BLOB_SYSTEM = "azure.blobs";
const BLOB_OPERATIONS: ReadonlySet<StoreOperation> = new Set<BlobOperation>([
  "uploadBlob",
  "downloadBlob",
  "deleteBlob",
  "createContainer",
  "deleteContainer",
  "listBlobs",
]);

/**
 * A store each of whose requests is a CLIENT span (`db.operation.name` is the Azure SDK's method name:
 * `upsertEntity`, `listEntities`, …) timed into `db.client.operation.duration`. The context puts it
 * innermost, right around the real store, so a span times the service call and not the wait for a
 * request slot or a pace.
 */
export class TracedStore extends DelegatingStore {
  readonly #telemetry: Telemetry;
  readonly #server: ServerAddress | undefined;

  constructor(inner: TableStore, telemetry: Telemetry) {
    super(inner);
    this.#telemetry = telemetry;
    this.#server = serverOf(inner.endpoint);
  }

  get endpoint(): string | undefined {
    return this.inner.endpoint;
  }

  // With no provider registered (tracing and metrics checked per request, so one registered later
  // counts), a write goes to the store directly: no closure, no span, no duration.
  override insert(table: string, entity: WireEntity): Promise<WriteResult> {
    if (!this.#telemetry.recording) return this.inner.insert(table, entity);
    return super.insert(table, entity);
  }

  override upsert(table: string, entity: WireEntity, mode: WriteMode): Promise<WriteResult> {
    if (!this.#telemetry.recording) return this.inner.upsert(table, entity, mode);
    return super.upsert(table, entity, mode);
  }

  override update(table: string, entity: WireEntity, mode: WriteMode, ifMatch: string): Promise<WriteResult> {
    if (!this.#telemetry.recording) return this.inner.update(table, entity, mode, ifMatch);
    return super.update(table, entity, mode, ifMatch);
  }

  override delete(table: string, partitionKey: string, rowKey: string, ifMatch: string): Promise<boolean> {
    if (!this.#telemetry.recording) return this.inner.delete(table, partitionKey, rowKey, ifMatch);
    return super.delete(table, partitionKey, rowKey, ifMatch);
  }

  override submitTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]> {
    if (!this.#telemetry.recording) return this.inner.submitTransaction(table, partitionKey, actions);
    return super.submitTransaction(table, partitionKey, actions);
  }

  /** Each request (blob requests too, through the inherited `blobs`) in its CLIENT span. */
  protected override send<T>(
    request: () => Promise<T>,
    operation: StoreOperation,
    target: string,
  ): Promise<T> {
    return BLOB_OPERATIONS.has(operation)
      ? this.#telemetry.request(operation, target, undefined, request, BLOB_SYSTEM)
      : this.#telemetry.request(operation, target, this.#server, request);
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
