import type { BlobInfo, BlobListOptions, BlobPage, BlobStore } from "../blob-store.js";
import type { TableStore } from "../table-store.js";
import type { PartitionRouter } from "./partition-router.js";

/** The container prefix of tablekit's large values (src/repository/large/large-reference.ts). */
const LARGE_CONTAINER_PREFIX = "tablekit-";
const PREFIX = "tkshard1:";

/**
 * The shards' blobs as one store. A large value's blob name starts with its entity's PartitionKey
 * (`k<base64url>/…`) and its container names the table, so a blob is written on its entity's shard;
 * a read that misses there (a blob written just before its partition moved) asks the other shards,
 * deletes go to every shard, and listings merge every shard's by name.
 */
export class ShardedBlobs implements BlobStore {
  readonly #router: PartitionRouter;
  readonly #stores: Readonly<Record<string, TableStore>>;

  /** `stores` is the sharded store's live record of shards (a shard added later is included). */
  constructor(router: PartitionRouter, stores: Readonly<Record<string, TableStore>>) {
    this.#router = router;
    this.#stores = stores;
  }

  get #shards(): Record<string, BlobStore> {
    return Object.fromEntries(
      Object.entries(this.#stores).map(([name, store]) => [name, store.blobs as BlobStore]),
    );
  }

  async put(container: string, name: string, data: Uint8Array): Promise<void> {
    await this.#blobs(await this.#shardOf(container, name)).put(container, name, data);
  }

  async get(container: string, name: string): Promise<Uint8Array | undefined> {
    const home = await this.#shardOf(container, name);
    const found = await this.#blobs(home).get(container, name);
    if (found !== undefined) return found;
    for (const [shard, blobs] of Object.entries(this.#shards)) {
      if (shard === home) continue;
      const elsewhere = await blobs.get(container, name);
      if (elsewhere !== undefined) return elsewhere;
    }
    return undefined;
  }

  async delete(container: string, name: string): Promise<boolean> {
    const existed = await Promise.all(
      Object.values(this.#shards).map((blobs) => blobs.delete(container, name)),
    );
    return existed.some(Boolean);
  }

  /** On every shard: any shard may receive the table's blobs (a partition moves with its blobs). */
  async createContainer(container: string): Promise<void> {
    await Promise.all(Object.values(this.#shards).map((blobs) => blobs.createContainer?.(container)));
  }

  async deleteContainer(container: string): Promise<void> {
    await Promise.all(Object.values(this.#shards).map((blobs) => blobs.deleteContainer(container)));
  }

  /** One page per shard that is not done, merged by name (a name on two shards is listed once). */
  async list(container: string, options?: BlobListOptions): Promise<BlobPage> {
    const cursors = parseCursors(options?.continuation);
    const names = Object.keys(this.#shards).filter((shard) => cursors?.[shard] !== null);
    const pages = await Promise.all(
      names.map(async (shard) => {
        const from = cursors?.[shard] ?? undefined;
        const page = await this.#blobs(shard).list(container, {
          prefix: options?.prefix,
          ...(from === undefined ? {} : { continuation: from }),
        });
        return [shard, page] as const;
      }),
    );
    const byName = new Map<string, BlobInfo>();
    for (const [, page] of pages)
      for (const blob of page.items) if (!byName.has(blob.name)) byName.set(blob.name, blob);
    const items = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const next: Record<string, string | null> = { ...(cursors ?? {}) };
    for (const [shard, page] of pages) next[shard] = page.continuation ?? null;
    const more = Object.keys(this.#shards).some((shard) => next[shard] !== null && next[shard] !== undefined);
    const result: BlobPage = { items };
    if (more) result.continuation = PREFIX + Buffer.from(JSON.stringify(next)).toString("base64url");
    return result;
  }

  /** The shard of the blob's entity partition; a name tablekit did not write is placed by its container and name. */
  async #shardOf(container: string, name: string): Promise<string> {
    const first = name.split("/", 1)[0] ?? "";
    if (container.startsWith(LARGE_CONTAINER_PREFIX) && first.startsWith("k")) {
      const partitionKey = Buffer.from(first.slice(1), "base64url").toString("utf8");
      return this.#router.ownerOf(container.slice(LARGE_CONTAINER_PREFIX.length), partitionKey);
    }
    return this.#router.ownerOf(container, name);
  }

  #blobs(shard: string): BlobStore {
    return this.#shards[shard] as BlobStore;
  }
}

/** A listing continuation: each shard's own (`null` once it is done). */
function parseCursors(continuation: string | undefined): Record<string, string | null> | undefined {
  if (continuation === undefined) return undefined;
  if (!continuation.startsWith(PREFIX)) return undefined;
  return JSON.parse(Buffer.from(continuation.slice(PREFIX.length), "base64url").toString("utf8")) as Record<
    string,
    string | null
  >;
}
