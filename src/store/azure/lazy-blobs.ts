import type { NamedKeyCredential, SASCredential, TokenCredential } from "@azure/core-auth";
import type { BlobListOptions, BlobPage, BlobStore } from "../blob-store.js";
import type { AzureBlobs } from "./azure-blobs.js";

/** The arguments of `AzureBlobs`' constructor. */
type AzureBlobsArgs = ConstructorParameters<typeof AzureBlobs>;

/**
 * `AzureBlobs` loaded on its first request: the Blob SDK (@azure/storage-blob) costs about as much to
 * load as the Table SDK, and most tables have no large column, so `AzureStore` does not pay it up front.
 */
export class LazyAzureBlobs implements BlobStore {
  readonly #args: AzureBlobsArgs;
  #blobs: Promise<BlobStore> | undefined;

  constructor(
    url: string,
    credential: TokenCredential | NamedKeyCredential | SASCredential,
    options: AzureBlobsArgs[2],
  ) {
    this.#args = [url, credential, options];
  }

  async put(container: string, name: string, data: Uint8Array): Promise<void> {
    return (await this.#load()).put(container, name, data);
  }

  async get(container: string, name: string): Promise<Uint8Array | undefined> {
    return (await this.#load()).get(container, name);
  }

  async delete(container: string, name: string): Promise<boolean> {
    return (await this.#load()).delete(container, name);
  }

  async createContainer(container: string): Promise<void> {
    const blobs = await this.#load();
    await blobs.createContainer?.(container);
  }

  async deleteContainer(container: string): Promise<void> {
    return (await this.#load()).deleteContainer(container);
  }

  async list(container: string, options?: BlobListOptions): Promise<BlobPage> {
    return (await this.#load()).list(container, options);
  }

  #load(): Promise<BlobStore> {
    if (this.#blobs === undefined) {
      const loading = import("./azure-blobs.js").then(({ AzureBlobs }) => new AzureBlobs(...this.#args));
      // A failed load (a broken install) is not kept: the next request tries again and reports it again.
      loading.catch(() => {
        if (this.#blobs === loading) this.#blobs = undefined;
      });
      this.#blobs = loading;
    }
    return this.#blobs;
  }
}
