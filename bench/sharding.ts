/**
 * ShardedStore over `tablekit serve` processes (each its own process, like separate accounts):
 * aggregate batched-upsert throughput over 3 shards vs 1 plain store, a cross-shard scan vs a
 * single-store scan of the same rows, and a reshard's rate and longest write stall.
 * Run: `node --import tsx bench/sharding.ts [partitions] [rowsPerPartition]`.
 */
import { AzureStore, ShardedStore } from "../src/index.js";
import type { StoreContinuation, TableStore } from "../src/store/table-store.js";
import { spawnServer } from "./serve-vs-azurite.js";

const partitions = Number(process.argv[2] ?? 300);
const perPartition = Number(process.argv[3] ?? 40);
const CONCURRENCY = 16;

function rowsOf(p: number) {
  return Array.from({ length: perPartition }, (_, i) => ({
    partitionKey: `p${String(p).padStart(4, "0")}`,
    rowKey: String(i).padStart(6, "0"),
    name: `item ${i}`,
    count: i,
    active: i % 2 === 0,
  }));
}

/** Upserts every partition's rows in one transaction each (at most 99 rows), CONCURRENCY partitions at a time. */
async function load(store: TableStore, table: string): Promise<number> {
  await store.createTable(table);
  const started = performance.now();
  const cpu = process.cpuUsage();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < partitions) {
        const p = next++;
        const rows = rowsOf(p);
        for (let i = 0; i < rows.length; i += 99) {
          const part = rows.slice(i, i + 99);
          // Upserts are idempotent: a dropped connection (this machine is loaded) is simply sent again.
          for (let attempt = 1; ; attempt++) {
            try {
              await store.submitTransaction(
                table,
                part[0]?.partitionKey as string,
                part.map((entity) => ({ kind: "upsert" as const, entity, mode: "replace" as const })),
              );
              break;
            } catch (error) {
              if (attempt >= 5) throw error;
            }
          }
        }
      }
    }),
  );
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  lastClientCpu = (used.user + used.system) / 1000 / wall;
  return (partitions * perPartition) / (wall / 1000);
}

/** The client process's CPU over the last load, as a share of one core (what bounds a single client). */
let lastClientCpu = 0;

async function scan(store: TableStore, table: string): Promise<{ rows: number; ms: number }> {
  const started = performance.now();
  let rows = 0;
  let continuation: StoreContinuation | undefined;
  do {
    const page = await store.queryPage(table, { continuation });
    rows += page.items.length;
    continuation = page.continuation;
  } while (continuation !== undefined);
  return { rows, ms: performance.now() - started };
}

const servers = await Promise.all(
  ["single", "a", "b", "c", "d"].map((name) =>
    spawnServer(name, "../src/cli/main.ts", ["serve", "--port", "0"]),
  ),
);
try {
  const [single, a, b, c, d] = servers.map((s) => AzureStore.fromConnectionString(s.connectionString)) as [
    AzureStore,
    AzureStore,
    AzureStore,
    AzureStore,
    AzureStore,
  ];
  const sharded = new ShardedStore({ shards: { a, b, c } });
  console.log(
    `ShardedStore bench: ${partitions} partitions x ${perPartition} rows, ${CONCURRENCY} transactions in flight`,
  );
  // First round: every partition is new (a sharded partition's first write also opens it: 2 requests).
  const oneNew = await load(single, "Bench");
  const threeNew = await load(sharded, "Bench");
  console.log(
    `  batched upserts into new partitions, 1 serve process (plain AzureStore): ${Math.round(oneNew)} rows/s`,
  );
  console.log(
    `  batched upserts into new partitions, 3 serve processes (ShardedStore):   ${Math.round(threeNew)} rows/s (${(threeNew / oneNew).toFixed(2)}x)`,
  );
  // Second round: the same partitions again (the steady state: one fenced transaction per batch).
  const oneRate = await load(single, "Bench");
  const threeRate = await load(sharded, "Bench");
  console.log(`  batched upserts into existing partitions, 1 serve process: ${Math.round(oneRate)} rows/s`);
  console.log(
    `  batched upserts into existing partitions, 3 serve processes: ${Math.round(threeRate)} rows/s (${(threeRate / oneRate).toFixed(2)}x); client CPU ${(lastClientCpu * 100).toFixed(0)} % of a core`,
  );
  const one = await scan(single, "Bench");
  const three = await scan(sharded, "Bench");
  console.log(`  full scan, single store: ${one.rows} rows in ${one.ms.toFixed(0)} ms`);
  console.log(
    `  full scan, 3 shards merged: ${three.rows} rows in ${three.ms.toFixed(0)} ms (${(three.ms / one.ms).toFixed(2)}x)`,
  );
  const started = performance.now();
  const moved = await sharded.addShard("d", d);
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `  reshard 3 -> 4: ${moved.partitions} partitions, ${moved.rows} rows in ${seconds.toFixed(1)} s (${Math.round(moved.rows / seconds)} rows/s), longest write stall ${moved.longestStallMs.toFixed(1)} ms`,
  );
  // After the move the old shards keep each moved partition's state row (its forwarding address): a
  // merged scan meets them, and follows none whose rows it already took from the new shard.
  const four = await scan(sharded, "Bench");
  console.log(
    `  full scan, 4 shards merged after the reshard: ${four.rows} rows in ${four.ms.toFixed(0)} ms (${(four.ms / one.ms).toFixed(2)}x the single store)`,
  );
} finally {
  await Promise.all(servers.map((s) => s.close()));
}
