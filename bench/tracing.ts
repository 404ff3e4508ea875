/**
 * What OpenTelemetry costs when `@opentelemetry/api` is installed but no provider is registered (the
 * common case of a library inside an app that does not trace): the same upsert + point read + 10-row
 * find with tracing on (the default) and with `tracing: false`, in alternating rounds, client CPU per
 * operation. On MemoryStore the difference is the per-call cost alone, measured precisely; on
 * Azurite the same difference is lost in the noise of a request's own CPU (±10 % between two
 * identical contexts on a loaded machine), so the target compares the MemoryStore difference with an
 * Azurite operation's client CPU; the direct Azurite ratio is printed too.
 */
import "reflect-metadata";
import { AzureStore, MemoryStore, TableContext } from "../src/index.js";
import { BenchItem, benchItem } from "./bench-entity.js";
import { compareSamples, type Sample, sampleAsync } from "./measure.js";
import type { Recorder } from "./parallel-reads.js";

const us = (v: number) => `${v.toFixed(2)} µs`;
/** Operations per round trip: an upsert, a point read and a partition query. */
const OPS = 3;

async function roundTrips(db: TableContext, n: number): Promise<Sample> {
  const items = db.repository(BenchItem);
  return sampleAsync(n, async (i) => {
    await items.upsert(benchItem("t", i % 10));
    await items.get({ tenant: "t", id: i % 10 });
    await items.find({ tenant: "t" }).toArray();
  });
}

/** Median client CPU per operation (µs), traced and untraced, after a warm-up of each. */
async function perOperation(
  store: () => AzureStore | MemoryStore,
  prefix: string,
  n: number,
  rounds: number,
) {
  const traced = new TableContext({ store: store(), tablePrefix: prefix });
  const untraced = new TableContext({ store: store(), tablePrefix: prefix, tracing: false });
  await traced.ensureTables(BenchItem);
  for (let i = 0; i < 10; i++) await traced.repository(BenchItem).upsert(benchItem("t", i));
  await roundTrips(traced, n);
  await roundTrips(untraced, n);
  const { a, b } = await compareSamples(
    rounds,
    () => roundTrips(traced, n),
    () => roundTrips(untraced, n),
  );
  return { traced: a.cpu / OPS, untraced: b.cpu / OPS };
}

export async function tracingOverhead(
  connectionString: string,
  record: Recorder,
  quick: boolean,
): Promise<void> {
  console.log("\n[tracing] OpenTelemetry installed, no provider registered: tracing on vs tracing: false");
  const memory = new MemoryStore();
  const inProcess = await perOperation(() => memory, "BenchOtelMem", quick ? 5_000 : 20_000, quick ? 7 : 15);
  const azure = await perOperation(
    () => AzureStore.fromConnectionString(connectionString),
    "BenchOtel",
    quick ? 100 : 300,
    quick ? 5 : 9,
  );
  const added = inProcess.traced - inProcess.untraced;
  console.log(
    `  added per operation: ${(added * 1000).toFixed(0)} ns (MemoryStore); an Azurite operation's client CPU: ${azure.untraced.toFixed(0)} µs`,
  );
  record(
    "tracing on, no provider (MemoryStore): client CPU per operation",
    inProcess.traced,
    inProcess.untraced,
    us,
    undefined,
  );
  record(
    "tracing on, no provider: added CPU / an Azurite operation's client CPU",
    azure.untraced + added,
    azure.untraced,
    us,
    1.01,
  );
  record(
    "tracing on, no provider (Azurite, direct, noisy): client CPU per operation",
    azure.traced,
    azure.untraced,
    us,
    undefined,
  );
}
