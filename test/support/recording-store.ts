import type { TableStore, TransactionAction, WriteResult } from "../../src/index.js";
import type { BlobStore } from "../../src/store/blob-store.js";
import { CountingStore } from "./counting-store.js";
import type { StoreRequest } from "./store-wrapper.js";

/** Records every request in order: table requests by method, blob requests as `putBlob`/`deleteBlob`. */
export class RecordingStore extends CountingStore {
  readonly sent: Array<{ method: string; table: string }> = [];
  /** The number of operations of each entity group transaction sent, in order. */
  readonly batches: number[] = [];
  /** Each entity group transaction's operations, in order: kind, `if` when conditional on an ETag, RowKey. */
  readonly batchOperations: string[][] = [];
  readonly #blobs: BlobStore | undefined;

  constructor(inner: TableStore) {
    super(inner);
    const blobs = inner.blobs;
    this.#blobs = blobs && {
      put: (container, name, data) => {
        this.sent.push({ method: "putBlob", table: container });
        return blobs.put(container, name, data);
      },
      delete: (container, name) => {
        this.sent.push({ method: "deleteBlob", table: container });
        return blobs.delete(container, name);
      },
      get: (container, name) => blobs.get(container, name),
      deleteContainer: (container) => blobs.deleteContainer(container),
      list: (container, options) => blobs.list(container, options),
    };
  }

  override get blobs(): BlobStore | undefined {
    return this.#blobs;
  }

  override submitTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]> {
    this.batches.push(actions.length);
    this.batchOperations.push(
      actions.map((action) => {
        const conditional = "ifMatch" in action && action.ifMatch !== "*" ? " if" : "";
        const rowKey = action.kind === "delete" ? action.rowKey : action.entity.rowKey;
        return `${action.kind}${conditional} ${rowKey}`;
      }),
    );
    return super.submitTransaction(table, partitionKey, actions);
  }

  protected override around<T>(request: StoreRequest, send: () => Promise<T>): Promise<T> {
    this.sent.push({ method: request.method, table: request.table });
    return super.around(request, send);
  }
}
