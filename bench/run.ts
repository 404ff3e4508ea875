/**
 * `npm run bench`: tablekit against the raw @azure/data-tables SDK and hand-written code, measured
 * side by side in one run on one Azurite (started here from node_modules) and on MemoryStore.
 * It prints ratios; it asserts nothing (correctness lives in the tests).
 */
import "reflect-metadata";
import { createDefaultHttpClient, type HttpClient } from "@azure/core-rest-pipeline";
import { odata, TableClient } from "@azure/data-tables";
import { BlobServiceClient } from "@azure/storage-blob";
import { startAzurite } from "../scripts/azurite-process.js";
import { AzureStore, localKeys, MemoryStore, TableContext } from "../src/index.js";
import { openValue, sealValue } from "../src/repository/pipeline/encryption/envelope.js";
import { valueToBytes } from "../src/repository/pipeline/encryption/value-bytes.js";
import { getEntityModel } from "../src/schema/entity-model.js";
import type { StoredEntity } from "../src/store/table-store.js";
import {
  BenchItem,
  benchItem,
  EncryptedItem,
  encryptedItem,
  handWrittenFromWire,
  handWrittenToWire,
  IndexedItem,
  indexedItem,
  LargeItem,
  RemoteIndexedItem,
  remoteItem,
  SummarizedItem,
  summarizedItem,
} from "./bench-entity.js";
import { blindIndexBench } from "./blind-index.js";
import { coldStart } from "./cold-start.js";
import {
  type BenchRow,
  compare,
  compareSamples,
  cpuSync,
  median,
  minimumRow,
  printTable,
  type Sample,
  sampleAsync,
  timeAsync,
} from "./measure.js";
import { measureLoad } from "./memory-load.js";
import { movementBench } from "./movement.js";
import { ownCpu } from "./own-cpu.js";
import { pacingRuns } from "./pacing.js";
import { parallelReads } from "./parallel-reads.js";
import { serveVsAzurite } from "./serve-vs-azurite.js";
import { stagedBulk } from "./staged-bulk.js";
import { tracingOverhead } from "./tracing.js";
import { writeCpu } from "./write-cpu.js";

const quick = process.argv.includes("--quick");
const rows: BenchRow[] = [];
const ms = (v: number) => `${v.toFixed(3)} ms`;
const us = (v: number) => `${v.toFixed(1)} µs`;

/** Records a side-by-side sample twice: its wall time and its client CPU time. */
function recordSample(
  name: string,
  ours: Sample,
  baseline: Sample,
  wallTarget: number | undefined,
  cpuTarget: number | undefined,
  perEntity = 1,
): void {
  record(name, ours.wall, baseline.wall, ms, wallTarget);
  record(
    `${name}: client CPU${perEntity === 1 ? "" : " per entity"}`,
    ours.cpu / perEntity,
    baseline.cpu / perEntity,
    us,
    cpuTarget,
  );
}

function record(
  name: string,
  ours: number,
  baseline: number,
  unit: (v: number) => string,
  target: number | undefined,
  lowerIsBetter = true,
): void {
  const ratio = ours / baseline;
  rows.push({
    name,
    ours: unit(ours),
    baseline: unit(baseline),
    ratio,
    target: target === undefined ? "-" : `${lowerIsBetter ? "≤" : "≥"} ${target}×`,
    met: target === undefined ? true : lowerIsBetter ? ratio <= target : ratio >= target,
  });
  console.log(`  ${name}: ${unit(ours)} vs ${unit(baseline)} = ${ratio.toFixed(3)}×`);
}

async function seed(db: TableContext, tenant: string, count: number): Promise<void> {
  for (let start = 0; start < count; start += 100) {
    await db.transaction((tx) => {
      for (let id = start; id < Math.min(start + 100, count); id++) tx.upsert(benchItem(tenant, id));
    });
  }
}

async function sdkVsTablekit(connectionString: string): Promise<void> {
  console.log("\n[1] tablekit vs raw @azure/data-tables on Azurite");
  const store = AzureStore.fromConnectionString(connectionString);
  const db = new TableContext({ store, tablePrefix: "bench" });
  await db.ensureTables(BenchItem);
  const repo = db.repository(BenchItem);
  const client = TableClient.fromConnectionString(connectionString, repo.table, {
    allowInsecureConnection: true,
  });
  await seed(db, "scan", quick ? 2_000 : 10_000);
  await seed(db, "point", 1_000);

  // Many short alternating rounds (median taken): the machine's drift hits both sides alike.
  const n = quick ? 100 : 200;
  const rounds = quick ? 4 : 20;
  const get = await compareSamples(
    rounds,
    () => sampleAsync(n, (i) => repo.get({ tenant: "point", id: i % 1000 })),
    () => sampleAsync(n, (i) => client.getEntity("point", `item_${String(i % 1000).padStart(8, "0")}`)),
  );
  recordSample("point get", get.a, get.b, 1.05, 1.0);

  const scanRounds = quick ? 2 : 6;
  const scanned = quick ? 2_000 : 10_000;
  const scanWith = (r: typeof repo) => () =>
    sampleAsync(1, async () => {
      let count = 0;
      for await (const item of r.find({ tenant: "scan" })) if (item.id >= 0) count++;
      if (count !== scanned) throw new Error(`scan returned ${count} rows`);
    });
  const rawScan = () =>
    sampleAsync(1, async () => {
      let count = 0;
      for await (const row of client.listEntities({
        queryOptions: { filter: odata`PartitionKey eq ${"scan"}` },
      })) {
        if (row.rowKey) count++;
      }
      if (count !== scanned) throw new Error(`scan returned ${count} rows`);
    });
  const scan = await compareSamples(scanRounds, scanWith(repo), rawScan);
  recordSample(`${quick ? "2,000" : "10,000"}-entity partition scan`, scan.a, scan.b, 0.85, 1.0, scanned);
  // The same scan with annotated payloads ({ metadata: "minimal" }): what the lighter payload saves.
  const minimalDb = new TableContext({
    store: AzureStore.fromConnectionString(connectionString, { metadata: "minimal" }),
    tablePrefix: "bench",
  });
  const minimalScan = await compareSamples(scanRounds, scanWith(minimalDb.repository(BenchItem)), rawScan);
  recordSample("  … with metadata: minimal", minimalScan.a, minimalScan.b, undefined, undefined, scanned);
  const bytes = await scanBytes(connectionString, scanned);
  record(
    "response bytes per scanned entity (nometadata / minimal)",
    bytes.none,
    bytes.minimal,
    (v) => `${v.toFixed(0)} B`,
    0.75,
  );

  console.log("\n[3] MemoryStore vs Azurite through the same repository calls");
  const memory = new TableContext({ store: new MemoryStore() });
  await memory.ensureTables(BenchItem);
  await seed(memory, "point", 1_000);
  const memRepo = memory.repository(BenchItem);
  const memGet = await timeAsync(2_000, (i) => memRepo.get({ tenant: "point", id: i % 1000 }));
  const azGet = await timeAsync(n, (i) => repo.get({ tenant: "point", id: i % 1000 }));
  record("point get: MemoryStore / Azurite", memGet, azGet, ms, undefined);
  const rangeOf = (r: typeof repo) => r.find({ tenant: "point" }).between({ id: 300 }, { id: 399 }).toArray();
  const memRange = await timeAsync(500, () => rangeOf(memRepo));
  const azRange = await timeAsync(quick ? 20 : 100, () => rangeOf(repo));
  record("100-row range: MemoryStore / Azurite", memRange, azRange, ms, undefined);
}

/** Response body bytes per entity of one repository scan, read with each payload format. */
async function scanBytes(connectionString: string, rows: number): Promise<{ none: number; minimal: number }> {
  const result = { none: 0, minimal: 0 };
  for (const metadata of ["none", "minimal"] as const) {
    const inner = createDefaultHttpClient();
    let total = 0;
    const httpClient: HttpClient = {
      async sendRequest(request) {
        const response = await inner.sendRequest(request);
        total += Buffer.byteLength(response.bodyAsText ?? "");
        return response;
      },
    };
    const db = new TableContext({
      store: AzureStore.fromConnectionString(connectionString, { metadata, httpClient }),
      tablePrefix: "bench",
    });
    const count = (await db.repository(BenchItem).find({ tenant: "scan" }).toArray()).length;
    if (count !== rows) throw new Error(`scan returned ${count} rows`);
    result[metadata] = total / rows;
  }
  return result;
}

function mapping(): void {
  console.log("\n[4] entity mapping (wire → instance → wire) vs hand-written code");
  const mapper = getEntityModel(BenchItem).mapper;
  const items = Array.from({ length: 1000 }, (_, i) => benchItem("map", i));
  const stored = items.map((e) => ({
    ...handWrittenToWire(e),
    score: e.score,
    big: e.big,
    etag: "W/\"datetime'2024-01-01T00%3A00%3A00.0000000Z'\"",
    timestamp: new Date(),
  })) as unknown as StoredEntity[];
  const iterations = quick ? 100_000 : 500_000;
  const ours: number[] = [];
  const hand: number[] = [];
  const ourRound = () =>
    cpuSync(iterations, (i) => mapper.toWire(mapper.fromWire(stored[i % 1000] as StoredEntity)));
  const handRound = () =>
    cpuSync(iterations, (i) => handWrittenToWire(handWrittenFromWire(stored[i % 1000] as never)));
  // Interleaved rounds, alternating which side goes first; the median of each side's CPU time per entity.
  for (let round = 0; round < 7; round++) {
    if (round % 2 === 0) {
      ours.push(ourRound());
      hand.push(handRound());
    } else {
      hand.push(handRound());
      ours.push(ourRound());
    }
  }
  const ns = (v: number) => `${v.toFixed(0)} ns`;
  record("mapping round trip per entity (client CPU)", median(ours), median(hand), ns, 2);
}

async function encryptionOverhead(): Promise<void> {
  console.log("\n[12] client-side encryption on MemoryStore: 2 of 10 columns encrypted vs none");
  const keys = localKeys({ k1: new Uint8Array(32).fill(7) }, "k1");
  const db = new TableContext({ store: new MemoryStore(), encryption: { keys } });
  await db.ensureTables(BenchItem, EncryptedItem);
  const plain = db.repository(BenchItem);
  const sealed = db.repository(EncryptedItem);
  const n = quick ? 2_000 : 10_000;
  const rounds = quick ? 5 : 9;
  // A round trip: write the entity, then read it back (a fresh data key per write, so each read unwraps
  // one unless the context's cache still holds it: reads of other rows are measured by the scan).
  // Both sides run the same repository path on the same store; wall and CPU time, median of the rounds.
  const trip = await compareSamples(
    rounds,
    () =>
      sampleAsync(n, async (i) => {
        await sealed.upsert(encryptedItem("t", i % 1000));
        await sealed.get({ tenant: "t", id: i % 1000 });
      }),
    () =>
      sampleAsync(n, async (i) => {
        await plain.upsert(benchItem("t", i % 1000));
        await plain.get({ tenant: "t", id: i % 1000 });
      }),
  );
  recordSample("write + point read, 2 encrypted columns", trip.a, trip.b, 1.3, 1.3);
  // What the contract itself costs per round trip: one key wrap (a fresh data key per write) and one
  // AES-256-GCM operation per encrypted value each way, each a node:crypto cipher context.
  const parts = encryptionParts(keys, rounds, n);
  const floor = parts.wrap + 2 * parts.seal + 2 * parts.open;
  console.log(
    `  per part (µs, median): key wrap ${parts.wrap.toFixed(1)}, seal one value ${parts.seal.toFixed(1)}, open one value ${parts.open.toFixed(1)}; ` +
      `contract's crypto per round trip ${floor.toFixed(1)} µs vs the plain round trip's ${trip.b.cpu.toFixed(1)} µs of CPU`,
  );
  record(
    "crypto alone (wrap + 2 seals + 2 opens) + plain round trip: the floor",
    trip.b.cpu + floor,
    trip.b.cpu,
    us,
    undefined,
  );
  const cold = new TableContext({ store: db.store, encryption: { keys } });
  const scan = await compare(
    5,
    () => timeAsync(5, () => cold.repository(EncryptedItem).find({ tenant: "t" }).toArray()),
    () => timeAsync(5, () => cold.repository(BenchItem).find({ tenant: "t" }).toArray()),
  );
  record("1,000-row partition read, 2 encrypted columns", scan.a, scan.b, ms, undefined);
}

/** Microseconds of CPU (median of rounds) of each cryptographic step of a round trip, alone. */
function encryptionParts(
  keys: ReturnType<typeof localKeys>,
  rounds: number,
  n: number,
): { wrap: number; seal: number; open: number } {
  const dataKey = new Uint8Array(32).fill(3);
  const wrapped = keys.wrapKey("k1", dataKey) as Uint8Array;
  const key = { keyId: "k1", wrapped, dataKey };
  const at = { table: "BenchEncrypted", partitionKey: "t", rowKey: "item_00000005", property: "note" };
  const plaintext = valueToBytes(benchItem("t", 5).note) as Uint8Array;
  const envelope = sealValue(key, at, plaintext);
  const cpuPer = (fn: () => unknown): number => {
    const samples: number[] = [];
    for (let round = 0; round <= rounds; round++) {
      const before = process.cpuUsage();
      for (let i = 0; i < n; i++) fn();
      const used = process.cpuUsage(before);
      if (round > 0) samples.push((used.user + used.system) / n);
    }
    return median(samples);
  };
  return {
    wrap: cpuPer(() => keys.wrapKey("k1", dataKey)),
    seal: cpuPer(() => sealValue(key, at, plaintext)),
    open: cpuPer(() => openValue(envelope, dataKey, at)),
  };
}

async function memoryScaling(): Promise<void> {
  console.log("\n[5] 100-row range query on MemoryStore: 10k vs 1M entities");
  const sizes = quick ? [10_000, 100_000] : [10_000, 1_000_000];
  const costs: number[] = [];
  for (const size of sizes) {
    const db = new TableContext({ store: new MemoryStore() });
    await db.ensureTables(BenchItem);
    const repo = db.repository(BenchItem);
    // 100 partitions, rows spread evenly, so the range sits inside a large table.
    const perPartition = size / 100;
    for (let p = 0; p < 100; p++) {
      for (let start = 0; start < perPartition; start += 100) {
        await db.transaction((tx) => {
          for (let id = start; id < start + 100; id++) tx.upsert(benchItem(`p${p}`, id));
        });
      }
    }
    const query = repo.find({ tenant: "p50" }).between({ id: 0 }, { id: 99 });
    if ((await query.toArray()).length !== 100) throw new Error("the range must hold 100 rows at every size");
    await query.toArray();
    costs.push(await timeAsync(500, () => query.toArray()));
  }
  record(
    `100-row range at ${sizes[1]?.toLocaleString("en")} / ${sizes[0]?.toLocaleString("en")} entities`,
    costs[1] as number,
    costs[0] as number,
    ms,
    2,
  );
}

async function heapWhileIterating(): Promise<void> {
  console.log("\n[6] heap growth while iterating 100,000 entities with for await (MemoryStore)");
  const store = new MemoryStore();
  const db = new TableContext({ store });
  await db.ensureTables(BenchItem);
  for (let p = 0; p < 10; p++) await seed(db, `h${p}`, 10_000);
  const repo = db.repository(BenchItem);
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const before = process.memoryUsage().heapUsed;
  let peak = before;
  let count = 0;
  for await (const item of repo.scan()) {
    if (item.id >= 0) count++;
    if (count % 1000 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
  }
  const growthMb = (peak - before) / (1024 * 1024);
  rows.push({
    name: `heap growth over ${count.toLocaleString("en")} entities`,
    ours: `${growthMb.toFixed(1)} MB`,
    baseline: "64 MB budget",
    ratio: growthMb / 64,
    target: "< 64 MB",
    met: growthMb < 64,
  });
  console.log(
    `  peak heap growth ${growthMb.toFixed(1)} MB${gc ? "" : " (run with --expose-gc for a tighter number)"}`,
  );
}

async function memoryAndLoad(): Promise<void> {
  const count = quick ? 100_000 : 1_000_000;
  console.log(
    `\n[6b] MemoryStore heap and bulk load rate, ${count.toLocaleString("en")} entities of 10 properties`,
  );
  const gc = (globalThis as { gc?: () => void }).gc;
  const m = await measureLoad(count);
  const mib = m.heapBytes / 2 ** 20;
  // The target is 600 MiB for 1,000,000 entities; a quick run checks the same bytes per entity.
  const budget = (600 * count) / 1_000_000;
  rows.push({
    name: `MemoryStore heap, ${count.toLocaleString("en")} entities (${Math.round(m.heapBytes / count)} B each)`,
    ours: `${mib.toFixed(0)} MiB`,
    baseline: `${budget} MiB budget`,
    ratio: mib / budget,
    target: "≤ 1×",
    met: mib <= budget,
  });
  record(
    `MemoryStore bulkUpsert load rate / 100,000 per s`,
    m.rate,
    100_000,
    (v) => `${Math.round(v)}/s`,
    1,
    false,
  );
  console.log(
    `  heap ${mib.toFixed(0)} MiB${gc ? "" : " (run with --expose-gc for a tighter number)"}, ` +
      `load ${Math.round(m.rate)}/s (${Math.round(m.cpuRate)}/s of CPU time)`,
  );
}

async function bulkVsSequential(connectionString: string): Promise<void> {
  console.log("\n[7] bulkUpsert vs sequential single upserts (10,000 entities over 100 partitions)");
  let requests = 0;
  // Each side writes into its own fresh table, so both do the same work (Azurite slows as a table grows).
  const contextFor = (tablePrefix: string) =>
    new TableContext({
      store: AzureStore.fromConnectionString(connectionString),
      tablePrefix,
      onEvent: (event) => {
        if (event.type === "request") requests++;
      },
    });
  const bulkDb = contextFor("bulk");
  const sequentialDb = contextFor("seq");
  await bulkDb.ensureTables(BenchItem);
  await sequentialDb.ensureTables(BenchItem);
  const total = quick ? 2_000 : 10_000;
  const items = Array.from({ length: total }, (_, i) => benchItem(`p${i % 100}`, Math.floor(i / 100)));
  requests = 0;
  let start = performance.now();
  const result = await bulkDb.repository(BenchItem).bulkUpsert(items);
  const bulkMs = performance.now() - start;
  const bulkRequests = requests;
  const sequential = sequentialDb.repository(BenchItem);
  start = performance.now();
  for (const item of items) await sequential.upsert(item);
  const sequentialMs = performance.now() - start;
  const minimum = 100 * Math.ceil(total / 100 / 100);
  record(
    `bulkUpsert speed-up over sequential (${total.toLocaleString("en")})`,
    sequentialMs,
    bulkMs,
    ms,
    15,
    false,
  );
  rows.push(minimumRow("bulkUpsert requests / minimum EGTs", bulkRequests, "requests", minimum, 1.1));
  console.log(
    `  ${result.written} written in ${result.batches} batches, ${bulkRequests} requests (minimum ${minimum})`,
  );
}

async function indexCosts(connectionString: string): Promise<void> {
  console.log("\n[8] secondary indexes: requests per write, and lookup by index vs point query");
  let requests = 0;
  const db = new TableContext({
    store: AzureStore.fromConnectionString(connectionString),
    tablePrefix: "idx",
    onEvent: (event) => {
      if (event.type === "request") requests++;
    },
  });
  await db.ensureTables(BenchItem, IndexedItem, RemoteIndexedItem);
  const kinds = [
    ["no index", db.repository(BenchItem), (i: number) => benchItem("w", i)],
    ["same-partition copy", db.repository(IndexedItem), (i: number) => indexedItem("w", i)],
    ["other-table copy", db.repository(RemoteIndexedItem), (i: number) => remoteItem("w", i)],
  ] as const;
  for (const [label, repo, make] of kinds) {
    const n = 50;
    // A fresh entity each time (new), then the same instances again (known: tracked from the first write).
    requests = 0;
    const written = [];
    for (let i = 0; i < n; i++)
      written.push(await (repo as { upsert(e: object): Promise<object> }).upsert(make(i)));
    const fresh = requests / n;
    requests = 0;
    for (const e of written) await (repo as { upsert(e: object): Promise<object> }).upsert(e);
    const again = requests / n;
    rows.push({
      name: `requests per upsert, ${label}`,
      ours: `${fresh.toFixed(2)} new`,
      baseline: `${again.toFixed(2)} known`,
      ratio: fresh,
      target: label === "same-partition copy" ? "= 1" : "-",
      met: label !== "same-partition copy" || (fresh === 1 && again === 1),
    });
    console.log(
      `  ${label}: ${fresh.toFixed(2)} requests per upsert of a new entity, ${again.toFixed(2)} for a known one`,
    );
  }
  const indexed = db.repository(IndexedItem);
  for (let i = 0; i < 200; i++) await indexed.upsert(indexedItem("look", i));
  const n = quick ? 100 : 400;
  const lookup = await compare(
    quick ? 4 : 8,
    () => timeAsync(n, (i) => indexed.index("byName").get({ tenant: "look", name: `item ${i % 200}` })),
    () => timeAsync(n, (i) => indexed.get({ tenant: "look", id: i % 200 })),
  );
  record("lookup by same-partition index / point query", lookup.a, lookup.b, ms, 1.1);
}

async function summaryCosts(connectionString: string): Promise<void> {
  console.log("\n[10] summaries: requests per insert (summary row known or cold) and insert latency");
  let requests = 0;
  const db = new TableContext({
    store: AzureStore.fromConnectionString(connectionString),
    tablePrefix: "sum",
    onEvent: (event) => {
      if (event.type === "request") requests++;
    },
  });
  await db.ensureTables(BenchItem, SummarizedItem);
  const summarized = db.repository(SummarizedItem);
  const n = quick ? 20 : 50;
  // Cold: each insert goes to a new partition, whose summary row nobody has read yet.
  requests = 0;
  for (let i = 0; i < n; i++) await summarized.insert(summarizedItem(`cold${i}`, i));
  const cold = requests / n;
  requests = 0;
  for (let i = 0; i < n; i++) await summarized.insert(summarizedItem("warm", i));
  // The first insert into "warm" is cold (2 requests); the rest find its summary row known.
  const warm = (requests - 2) / (n - 1);
  rows.push({
    name: "requests per insert with a summary",
    ours: `${warm.toFixed(2)} known`,
    baseline: `${cold.toFixed(2)} cold`,
    ratio: warm,
    target: "= 1 (2 cold)",
    met: warm === 1 && cold === 2,
  });
  console.log(`  ${warm.toFixed(2)} requests per insert with the summary row known, ${cold.toFixed(2)} cold`);
  const plain = db.repository(BenchItem);
  const m = quick ? 100 : 400;
  // Every round inserts new keys (one partition per round and kind; its summary row known after the first).
  let rounds = 0;
  const latency = await compare(
    quick ? 4 : 8,
    () => {
      const round = rounds++;
      return timeAsync(m, (i) => summarized.insert(summarizedItem(`lat${round}`, i)));
    },
    () => {
      const round = rounds++;
      return timeAsync(m, (i) => plain.insert(benchItem(`lat${round}`, i)));
    },
  );
  record("insert with a summary / plain insert", latency.a, latency.b, ms, undefined);
}

/**
 * A 5 MiB large value: `get` (a point read, then one GET of the blob) against what a hand-written
 * client does for the same data: a raw point read plus `BlobClient.downloadToBuffer` of the blob.
 */
async function largeValues(connectionString: string): Promise<void> {
  console.log("\n[11] large values (5 MiB in Blob Storage) on Azurite");
  const store = AzureStore.fromConnectionString(connectionString);
  const db = new TableContext({ store, tablePrefix: "bench" });
  await db.ensureTables(LargeItem);
  const repo = db.repository(LargeItem);
  const content = new Uint8Array(5 * 1024 * 1024).map((_, i) => (i * 31) % 251);
  await repo.upsert(Object.assign(new LargeItem(), { tenant: "large", id: "five", content }));
  const client = TableClient.fromConnectionString(connectionString, repo.table, {
    allowInsecureConnection: true,
  });
  const row = await client.getEntity("large", "five");
  const reference = String(row.content);
  const blobName = reference.slice(reference.indexOf(":", "tkblob1:".length) + 1);
  const blob = BlobServiceClient.fromConnectionString(connectionString)
    .getContainerClient(`tablekit-${repo.table.toLowerCase()}`)
    .getBlobClient(blobName);
  const n = quick ? 5 : 10;
  const rounds = quick ? 4 : 12;
  const get = await compare(
    rounds,
    () => timeAsync(n, () => repo.get({ tenant: "large", id: "five" })),
    () =>
      timeAsync(n, async () => {
        await client.getEntity("large", "five");
        return blob.downloadToBuffer();
      }),
  );
  record("5 MiB large get / raw point read + downloadToBuffer", get.a, get.b, ms, 1.2);
  // The fastest hand-written read: one GET of the blob, its stream gathered (what tablekit does).
  const single = await compare(
    rounds,
    () => timeAsync(n, () => repo.get({ tenant: "large", id: "five" })),
    () =>
      timeAsync(n, async () => {
        await client.getEntity("large", "five");
        const chunks: Buffer[] = [];
        for await (const chunk of (await blob.download(0)).readableStreamBody ?? [])
          chunks.push(chunk as Buffer);
        return Buffer.concat(chunks);
      }),
  );
  record("5 MiB large get / raw point read + one blob GET", single.a, single.b, ms, undefined);
}

/**
 * `npm run bench -- --only encryption,mapping`: just those sections (names below), Azurite started only
 * when one of them needs it. Without `--only`, every section runs.
 */
const azureSections: Record<string, (connectionString: string) => Promise<void>> = {
  sdk: sdkVsTablekit,
  "write-cpu": (c) => writeCpu(c, rows, quick),
  bulk: bulkVsSequential,
  "staged-bulk": (c) => stagedBulk(c, record, rows, quick),
  indexes: indexCosts,
  "parallel-reads": (c) => parallelReads(c, record, quick),
  pacing: async (c) => {
    rows.push(...(await pacingRuns(c, quick)));
  },
  summaries: summaryCosts,
  large: largeValues,
  serve: (c) => serveVsAzurite(c, record, quick),
  tracing: (c) => tracingOverhead(c, record, quick),
  // `--movement-heap-rows N` adds the heap of an N-row export/import (the 1,000,000).
  movement: (c) => movementBench(c, record, quick, movementHeapRows()),
  "blind-index": (c) => blindIndexBench(c, record, quick),
};

function movementHeapRows(): number | undefined {
  const at = process.argv.indexOf("--movement-heap-rows");
  return at < 0 ? undefined : Number(process.argv[at + 1]);
}
const memorySections: Record<string, () => Promise<void>> = {
  "own-cpu": () => ownCpu(rows, quick),
  mapping: async () => mapping(),
  encryption: encryptionOverhead,
  "memory-scaling": memoryScaling,
  heap: heapWhileIterating,
  "memory-load": memoryAndLoad,
  "cold-start": () => coldStart(record, quick),
  // Loaded only when its section runs (last): once a change-fed class is defined, every request runs in
  // an AsyncLocalStorage context (the feed's resend detection), which turns Node 20's promise hooks on
  // for the whole process, and the sections before it would measure that instead.
  "change-feed": async () => (await import("./change-feed.js")).changeFeedBench(record, rows, quick),
};

function selectedSections(): Set<string> | undefined {
  const at = process.argv.indexOf("--only");
  if (at < 0) return undefined;
  const names = (process.argv[at + 1] ?? "").split(",").filter((name) => name !== "");
  const known = [...Object.keys(azureSections), ...Object.keys(memorySections)];
  const unknown = names.filter((name) => !known.includes(name));
  if (names.length === 0 || unknown.length > 0) {
    throw new Error(`--only takes section names separated by commas, among: ${known.join(", ")}`);
  }
  return new Set(names);
}

async function main(): Promise<void> {
  if (process.argv.includes("--serve")) {
    // `npm run bench -- --serve [--quick] [--no-azurite]`: only tablekit serve against the stub (and Azurite).
    const withAzurite = !process.argv.includes("--no-azurite");
    const azurite = withAzurite ? await startAzurite() : undefined;
    try {
      await serveVsAzurite(azurite?.connectionString, record, quick);
    } finally {
      await azurite?.stop();
    }
    printTable(rows);
    return;
  }
  const pacingAlone = process.argv.includes("--pacing");
  // `npm run bench -- --pacing`: the pacing runs alone (they take a minute or two of wall time).
  const only = pacingAlone ? new Set(["pacing"]) : selectedSections();
  const picked = (name: string) => only === undefined || only.has(name);
  const azure = Object.entries(azureSections).filter(([name]) => picked(name));
  if (azure.length > 0) {
    const azurite = await startAzurite();
    try {
      for (const [, run] of azure) await run(azurite.connectionString);
    } finally {
      await azurite.stop();
    }
  }
  for (const [name, run] of Object.entries(memorySections)) if (picked(name)) await run();
  console.log("\nResults (ratio = tablekit / baseline; lower is better unless the target says ≥)\n");
  printTable(rows);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
