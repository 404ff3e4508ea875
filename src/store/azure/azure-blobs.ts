import type { NamedKeyCredential, SASCredential, TokenCredential } from "@azure/core-auth";
import {
  AnonymousCredential,
  BlobServiceClient,
  type ContainerClient,
  type ContainerListBlobFlatSegmentResponse,
  StorageSharedKeyCredential,
} from "@azure/storage-blob";
import type { BlobListOptions, BlobPage, BlobStore } from "../blob-store.js";
import { type AzureOperation, translateAzureError } from "./azure-errors.js";

/** The credentials the blob endpoint accepts: those of `AzureStore`. */
type BlobCredential = TokenCredential | NamedKeyCredential | SASCredential;

/** Blob Storage's page size of a listing. */
const LIST_PAGE = 5000;

/**
 * The blob part of `AzureStore`, through `@azure/storage-blob`: the same account credential as the
 * tables (an account key becomes a shared-key credential, a SAS is appended to the URL), the SDK's
 * own retries off (tablekit retries every request itself), one request per call up to Blob
 * Storage's single-put size (256 MiB; larger values are uploaded in blocks by the SDK).
 */
export class AzureBlobs implements BlobStore {
  readonly #service: BlobServiceClient;
  readonly #containers = new Map<string, ContainerClient>();
  readonly #timeoutMs: number;
  readonly #secrets: readonly string[];

  constructor(
    url: string,
    credential: BlobCredential,
    options: { timeoutMs: number; secrets: readonly string[] },
  ) {
    const pipeline = {
      retryOptions: { maxTries: 1 },
      userAgentOptions: { userAgentPrefix: "tablekit" },
    };
    const named = credential as Partial<NamedKeyCredential>;
    const sas = credential as Partial<SASCredential>;
    if (typeof named.name === "string" && typeof named.key === "string") {
      this.#service = new BlobServiceClient(
        url,
        new StorageSharedKeyCredential(named.name, named.key),
        pipeline,
      );
    } else if (typeof sas.signature === "string") {
      const token = sas.signature.startsWith("?") ? sas.signature.slice(1) : sas.signature;
      this.#service = new BlobServiceClient(`${url}?${token}`, new AnonymousCredential(), pipeline);
    } else {
      this.#service = new BlobServiceClient(url, credential as TokenCredential, pipeline);
    }
    this.#timeoutMs = options.timeoutMs;
    this.#secrets = options.secrets;
  }

  async put(container: string, name: string, data: Uint8Array): Promise<void> {
    const client = this.#container(container).getBlockBlobClient(name);
    const upload = (abortSignal: AbortSignal) => client.uploadData(data, { abortSignal });
    try {
      await this.#run("putBlob", container, name, upload);
    } catch (error) {
      // The first blob of a table creates its container (no extra request on every later write).
      if (serviceCode(error) !== "ContainerNotFound") throw error;
      await this.#run("putBlob", container, name, (abortSignal) =>
        this.#container(container).createIfNotExists({ abortSignal }),
      );
      await this.#run("putBlob", container, name, upload);
    }
  }

  async get(container: string, name: string): Promise<Uint8Array | undefined> {
    const client = this.#container(container).getBlobClient(name);
    try {
      return await this.#run("getBlob", container, name, async (abortSignal) => {
        // One GET of the whole blob (downloadToBuffer would first ask for its size).
        const response = await client.download(0, undefined, { abortSignal });
        const chunks: Buffer[] = [];
        for await (const chunk of response.readableStreamBody ?? []) chunks.push(chunk as Buffer);
        const bytes = Buffer.concat(chunks);
        return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      });
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw error;
    }
  }

  async delete(container: string, name: string): Promise<boolean> {
    const client = this.#container(container).getBlobClient(name);
    try {
      await this.#run("deleteBlob", container, name, (abortSignal) => client.delete({ abortSignal }));
      return true;
    } catch (error) {
      if (statusOf(error) === 404) return false;
      throw error;
    }
  }

  async createContainer(container: string): Promise<void> {
    await this.#run("createContainer", container, "", (abortSignal) =>
      this.#container(container).createIfNotExists({ abortSignal }),
    );
  }

  async deleteContainer(container: string): Promise<void> {
    const client = this.#container(container);
    await this.#run("deleteContainer", container, "", (abortSignal) =>
      client.deleteIfExists({ abortSignal }),
    );
  }

  async list(container: string, options: BlobListOptions = {}): Promise<BlobPage> {
    const client = this.#container(container);
    try {
      return await this.#run("listBlobs", container, options.prefix ?? "", async (abortSignal) => {
        const pages = client
          .listBlobsFlat({ abortSignal, ...(options.prefix ? { prefix: options.prefix } : {}) })
          .byPage({
            maxPageSize: LIST_PAGE,
            ...(options.continuation === undefined ? {} : { continuationToken: options.continuation }),
          });
        const { value } = (await pages.next()) as { value: ContainerListBlobFlatSegmentResponse | undefined };
        const items = (value?.segment.blobItems ?? []).map((blob) => ({
          name: blob.name,
          createdOn: blob.properties.createdOn ?? blob.properties.lastModified,
          size: blob.properties.contentLength ?? 0,
        }));
        const continuation = value?.continuationToken;
        return continuation ? { items, continuation } : { items };
      });
    } catch (error) {
      if (statusOf(error) === 404) return { items: [] };
      throw error;
    }
  }

  #container(container: string): ContainerClient {
    let client = this.#containers.get(container);
    if (client === undefined) {
      client = this.#service.getContainerClient(container);
      this.#containers.set(container, client);
    }
    return client;
  }

  /** Runs one request under the store's timeout and translates its failure (the status and service code stay). */
  async #run<T>(
    operation: AzureOperation,
    container: string,
    name: string,
    call: (abortSignal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const controller = new AbortController();
    const timer = this.#timeoutMs > 0 ? setTimeout(() => controller.abort(), this.#timeoutMs) : undefined;
    try {
      return await call(controller.signal);
    } catch (error) {
      throw translateAzureError(error, {
        operation,
        table: `${container}/${name}`,
        timeoutMs: this.#timeoutMs,
        secrets: this.#secrets,
      });
    } finally {
      clearTimeout(timer);
    }
  }
}

function statusOf(error: unknown): number | undefined {
  return (error as { statusCode?: number }).statusCode;
}

function serviceCode(error: unknown): string | undefined {
  return (error as { serviceCode?: string }).serviceCode;
}
