/**
 * The change feed (issue 31): what it adds to a write (requests, wall time and client CPU per upsert,
 * with the feed and without, on MemoryStore: the client's own cost) and how fast `read` pages through
 * a feed from `tablekit serve` (in process, over HTTP), for a feed over 1, 4 and 16 partitions, and
 * a consumer group's end-to-end lag (write committed → handler called) under 1,000 writes/s on serve.
 */
import "reflect-metadata";
import {
  AzureStore,
  Column,
  Entity,
  MemoryStore,
  startTableServer,
  TableContext,
  type TableStore,
} from "../src/index.js";
import { type BenchRow, compareSamples, sampleAsync } from "./measure.js";
import type { Recorder } from "./parallel-reads.js";

@Entity({ table: "BenchFedOrders", partitionKey: "{customer}", rowKey: "o_{id:8}", changeFeed: true })
class FedOrder {
  @Column({ type: "String" }) customer!: string;
  @Column({ type: "Int32" }) id!: number;
  @Column({ type: "String" }) status!: string;
  @Column({ type: "Double" }) amount!: number;
}

@Entity({ table: "BenchPlainOrders", partitionKey: "{customer}", rowKey: "o_{id:8}" })
class PlainOrder {
  @Column({ type: "String" }) customer!: string;
  @Column({ type: "Int32" }) id!: number;
  @Column({ type: "String" }) status!: string;
  @Column({ type: "Double" }) amount!: number;
}

/** The issue's target for `read` from serve over a few partitions. */
const READ_TARGET_PER_S = 20_000;
const ms = (v: number) => `${v.toFixed(3)} ms`;
const us = (v: number) => `${v.toFixed(1)} µs`;
const values = (i: number, customers: number) => ({
  customer: `c${i % customers}`,
  id: i,
  status: i % 2 === 0 ? "open" : "paid",
  amount: i * 1.25,
});

const REQUESTS = new Set([
  "getEntity",
  "queryPage",
  "insert",
  "upsert",
  "update",
  "delete",
  "submitTransaction",
]);

/** The store with a count of its table requests. */
function counted(store: TableStore): { store: TableStore; requests: () => number } {
  let requests = 0;
  const proxy = new Proxy(store, {
    get(target, property) {
      // The store's own getters and methods run on it (its #private fields are not on the proxy).
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      const method = value as (...a: unknown[]) => unknown;
      return (...args: unknown[]) => {
        if (REQUESTS.has(String(property))) requests++;
        return method.apply(target, args);
      };
    },
  });
  return { store: proxy, requests: () => requests };
}

/** Reads the whole feed page by page (pages of 1,000); the number of changes read. */
async function readAll(client: TableContext): Promise<number> {
  let read = 0;
  let from: string | undefined;
  for (;;) {
    const page = await client
      .changes(FedOrder)
      .read({ ...(from === undefined ? {} : { from }), limit: 1000 });
    if (page.changes.length === 0) return read;
    read += page.changes.length;
    from = page.next;
  }
}

export async function changeFeedBench(record: Recorder, rows: BenchRow[], quick: boolean): Promise<void> {
  // Write cost, on MemoryStore: what the client does (the query and the larger transaction included).
  const { store, requests } = counted(new MemoryStore());
  const db = new TableContext({ store, tablePrefix: "cf" });
  await db.ensureTables(FedOrder, PlainOrder);
  const fed = db.repository(FedOrder);
  const plain = db.repository(PlainOrder);
  const n = quick ? 500 : 2_000;
  const rounds = quick ? 3 : 5;
  // The partition's first change-fed write from a process also lists it in the directory: measure the next.
  await fed.upsert(Object.assign(new FedOrder(), values(0, 8)));
  let before = requests();
  await plain.upsert(Object.assign(new PlainOrder(), values(0, 8)));
  const plainRequests = requests() - before;
  before = requests();
  await fed.upsert(Object.assign(new FedOrder(), values(0, 8)));
  const fedRequests = requests() - before;
  record(
    "change feed: requests per upsert (partition listed), with / without",
    fedRequests,
    plainRequests,
    String,
    undefined,
  );
  const writes = await compareSamples(
    rounds,
    () => sampleAsync(n, (i) => fed.upsert(Object.assign(new FedOrder(), values(i, 8)))),
    () => sampleAsync(n, (i) => plain.upsert(Object.assign(new PlainOrder(), values(i, 8)))),
  );
  record(
    "change feed: upsert on MemoryStore, with / without the feed",
    writes.a.wall,
    writes.b.wall,
    ms,
    undefined,
  );
  record("change feed: the same, client CPU", writes.a.cpu, writes.b.cpu, us, undefined);

  // Read throughput from serve: a feed of `total` changes over 1, 4 and 16 partitions.
  const total = quick ? 5_000 : 20_000;
  for (const partitions of [1, 4, 16]) {
    const served = new MemoryStore();
    const server = await startTableServer({ port: 0, store: served });
    try {
      const client = new TableContext({
        store: AzureStore.fromConnectionString(server.connectionString, { allowInsecureConnection: true }),
        tablePrefix: `cf${partitions}`,
      });
      await client.ensureTables(FedOrder);
      await client
        .repository(FedOrder)
        .bulkUpsert(
          Array.from({ length: total }, (_, i) => Object.assign(new FedOrder(), values(i, partitions))),
        );
      // A first pass warms the JIT (client and in-process server); the second is measured.
      await readAll(client);
      const started = performance.now();
      const read = await readAll(client);
      const perSecond = read / ((performance.now() - started) / 1000);
      rows.push({
        name: `change feed: read ${read.toLocaleString("en")} changes from serve, ${partitions} partition(s)`,
        ours: `${Math.round(perSecond).toLocaleString("en")} changes/s`,
        baseline: `${READ_TARGET_PER_S.toLocaleString("en")} changes/s`,
        ratio: perSecond / READ_TARGET_PER_S,
        target: "≥ 1×",
        met: perSecond >= READ_TARGET_PER_S,
      });
    } finally {
      await server.close();
    }
  }

  await consumerLag(rows, quick);
}

/** Writes per second of the lag benchmark, and the partitions they are spread over. */
const LAG_RATE = 1_000;
const LAG_PARTITIONS = 128;

/**
 * A consumer group's end-to-end lag on serve: a writer upserts at `LAG_RATE` a second (each write
 * started on schedule, each partition's after its previous one) while one consumer (polling every 100 ms) hands
 * each change to its handler; the lag of a change is the handler's time minus the change's `at`.
 */
async function consumerLag(rows: BenchRow[], quick: boolean): Promise<void> {
  const server = await startTableServer({ port: 0, store: new MemoryStore() });
  try {
    const connect = () =>
      new TableContext({
        store: AzureStore.fromConnectionString(server.connectionString, { allowInsecureConnection: true }),
        tablePrefix: "cflag",
      });
    const writer = connect();
    await writer.ensureTables(FedOrder);
    const orders = writer.repository(FedOrder);
    const total = LAG_RATE * (quick ? 3 : 10);
    const lags: number[] = [];
    const seen = new Set<string>();
    let everything: () => void = () => undefined;
    const delivered = new Promise<void>((resolve) => {
      everything = resolve;
    });
    const consumer = connect()
      .changes(FedOrder)
      .consume({
        group: "lag",
        batchSize: 1000,
        pollIntervalMs: 100,
        handler: (changes) => {
          const now = Date.now();
          for (const change of changes) {
            const key = `${change.key.partitionKey}/${change.key.rowKey}@${change.version}`;
            if (seen.has(key)) continue;
            seen.add(key);
            lags.push(now - change.at.getTime());
          }
          if (seen.size >= total) everything();
        },
      });
    const started = performance.now();
    // One lane per partition, each awaiting its previous write (as an application writing one
    // partition in order does; concurrent writers of one partition would race for its head).
    const lanes: Promise<unknown>[] = Array.from({ length: LAG_PARTITIONS }, () => Promise.resolve());
    for (let i = 0; i < total; i++) {
      const wait = started + (i * 1000) / LAG_RATE - performance.now();
      if (wait >= 1) await new Promise((resolve) => setTimeout(resolve, wait));
      const lane = i % LAG_PARTITIONS;
      lanes[lane] = (lanes[lane] as Promise<unknown>).then(() =>
        orders.upsert(Object.assign(new FedOrder(), values(i, LAG_PARTITIONS))),
      );
    }
    await Promise.all(lanes);
    const writeRate = total / ((performance.now() - started) / 1000);
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      delivered.then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), 60_000);
      }),
    ]);
    clearTimeout(timer);
    await consumer.stop();
    lags.sort((a, b) => a - b);
    const at = (q: number) => lags[Math.min(lags.length - 1, Math.floor(q * lags.length))] ?? Number.NaN;
    rows.push({
      name: `change feed: consumer lag at ${Math.round(writeRate).toLocaleString("en")} writes/s on serve (p50 / p99 / max)${finished ? "" : ` (only ${seen.size} of ${total} delivered in 60 s)`}`,
      ours: `${at(0.5)} / ${at(0.99)} / ${lags.at(-1) ?? Number.NaN} ms`,
      baseline: "-",
      ratio: Number.NaN,
      target: "-",
      met: finished,
    });
  } finally {
    await server.close();
  }
}
