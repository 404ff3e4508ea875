/**
 * Client-side pacing on the real clock: a 20,000-entity bulk write over 4 partitions with
 * `throughput: { perPartition: 500 }` (a 2,000/s limit overall), its achieved rate against the limit,
 * on MemoryStore (the pacer's own accuracy: the store is never the bottleneck) and on Azurite beside
 * the same write unpaced (a loaded machine's Azurite may not reach 2,000/s at all); then the write
 * through a fault proxy answering 503 ServerBusy to 30 % of requests, which must complete with every
 * entity written, at a lower pace.
 */
import "reflect-metadata";
import { AzureStore, MemoryStore, TableContext, type TableStore } from "../src/index.js";
import { startFaultProxy } from "../test/support/fault-proxy.js";
import { BenchItem, benchItem } from "./bench-entity.js";
import type { BenchRow } from "./measure.js";

const PER_PARTITION = 500;
const PARTITIONS = 4;
const LIMIT = PER_PARTITION * PARTITIONS;

interface PacedRun {
  written: number;
  seconds: number;
  throttled: number;
  slowest: number;
}

async function pacedWrite(
  store: TableStore,
  tablePrefix: string,
  total: number,
  paced = true,
): Promise<PacedRun> {
  let throttled = 0;
  let slowest = PER_PARTITION;
  const db = new TableContext({
    store,
    tablePrefix,
    ...(paced ? { throughput: { perPartition: PER_PARTITION } } : {}),
    onEvent: (event) => {
      if (event.type !== "throughput") return;
      if (event.reason === "throttled") throttled++;
      slowest = Math.min(slowest, event.rate);
    },
  });
  await db.ensureTables(BenchItem);
  const items = Array.from({ length: total }, (_, i) =>
    benchItem(`p${i % PARTITIONS}`, Math.floor(i / PARTITIONS)),
  );
  const start = performance.now();
  const result = await db.repository(BenchItem).bulkUpsert(items);
  const seconds = (performance.now() - start) / 1000;
  if (result.failed.length > 0) throw new Error(`${result.failed.length} batches failed`);
  let stored = 0;
  for await (const _ of db.repository(BenchItem).scan()) stored++;
  if (stored !== total) throw new Error(`${stored} of ${total} entities stored`);
  return { written: result.written, seconds, throttled, slowest };
}

/** Runs both pacing measurements and returns their result rows. */
export async function pacingRuns(connectionString: string, quick: boolean): Promise<BenchRow[]> {
  console.log(`\n[9] pacing: bulk write at perPartition ${PER_PARTITION} over ${PARTITIONS} partitions`);
  const total = 20_000;
  const azure = () => AzureStore.fromConnectionString(connectionString);
  const memory = await pacedWrite(new MemoryStore(), "pace", total);
  const memoryRate = memory.written / memory.seconds;
  console.log(`  MemoryStore: ${memory.seconds.toFixed(2)} s, ${memoryRate.toFixed(0)}/s (limit ${LIMIT}/s)`);
  const unpaced = await pacedWrite(azure(), "unpaced", total, false);
  const ceiling = unpaced.written / unpaced.seconds;
  const calm = await pacedWrite(azure(), "pace", total);
  const rate = calm.written / calm.seconds;
  console.log(
    `  Azurite: ${calm.seconds.toFixed(2)} s, ${rate.toFixed(0)}/s (limit ${LIMIT}/s; the same write unpaced: ${ceiling.toFixed(0)}/s)`,
  );
  const faultTotal = quick ? 4_000 : total;
  const proxy = await startFaultProxy(connectionString, { seed: 9, rate: 0, mix: ["busy"] });
  let busy: PacedRun;
  try {
    // Tables are created before faults start: the fault rate applies to the write alone.
    await new TableContext({
      store: AzureStore.fromConnectionString(proxy.connectionString),
      tablePrefix: "pacebusy",
    }).ensureTables(BenchItem);
    proxy.setRate(0.3);
    busy = await pacedWrite(AzureStore.fromConnectionString(proxy.connectionString), "pacebusy", faultTotal);
  } finally {
    await proxy.close();
  }
  const busyRate = busy.written / busy.seconds;
  console.log(
    `  with 30 % 503 answers (${proxy.plan.faults.busy} of ${proxy.requests} requests): ` +
      `${busy.written.toLocaleString("en")} entities, all stored, in ${busy.seconds.toFixed(2)} s: ${busyRate.toFixed(0)}/s; ` +
      `${busy.throttled} pace decreases, slowest partition pace ${busy.slowest}/s`,
  );
  // Where Azurite cannot reach the limit, the paced write should match the unpaced one instead.
  const reachable = Math.min(LIMIT, ceiling);
  return [
    {
      name: `paced bulk write (MemoryStore), ${total.toLocaleString("en")} at ${PER_PARTITION}/s × ${PARTITIONS}`,
      ours: `${memoryRate.toFixed(0)}/s`,
      baseline: `${LIMIT}/s limit`,
      ratio: memoryRate / LIMIT,
      target: "1 ± 0.1×",
      met: Math.abs(memoryRate / LIMIT - 1) <= 0.1,
    },
    {
      name: `paced bulk write (Azurite), ${total.toLocaleString("en")} at ${PER_PARTITION}/s × ${PARTITIONS}`,
      ours: `${rate.toFixed(0)}/s`,
      baseline: `${reachable.toFixed(0)}/s ${reachable < LIMIT ? "unpaced" : "limit"}`,
      ratio: rate / reachable,
      target: "1 ± 0.1×",
      met: rate <= LIMIT * 1.1 && rate >= reachable * 0.9,
    },
    {
      name: `same, 30 % 503 ServerBusy (${faultTotal.toLocaleString("en")} entities)`,
      ours: `${busyRate.toFixed(0)}/s`,
      baseline: `${LIMIT}/s limit`,
      ratio: busyRate / LIMIT,
      target: "complete, < 1×",
      met: busy.written === faultTotal && busyRate < LIMIT,
    },
  ];
}
