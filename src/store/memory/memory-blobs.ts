import type { BlobListOptions, BlobPage, BlobStore } from "../blob-store.js";
import { BlobFile, type MemoryBlob } from "./blob-file.js";
import { badRequest } from "./service-errors.js";

/** Blob Storage's container rule: 3-63 lowercase letters, digits and single hyphens, starting and ending alphanumeric. */
const CONTAINER_NAME = /^(?=.{3,63}$)[a-z0-9]+(-[a-z0-9]+)*$/;
/** Blob Storage's limit on a blob name's length. */
const MAX_BLOB_NAME = 1024;
/** Blob Storage's page size of a listing. */
const LIST_PAGE = 5000;

/**
 * The blobs of a `MemoryStore`, in memory (and, with `{ file }`, in `<file>.blobs`). Checks names by
 * Blob Storage's rules and copies bytes in and out, so callers cannot change what is stored.
 */
export class MemoryBlobs implements BlobStore {
  readonly #containers: Map<string, Map<string, MemoryBlob>>;
  readonly #file: BlobFile | undefined;

  constructor(file: string | undefined) {
    this.#file = file === undefined ? undefined : new BlobFile(file);
    const stored = this.#file?.read();
    this.#containers = stored ?? new Map();
    // Compacted like the table file; no file is made until the first blob is put.
    if (stored !== undefined) this.#file?.rewrite(stored);
  }

  async put(container: string, name: string, data: Uint8Array): Promise<void> {
    checkNames(container, name);
    const blob = { data: new Uint8Array(data), createdOn: new Date() };
    this.#file?.append(container, name, blob);
    const blobs = this.#containers.get(container) ?? new Map<string, MemoryBlob>();
    this.#containers.set(container, blobs);
    blobs.set(name, blob);
  }

  async get(container: string, name: string): Promise<Uint8Array | undefined> {
    checkNames(container, name);
    const blob = this.#containers.get(container)?.get(name);
    return blob === undefined ? undefined : new Uint8Array(blob.data);
  }

  async delete(container: string, name: string): Promise<boolean> {
    checkNames(container, name);
    const blobs = this.#containers.get(container);
    if (blobs === undefined || !blobs.has(name)) return false;
    this.#file?.append(container, name, undefined);
    blobs.delete(name);
    return true;
  }

  async deleteContainer(container: string): Promise<void> {
    checkNames(container, undefined);
    if (!this.#containers.has(container)) return;
    this.#file?.append(container, undefined, undefined);
    this.#containers.delete(container);
  }

  async list(container: string, options: BlobListOptions = {}): Promise<BlobPage> {
    checkNames(container, undefined);
    const prefix = options.prefix ?? "";
    const after = options.continuation;
    const names = [...(this.#containers.get(container)?.keys() ?? [])]
      .filter((n) => n.startsWith(prefix) && (after === undefined || n > after))
      .sort();
    const items = names.slice(0, LIST_PAGE).map((name) => {
      const blob = this.#containers.get(container)?.get(name) as MemoryBlob;
      return { name, createdOn: blob.createdOn, size: blob.data.length };
    });
    const last = items[items.length - 1];
    return names.length > LIST_PAGE && last !== undefined ? { items, continuation: last.name } : { items };
  }
}

function checkNames(container: string, name: string | undefined): void {
  if (typeof container !== "string" || !CONTAINER_NAME.test(container)) {
    throw badRequest("InvalidResourceName", `container name '${String(container)}' is invalid`);
  }
  if (name === undefined) return;
  if (typeof name !== "string" || name.length === 0 || name.length > MAX_BLOB_NAME) {
    throw badRequest("InvalidResourceName", `blob name must be 1 to ${MAX_BLOB_NAME} characters long`);
  }
}
