import { performance } from "node:perf_hooks";

/** Runs `fn` `iterations` times and returns the mean milliseconds per call. */
export async function timeAsync(iterations: number, fn: (i: number) => Promise<unknown>): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < iterations; i++) await fn(i);
  return (performance.now() - start) / iterations;
}

/** Wall time and the client's own CPU time (user + system, `process.cpuUsage`) of one unit of work. */
export interface Sample {
  /** Milliseconds of wall time. */
  wall: number;
  /** Microseconds of this process's CPU time (Azurite runs in another process, so it is not counted). */
  cpu: number;
}

/** Runs `fn` `iterations` times; the mean wall time and client CPU per call. */
export async function sampleAsync(iterations: number, fn: (i: number) => Promise<unknown>): Promise<Sample> {
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < iterations; i++) await fn(i);
  const wall = performance.now() - start;
  const cpu = process.cpuUsage(cpu0);
  return { wall: wall / iterations, cpu: (cpu.user + cpu.system) / iterations };
}

/** `compare` for samples: alternating rounds, the median wall time and the median CPU time of each side. */
export async function compareSamples(
  rounds: number,
  a: () => Promise<Sample>,
  b: () => Promise<Sample>,
): Promise<{ a: Sample; b: Sample }> {
  const { as, bs } = await alternate(rounds, a, b);
  const mid = (samples: Sample[]): Sample => ({
    wall: median(samples.map((s) => s.wall)),
    cpu: median(samples.map((s) => s.cpu)),
  });
  return { a: mid(as), b: mid(bs) };
}

/** Runs `fn` `iterations` times synchronously and returns the mean nanoseconds per call. */
export function timeSync(iterations: number, fn: (i: number) => unknown): number {
  let sink = 0;
  const start = performance.now();
  for (let i = 0; i < iterations; i++) if (fn(i)) sink++;
  const elapsed = performance.now() - start;
  if (sink < 0) console.log(sink);
  return (elapsed * 1e6) / iterations;
}

/**
 * Runs `fn` `iterations` times synchronously and returns the mean nanoseconds of this process's CPU
 * time per call: on a shared machine, wall time also counts the time other processes held the core.
 */
export function cpuSync(iterations: number, fn: (i: number) => unknown): number {
  let sink = 0;
  const before = process.cpuUsage();
  for (let i = 0; i < iterations; i++) if (fn(i)) sink++;
  const used = process.cpuUsage(before);
  if (sink < 0) console.log(sink);
  return ((used.user + used.system) * 1000) / iterations;
}

/**
 * Measures two implementations of the same work in alternating rounds (so drift in the machine
 * or the server hits both alike) and returns the median per-call cost of each.
 */
export async function compare(
  rounds: number,
  a: () => Promise<number>,
  b: () => Promise<number>,
): Promise<{ a: number; b: number }> {
  const { as, bs } = await alternate(rounds, a, b);
  return { a: median(as), b: median(bs) };
}

/** The rounds of both sides, alternating which goes first, after one unrecorded round each. */
async function alternate<T>(
  rounds: number,
  a: () => Promise<T>,
  b: () => Promise<T>,
): Promise<{ as: T[]; bs: T[] }> {
  const as: T[] = [];
  const bs: T[] = [];
  // One unrecorded round each first: JIT warm-up and connection set-up would otherwise count.
  await a();
  await b();
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      as.push(await a());
      bs.push(await b());
    } else {
      bs.push(await b());
      as.push(await a());
    }
  }
  return { as, bs };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** One printed row of the results table. */
export interface BenchRow {
  name: string;
  ours: string;
  baseline: string;
  /** tablekit / baseline; `NaN` for a row with no baseline (printed as "-"). */
  ratio: number;
  target: string;
  met: boolean;
}

/**
 * A row comparing a count of requests (or transactions) with the fewest entity group transactions
 * the service allows for the same rows; met when within `limit`× of it (always, with no limit).
 */
export function minimumRow(
  name: string,
  count: number,
  unit: string,
  minimum: number,
  limit?: number,
): BenchRow {
  const ratio = count / minimum;
  return {
    name,
    ours: `${count} ${unit}`,
    baseline: `${minimum} EGTs`,
    ratio,
    target: limit === undefined ? "-" : `≤ ${limit}×`,
    met: limit === undefined || ratio <= limit,
  };
}

export function printTable(rows: BenchRow[]): void {
  const header = ["benchmark", "tablekit", "baseline", "ratio", "target", "met"];
  const cells = rows.map((r) => [
    r.name,
    r.ours,
    r.baseline,
    Number.isNaN(r.ratio) ? "-" : `${r.ratio.toFixed(3)}×`,
    r.target,
    r.met ? "yes" : "NO",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? "").length)));
  const line = (c: string[]) => `| ${c.map((x, i) => x.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
  for (const c of cells) console.log(line(c));
}
