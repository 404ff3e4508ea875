import { StoreError } from "../../src/index.js";
import type { BlobListOptions, BlobPage, BlobStore, TableStore } from "../../src/store/table-store.js";
import { type StoreRequest, StoreWrapper } from "../support/store-wrapper.js";

/**
 * A store that counts every request, table and blob alike, and can crash after request `k`: from
 * then on every request (table or blob) fails before it is sent, as if the process had died, so
 * nothing after the crash point is applied (not even a writer's clean-up).
 */
export class CrashAfterStore extends StoreWrapper {
  /** Requests (table and blob) since the last `arm` or `disarm`. */
  requests = 0;
  /** `method table` of each request since the last `arm` or `disarm`. */
  readonly log: string[] = [];
  #after: number | undefined;
  readonly #blobs: BlobStore | undefined;

  constructor(inner: TableStore) {
    super(inner);
    const blobs = inner.blobs;
    this.#blobs = blobs && new CountedBlobs(blobs, (what, send) => this.#run(what, send));
  }

  override get blobs(): BlobStore | undefined {
    return this.#blobs;
  }

  /** Lets `after` more requests through, then fails every one (0: nothing is sent). */
  arm(after: number): void {
    this.disarm();
    this.#after = after;
  }

  /** A healthy store again; counting starts from zero. */
  disarm(): void {
    this.#after = undefined;
    this.requests = 0;
    this.log.length = 0;
  }

  protected override around<T>({ method, table }: StoreRequest, send: () => Promise<T>): Promise<T> {
    return this.#run(`${method} ${table}`, send);
  }

  async #run<T>(what: string, send: () => Promise<T>): Promise<T> {
    this.requests += 1;
    this.log.push(what);
    if (this.#after !== undefined && this.requests > this.#after) {
      throw new StoreError(`simulated crash before request ${this.requests} (${what})`, {
        statusCode: 403,
        serviceCode: "SimulatedCrash",
      });
    }
    return send();
  }
}

class CountedBlobs implements BlobStore {
  readonly #inner: BlobStore;
  readonly #run: <T>(what: string, send: () => Promise<T>) => Promise<T>;

  constructor(inner: BlobStore, run: <T>(what: string, send: () => Promise<T>) => Promise<T>) {
    this.#inner = inner;
    this.#run = run;
  }

  put(container: string, name: string, data: Uint8Array): Promise<void> {
    return this.#run(`blob.put ${container}`, () => this.#inner.put(container, name, data));
  }

  get(container: string, name: string): Promise<Uint8Array | undefined> {
    return this.#run(`blob.get ${container}`, () => this.#inner.get(container, name));
  }

  delete(container: string, name: string): Promise<boolean> {
    return this.#run(`blob.delete ${container}`, () => this.#inner.delete(container, name));
  }

  deleteContainer(container: string): Promise<void> {
    return this.#run(`blob.deleteContainer ${container}`, () => this.#inner.deleteContainer(container));
  }

  list(container: string, options?: BlobListOptions): Promise<BlobPage> {
    return this.#run(`blob.list ${container}`, () => this.#inner.list(container, options));
  }
}
