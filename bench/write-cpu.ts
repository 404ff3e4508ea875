/**
 * Client CPU of a single upsert and of a 100-operation transaction: tablekit against the raw
 * @azure/data-tables SDK on Azurite (issue 30: each ≤ 1.05×). Three sides run in interleaved rounds
 * (tablekit, an SDK client, and a second SDK client as the A/A control), the order rotating through
 * every permutation so no side always runs first. Each round gives one ratio per side against the
 * first SDK client; the rows are the medians of those ratios, and the A/A row shows how far two
 * identical clients drift apart on this machine: a ratio inside that spread is noise.
 */
import { TableClient, type TableTransaction } from "@azure/data-tables";
import { AzureStore, TableContext } from "../src/index.js";
import { BenchItem, benchItem, handWrittenToWire } from "./bench-entity.js";
import { type BenchRow, median, type Sample, sampleAsync } from "./measure.js";

/** Every order of the three sides: round r runs ORDERS[r % 6]. */
const ORDERS = [
  [0, 1, 2],
  [1, 2, 0],
  [2, 0, 1],
  [0, 2, 1],
  [2, 1, 0],
  [1, 0, 2],
] as const;

/** Per-round samples of the three sides: tablekit, the SDK, the SDK again (the A/A control). */
interface Rounds {
  ours: Sample[];
  sdk: Sample[];
  control: Sample[];
}

async function interleave(
  rounds: number,
  ours: () => Promise<Sample>,
  sdk: () => Promise<Sample>,
  control: () => Promise<Sample>,
): Promise<Rounds> {
  const sides = [ours, sdk, control];
  const samples: Sample[][] = [[], [], []];
  // Two unrecorded rounds first: JIT warm-up and connection set-up would otherwise count.
  for (let warm = 0; warm < 2; warm++) for (const side of sides) await side();
  for (let round = 0; round < rounds; round++) {
    for (const side of ORDERS[round % ORDERS.length] as readonly number[]) {
      samples[side]?.push(await (sides[side] as () => Promise<Sample>)());
    }
  }
  return { ours: samples[0] ?? [], sdk: samples[1] ?? [], control: samples[2] ?? [] };
}

/** The value below which a `fraction` of `values` lie (nearest rank). */
function quantile(values: number[], fraction: number): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] as number;
}

/** Per-round ratios of `side` to the SDK, for one measure (CPU or wall). */
function ratios(side: Sample[], sdk: Sample[], of: keyof Sample): number[] {
  return side.map((s, i) => s[of] / (sdk[i] as Sample)[of]);
}

const spread = (values: number[]) =>
  `${quantile(values, 0.25).toFixed(3)}–${quantile(values, 0.75).toFixed(3)}×`;

/**
 * Pushes the rows of one measured write: client CPU tablekit / SDK (the target), its A/A control,
 * and wall time beside them. The ratio columns are medians of per-round ratios; the µs columns are
 * the medians of each side's rounds.
 */
function report(rows: BenchRow[], name: string, measured: Rounds, cpuTarget: number): void {
  const us = (samples: Sample[]) => `${median(samples.map((s) => s.cpu)).toFixed(1)} µs`;
  const cpu = ratios(measured.ours, measured.sdk, "cpu");
  const control = ratios(measured.control, measured.sdk, "cpu");
  const wall = ratios(measured.ours, measured.sdk, "wall");
  const cpuRatio = median(cpu);
  const controlRatio = median(control);
  rows.push(
    {
      name: `${name}: client CPU, tablekit / SDK (median of ${cpu.length} interleaved rounds)`,
      ours: us(measured.ours),
      baseline: us(measured.sdk),
      ratio: cpuRatio,
      target: `≤ ${cpuTarget}×`,
      met: cpuRatio <= cpuTarget,
    },
    {
      name: `  … A/A control: SDK / SDK (quartiles of rounds: ${spread(control)}; tablekit's: ${spread(cpu)})`,
      ours: us(measured.control),
      baseline: us(measured.sdk),
      ratio: controlRatio,
      target: "-",
      met: true,
    },
    {
      name: `  … wall time, tablekit / SDK`,
      ours: `${median(measured.ours.map((s) => s.wall)).toFixed(3)} ms`,
      baseline: `${median(measured.sdk.map((s) => s.wall)).toFixed(3)} ms`,
      ratio: median(wall),
      target: "-",
      met: true,
    },
  );
  console.log(
    `  ${name}: client CPU ${cpuRatio.toFixed(3)}× (quartiles ${spread(cpu)}), A/A ${controlRatio.toFixed(3)}× (quartiles ${spread(control)})`,
  );
}

export async function writeCpu(connectionString: string, rows: BenchRow[], quick: boolean): Promise<void> {
  console.log("\n[2] client CPU of writes: tablekit vs raw @azure/data-tables (A/A control beside it)");
  const db = new TableContext({
    store: AzureStore.fromConnectionString(connectionString),
    tablePrefix: "cpu",
  });
  await db.ensureTables(BenchItem);
  const repo = db.repository(BenchItem);
  const clientFor = () =>
    TableClient.fromConnectionString(connectionString, repo.table, { allowInsecureConnection: true });
  const sdk = clientFor();
  const control = clientFor();
  // 60 rounds: on a 2-core VM the A/A quartiles span ±5% per round; the median of 60 moves far less than of 30.
  const rounds = quick ? 12 : 60;

  const n = quick ? 100 : 200;
  const rawUpsert = (client: TableClient) => () =>
    sampleAsync(n, (i) => client.upsertEntity(handWrittenToWire(benchItem("upsert", i)) as never, "Replace"));
  const upserts = await interleave(
    rounds,
    () => sampleAsync(n, (i) => repo.upsert(benchItem("upsert", i))),
    rawUpsert(sdk),
    rawUpsert(control),
  );
  report(rows, "single upsert", upserts, 1.05);

  const transactions = quick ? 5 : 20;
  let batchId = 0;
  const rawTransaction = (client: TableClient) => () =>
    sampleAsync(transactions, async () => {
      const id = batchId++;
      const actions: TableTransaction["actions"] = [];
      for (let i = 0; i < 100; i++)
        actions.push(["upsert", handWrittenToWire(benchItem(`tx${id % 50}`, i)) as never, "Replace"]);
      await client.submitTransaction(actions);
    });
  const batches = await interleave(
    rounds,
    () =>
      sampleAsync(transactions, async () => {
        const id = batchId++;
        await db.transaction((t) => {
          for (let i = 0; i < 100; i++) t.upsert(benchItem(`tx${id % 50}`, i));
        });
      }),
    rawTransaction(sdk),
    rawTransaction(control),
  );
  report(rows, "100-op transaction", batches, 1.05);
}
