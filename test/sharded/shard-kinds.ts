import { AzureStore, startTableServer, type TableServer } from "../../src/index.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import type { TableStore } from "../../src/store/table-store.js";
import { selectedStoreNames } from "../support/store-selection.js";

/** A way to make the shards of one test: in-process MemoryStores, or AzureStores over `tablekit serve` instances. */
export interface ShardKind {
  readonly name: "memory" | "serve";
  /** Fresh, empty shards named by `names`; `close` stops whatever they need. */
  create(names: readonly string[]): Promise<{ shards: Record<string, TableStore>; close(): Promise<void> }>;
}

const memory: ShardKind = {
  name: "memory",
  async create(names) {
    return { shards: Object.fromEntries(names.map((n) => [n, new MemoryStore()])), close: async () => {} };
  },
};

/** One `tablekit serve` (startTableServer on a free port) per shard, each its own account. */
const serve: ShardKind = {
  name: "serve",
  async create(names) {
    const servers: TableServer[] = await Promise.all(names.map(() => startTableServer({ port: 0 })));
    const shards = Object.fromEntries(
      names.map((n, i) => [n, AzureStore.fromConnectionString((servers[i] as TableServer).connectionString)]),
    );
    return { shards, close: async () => void (await Promise.all(servers.map((s) => s.close()))) };
  },
};

/** The shard kinds this run covers (`TABLEKIT_STORES`: `memory`, and `serve` for the wire subset). */
export const shardKinds: ShardKind[] = [memory, serve].filter((kind) =>
  selectedStoreNames().includes(kind.name),
);
