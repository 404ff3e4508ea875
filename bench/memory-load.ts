/**
 * MemoryStore at scale: heap per entity and bulk load rate for `count` entities of 10 properties
 * (`BenchItem`), written in process with `bulkUpsert` over 100 partitions. Items are generated in
 * chunks outside the timed part so the load rate is the store's (and the repository's) own.
 * Run alone: `node --expose-gc --import tsx bench/memory-load.ts [count]`.
 */
import "reflect-metadata";
import { MemoryStore, TableContext } from "../src/index.js";
import { BenchItem, benchItem } from "./bench-entity.js";

/** Heap and load rate of one in-process load. */
export interface LoadMeasurement {
  readonly count: number;
  /** Heap growth after a full GC, in bytes, with the store holding every entity. */
  readonly heapBytes: number;
  /** Entities per second through `bulkUpsert`, generation excluded. */
  readonly rate: number;
  /** The same per second of this process's CPU time (the wall rate suffers when the machine is shared). */
  readonly cpuRate: number;
}

const gc = (globalThis as { gc?: () => void }).gc;

function heapAfterGc(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

/** Loads `count` entities into a fresh MemoryStore and measures heap and rate. */
export async function measureLoad(count: number): Promise<LoadMeasurement> {
  const before = heapAfterGc();
  const store = new MemoryStore();
  const db = new TableContext({ store });
  await db.ensureTables(BenchItem);
  const repo = db.repository(BenchItem);
  const chunk = 10_000;
  const perPartition = count / 100;
  let elapsed = 0;
  let cpu = 0;
  for (let at = 0; at < count; at += chunk) {
    const items: BenchItem[] = [];
    for (let i = at; i < Math.min(count, at + chunk); i++) {
      items.push(benchItem(`p${String(Math.floor(i / perPartition)).padStart(3, "0")}`, i % perPartition));
    }
    const start = performance.now();
    const cpu0 = process.cpuUsage();
    const result = await repo.bulkUpsert(items);
    const used = process.cpuUsage(cpu0);
    cpu += (used.user + used.system) / 1000;
    elapsed += performance.now() - start;
    if (result.written !== items.length) throw new Error(`bulkUpsert wrote ${result.written}`);
  }
  const heapBytes = heapAfterGc() - before;
  // Keep the store reachable until after the measurement.
  if ((await store.queryPage("BenchItems", { top: 1 })).items.length !== 1) throw new Error("empty store");
  return { count, heapBytes, rate: count / (elapsed / 1000), cpuRate: count / (cpu / 1000) };
}

// Run directly (not when bundled into the bench, where import.meta.url is the bundle's).
if (process.argv[1]?.endsWith("memory-load.ts")) {
  const count = Number(process.argv[2] ?? 1_000_000);
  if (gc === undefined) console.warn("run with --expose-gc for a meaningful heap number");
  const m = await measureLoad(count);
  console.log(
    `${count.toLocaleString("en")} entities: heap ${(m.heapBytes / 2 ** 20).toFixed(0)} MiB, ` +
      `${Math.round(m.heapBytes / count)} B/entity, load ${Math.round(m.rate).toLocaleString("en")}/s ` +
      `(${Math.round(m.cpuRate).toLocaleString("en")}/s of CPU time)`,
  );
}
