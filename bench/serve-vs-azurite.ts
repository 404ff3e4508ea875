/**
 * `tablekit serve` against Azurite and against a stub server that answers every request without doing
 * any work (the client's own ceiling on this machine), all through the same raw `@azure/data-tables`
 * client: batched upserts, paging, point reads, and the time of one 1,000-row page as the table grows.
 */
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { TableClient, TableServiceClient, TableTransaction } from "@azure/data-tables";
import { build } from "esbuild";
import { MemoryStore, startTableServer } from "../src/index.js";
import { median } from "./measure.js";
import { serveHandlerCosts } from "./serve-handler.js";

/** Records one comparison (the runner's `record`, with the direction of "better"). */
export type RateRecorder = (
  name: string,
  ours: number,
  baseline: number,
  unit: (v: number) => string,
  target: number | undefined,
  lowerIsBetter?: boolean,
) => void;

const perSecond = (v: number) => `${Math.round(v).toLocaleString("en-US")}/s`;
const ms = (v: number) => `${v.toFixed(2)} ms`;
const us = (v: number) => `${v.toFixed(1)} µs`;

function row(pk: string, i: number): Record<string, unknown> & { partitionKey: string; rowKey: string } {
  return {
    partitionKey: pk,
    rowKey: String(i).padStart(8, "0"),
    name: `item ${i}`,
    count: i,
    price: i + 0.5,
    active: i % 2 === 0,
  };
}

interface Rates {
  upserts: number;
  paging: number;
  reads: number;
}

/** A server process under test: its connection string and its CPU time so far (µs; undefined off Linux). */
export interface Endpoint {
  readonly name: string;
  readonly connectionString: string;
  cpu(): number | undefined;
}

/** What one endpoint measured: rates, and the server's CPU µs per entity where it can be read. */
interface Measured {
  rate: Rates;
  cpu: Partial<Rates>;
  /** The phases stopped at the time cap, with the entities they had done by then. */
  capped: Partial<Rates>;
}

/**
 * The three rates of each endpoint, measured with the same raw client calls. With several endpoints
 * the work is cut into chunks that alternate between them (in alternating order), so a change in the
 * load of a shared machine falls on all of them alike instead of on whichever ran last. With `capMs`
 * (one endpoint, one chunk: Azurite) a phase stops at the cap and its rate is of the work done by then.
 */
async function rates(
  endpoints: readonly Endpoint[],
  table: string,
  total: number,
  reads: number,
  chunks: number,
  capMs = Number.POSITIVE_INFINITY,
): Promise<Measured[]> {
  const clients = await Promise.all(
    endpoints.map(async ({ connectionString }) => {
      const service = TableServiceClient.fromConnectionString(connectionString, {
        allowInsecureConnection: true,
      });
      await service.createTable(table).catch(() => undefined);
      return TableClient.fromConnectionString(connectionString, table, { allowInsecureConnection: true });
    }),
  );
  const seconds = endpoints.map(() => ({ upserts: 0, paging: 0, reads: 0 }));
  // Entities each phase did (less than planned only where the cap stopped it; one endpoint then).
  const done: Rates = { upserts: 0, paging: 0, reads: 0 };
  const capped: Partial<Rates> = {};
  let phaseStart = 0;
  const overCap = (key: keyof Rates, count: number) => {
    if (performance.now() - phaseStart <= capMs) return false;
    capped[key] = count;
    return true;
  };
  const cpuUs = endpoints.map(() => ({ upserts: 0, paging: 0, reads: 0 }));
  let cpuKnown = true;
  // One chunk of a phase on every endpoint, in alternating order.
  const chunk = async (key: keyof Rates, round: number, work: (client: TableClient) => Promise<void>) => {
    const order = endpoints.map((_, e) => e);
    if (round % 2 === 1) order.reverse();
    for (const e of order) {
      const endpoint = endpoints[e] as Endpoint;
      const cpu0 = endpoint.cpu();
      const from = process.hrtime.bigint();
      const start = performance.now();
      await work(clients[e] as TableClient);
      (seconds[e] as Rates)[key] += (performance.now() - start) / 1000;
      const cpu1 = endpoint.cpu();
      if (cpu0 === undefined || cpu1 === undefined) cpuKnown = false;
      else (cpuUs[e] as Rates)[key] += cpu1 - cpu0;
      // Chunk boundaries on the monotonic clock, to split a server --cpu-prof by workload.
      if (process.env.TABLEKIT_BENCH_PHASES === "1")
        console.log(`  phase ${endpoint.name} ${key} ${from / 1000n} ${process.hrtime.bigint() / 1000n}`);
    }
  };
  const perChunk = Math.ceil(total / chunks / 100) * 100;
  phaseStart = performance.now();
  for (let round = 0, at = 0; at < total && capped.upserts === undefined; round++, at += perChunk) {
    await chunk("upserts", round, async (client) => {
      for (let b = at; b < Math.min(total, at + perChunk); b += 100) {
        if (overCap("upserts", b)) return;
        const tx = new TableTransaction();
        for (let i = b; i < b + 100; i++) tx.upsertEntity(row("p", i), "Replace");
        await client.submitTransaction(tx.actions);
      }
    });
  }
  done.upserts = capped.upserts ?? total;
  // Paging reads the whole table per round (a chunk of it would not be paging through it).
  const pagingRounds = Math.max(1, Math.min(3, chunks));
  phaseStart = performance.now();
  for (let round = 0; round < pagingRounds && capped.paging === undefined; round++) {
    await chunk("paging", round, async (client) => {
      let seen = 0;
      for await (const page of client.listEntities().byPage({ maxPageSize: 1000 })) {
        seen += page.length;
        if (overCap("paging", done.paging + seen)) return;
      }
      // The stub pages its own fixed total (the warm-up table reads more than it wrote).
      if (seen < done.upserts) throw new Error(`paging saw ${seen} entities, expected ${done.upserts}`);
      done.paging += seen;
    });
  }
  done.paging = capped.paging ?? done.paging;
  const readsPerChunk = Math.ceil(reads / chunks);
  phaseStart = performance.now();
  for (let round = 0, at = 0; at < reads && capped.reads === undefined; round++, at += readsPerChunk) {
    await chunk("reads", round, async (client) => {
      for (let i = at; i < Math.min(reads, at + readsPerChunk); i++) {
        if (overCap("reads", i)) return;
        await client.getEntity("p", String((i * 7919) % done.upserts).padStart(8, "0"));
      }
    });
  }
  done.reads = capped.reads ?? reads;
  // With several endpoints nothing is capped, and each paged the same rounds: per endpoint, the total.
  const counts: Rates =
    endpoints.length === 1 ? done : { upserts: total, paging: total * pagingRounds, reads };
  return endpoints.map((_, e) => {
    const rate = {} as Rates;
    const cpu: Partial<Rates> = {};
    for (const key of ["upserts", "paging", "reads"] as const) {
      rate[key] = counts[key] / (seconds[e] as Rates)[key];
      if (cpuKnown) cpu[key] = (cpuUs[e] as Rates)[key] / counts[key];
    }
    return { rate, cpu, capped };
  });
}

/** Paging measurements on one table through `tablekit serve`. */
interface PageTimes {
  /** Median milliseconds of one 1,000-row page from the middle of the table. */
  page: number;
  /** Seconds to page through the whole table, when asked for. */
  full?: number;
}

/**
 * One 1,000-row page from the middle of a table of `rows` entities in one partition (the median of
 * `rounds`), and with `full` the time to page through all of it, through an in-process server.
 */
async function pageTime(rows: number, rounds: number, full = false): Promise<PageTimes> {
  const store = new MemoryStore();
  await store.createTable("scale");
  for (let at = 0; at < rows; at += 100) {
    const actions = [];
    for (let i = at; i < at + 100; i++)
      actions.push({ kind: "upsert" as const, entity: row("p", i) as never, mode: "replace" as const });
    await store.submitTransaction("scale", "p", actions);
  }
  const server = await startTableServer({ port: 0, store });
  try {
    const client = TableClient.fromConnectionString(server.connectionString, "scale", {
      allowInsecureConnection: true,
    });
    const times: number[] = [];
    for (let r = 0; r < rounds; r++) {
      // Starts spread over the table, each with a full page after it (30 rounds on 10k rows once ran off the end).
      const from = String(Math.floor(((r + 1) * (rows - 1000)) / (rounds + 1))).padStart(8, "0");
      const t = performance.now();
      const pages = client
        .listEntities({ queryOptions: { filter: `PartitionKey eq 'p' and RowKey ge '${from}'` } })
        .byPage({ maxPageSize: 1000 });
      const first = await pages.next();
      times.push(performance.now() - t);
      if (first.value.length !== 1000) throw new Error(`expected a full page, got ${first.value.length}`);
    }
    if (!full) return { page: median(times) };
    const start = performance.now();
    let seen = 0;
    for await (const page of client.listEntities().byPage({ maxPageSize: 1000 })) seen += page.length;
    if (seen !== rows) throw new Error(`paged through ${seen} of ${rows} rows`);
    return { page: median(times), full: (performance.now() - start) / 1000 };
  } finally {
    await server.close();
  }
}

/** A process's user + system CPU time in µs, from /proc (Linux); undefined elsewhere. */
function processCpu(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime are fields 14 and 15 of stat(5), in clock ticks (USER_HZ, 100 on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return undefined;
  }
}

/**
 * A server script compiled to one ES module, as the published package runs it (`npx tablekit serve`
 * runs the compiled `dist/`). Under `node --import tsx` every closure the server creates would also
 * pay tsx's `keepNames` helper (an `Object.defineProperty` per closure), which no user runs.
 */
async function compiled(script: string): Promise<string> {
  const dir = join(fileURLToPath(new URL("..", import.meta.url)), "node_modules", ".cache", "tablekit-bench");
  mkdirSync(dir, { recursive: true });
  const outfile = join(dir, `${basename(script, ".ts")}.mjs`);
  await build({
    entryPoints: [fileURLToPath(new URL(script, import.meta.url))],
    outfile,
    bundle: true,
    packages: "external",
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "error",
  });
  return outfile;
}

/**
 * A server script in its own process, like Azurite (so server and client do not share one thread).
 * `TABLEKIT_BENCH_SERVER_PROF=<dir>` writes a V8 CPU profile of the tablekit server there.
 */
export async function spawnServer(
  name: string,
  script: string,
  args: string[],
): Promise<Endpoint & { close(): Promise<void> }> {
  const path = await compiled(script);
  const profile = process.env.TABLEKIT_BENCH_SERVER_PROF;
  const flags =
    profile !== undefined && script.includes("cli")
      ? ["--cpu-prof", "--cpu-prof-interval=200", `--cpu-prof-dir=${profile}`]
      : [];
  const child = spawn(process.execPath, [...flags, path, ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const connectionString = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      const line = out.split("\n").find((l) => l.startsWith("DefaultEndpointsProtocol="));
      if (line !== undefined) resolve(line.trim());
    });
    child.once("exit", () => reject(new Error(`tablekit serve exited: ${out}`)));
  });
  return {
    name,
    connectionString,
    cpu: () => processCpu(child.pid),
    close: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/**
 * Runs the comparisons and records them (serve and Azurite each as a share of the stub's rate, and the
 * server CPU per entity of serve and the stub). Without an Azurite connection string, Azurite is left out.
 */
export async function serveVsAzurite(
  azurite: string | undefined,
  record: RateRecorder,
  quick: boolean,
): Promise<void> {
  console.log("\n[serve] tablekit serve vs Azurite vs a no-work stub (same raw SDK client)");
  const total = quick ? 10_000 : 100_000;
  const reads = quick ? 300 : 1_000;
  const stub = await spawnServer("stub", "./table-stub.ts", [String(total)]);
  const server = await spawnServer("serve", "../src/cli/main.ts", ["serve", "--port", "0"]);
  try {
    // Warm the client and both servers up first (JIT), so neither side pays for it in the measurement.
    await rates([stub, server], "benchwarm", 10_000, 1_000, 1);
    const [s, t] = (await rates([stub, server], "benchserve", total, reads, quick ? 4 : 10)) as [
      Measured,
      Measured,
    ];
    const phases = [
      ["batched upserts", "upserts"],
      ["paging", "paging"],
      ["point reads", "reads"],
    ] as const;
    for (const [what, key] of phases) {
      record(
        `tablekit serve / stub, ${what} (${total.toLocaleString("en-US")})`,
        t.rate[key],
        s.rate[key],
        perSecond,
        0.7,
        false,
      );
      const serveCpu = t.cpu[key];
      const stubCpu = s.cpu[key];
      if (serveCpu !== undefined && stubCpu !== undefined) {
        record(`tablekit serve / stub, ${what}: server CPU per entity`, serveCpu, stubCpu, us, undefined);
      }
    }
    // Azurite is only reported (and slow at paging: every page filters and sorts the whole table), so
    // it runs once, on its own, each phase stopped at a cap (the "report, or time out").
    if (azurite !== undefined) {
      // `TABLEKIT_BENCH_AZURITE_CAP_MIN` sets another cap (minutes per phase).
      const capMs = Number(process.env.TABLEKIT_BENCH_AZURITE_CAP_MIN ?? (quick ? 2 : 10)) * 60_000;
      const [a] = (await rates(
        [{ name: "azurite", connectionString: azurite, cpu: () => undefined }],
        "benchserveaz",
        total,
        reads,
        1,
        capMs,
      )) as [Measured];
      for (const [what, key] of phases) {
        const stopped = a.capped[key];
        const note =
          stopped === undefined
            ? ""
            : ` (stopped at the ${capMs / 60_000} min cap after ${stopped.toLocaleString("en-US")})`;
        record(`Azurite / stub, ${what}${note}`, a.rate[key], s.rate[key], perSecond, undefined, false);
      }
    }
  } finally {
    await server.close();
    await stub.close();
  }
  const handler = await serveHandlerCosts(quick ? 3 : 7);
  console.log(
    `  tablekit serve's handler alone (in process, no sockets; least CPU of several rounds): ${handler.upserts.toFixed(1)} µs per upserted entity, ${handler.paging.toFixed(2)} µs per paged entity, ${handler.reads.toFixed(1)} µs per point read`,
  );
  if (process.argv.includes("--no-scale")) return;
  const small = await pageTime(10_000, quick ? 10 : 30);
  const size = quick ? 100_000 : 1_000_000;
  const large = await pageTime(size, quick ? 10 : 30, true);
  const label = quick ? "100k" : "1M";
  record(`tablekit serve: one 1,000-row page at ${label} / at 10k rows`, large.page, small.page, ms, 1.5);
  // Server and client share this process's thread here, so this is a conservative figure.
  const seconds = (v: number) => `${v.toFixed(1)} s`;
  record(
    `tablekit serve: paging through ${label} rows (in-process server) / 60 s`,
    large.full ?? 0,
    60,
    seconds,
    1,
  );
}

/** The page-time measurements alone: `node --import tsx bench/serve-vs-azurite.ts [rows]`. */
// Run directly (not when bundled into the bench, where import.meta.url is the bundle's).
if (process.argv[1]?.endsWith("serve-vs-azurite.ts")) {
  const rows = Number(process.argv[2] ?? 1_000_000);
  const small = await pageTime(10_000, 30);
  const large = await pageTime(rows, 30, true);
  console.log(
    `one 1,000-row page: ${small.page.toFixed(2)} ms at 10k rows, ${large.page.toFixed(2)} ms at ` +
      `${rows.toLocaleString("en")} (${(large.page / small.page).toFixed(2)}×); all ${rows.toLocaleString("en")} rows paged in ${large.full?.toFixed(1)} s`,
  );
}
