/**
 * The blob part of the store port: where large entity values live (Azure Blob Storage beside the
 * Table service; `MemoryStore` keeps them itself). Like `TableStore`, it moves bytes and knows
 * nothing of entities: every method is one service request, failures are tablekit errors
 * (`StoreError` with `statusCode`/`serviceCode`).
 */

/** One stored blob, as a listing reports it. */
export interface BlobInfo {
  readonly name: string;
  /** When the blob was written (the service's creation time). */
  readonly createdOn: Date;
  readonly size: number;
}

/** One page of a blob listing and, when more may follow, where to continue. */
export interface BlobPage {
  items: BlobInfo[];
  continuation?: string;
}

/** Options of `BlobStore.list`. */
export interface BlobListOptions {
  /** Only names starting with this text. */
  prefix?: string | undefined;
  continuation?: string | undefined;
}

/** Blobs by container and name: put (whole), get (whole), delete, list by prefix. */
export interface BlobStore {
  /** Writes the whole blob, creating the container when it does not exist yet; overwrites a blob of that name. */
  put(container: string, name: string, data: Uint8Array): Promise<void>;
  /** The blob's bytes; `undefined` when the blob (or its container) does not exist. */
  get(container: string, name: string): Promise<Uint8Array | undefined>;
  /** Deletes the blob; resolves whether it existed (a missing container counts as absent). */
  delete(container: string, name: string): Promise<boolean>;
  /**
   * Creates the container where it does not exist yet. Optional: `put` creates a missing container
   * itself, but only after the service refused the upload (three requests for the first blob);
   * `db.ensureTables` creates the containers of the classes it is given up front, so that first
   * upload is one request, as `explainWrite` lists it.
   */
  createContainer?(container: string): Promise<void>;
  /** Deletes the container and every blob in it; succeeds when it does not exist. */
  deleteContainer(container: string): Promise<void>;
  /** One page of the container's blobs in name order; empty when the container does not exist. */
  list(container: string, options?: BlobListOptions): Promise<BlobPage>;
}
