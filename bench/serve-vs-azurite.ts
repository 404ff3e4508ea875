/**
 * `tablekit serve` against Azurite and against a stub server that answers every request without doing
 * any work (the client's own ceiling on this machine), all through the same raw `@azure/data-tables`
 * client: batched upserts, paging, point reads, and the time of one 1,000-row page as the table grows.
 */
import { spawn } from "node:child_process";
import { TableClient, TableServiceClient, TableTransaction } from "@azure/data-tables";
import { MemoryStore, startTableServer } from "../src/index.js";
import { median } from "./measure.js";

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

/** The three rates of one endpoint, measured with the same raw client calls. */
async function rates(connectionString: string, table: string, total: number, reads: number): Promise<Rates> {
  const service = TableServiceClient.fromConnectionString(connectionString, {
    allowInsecureConnection: true,
  });
  await service.createTable(table).catch(() => undefined);
  const client = TableClient.fromConnectionString(connectionString, table, { allowInsecureConnection: true });
  let start = performance.now();
  for (let at = 0; at < total; at += 100) {
    const tx = new TableTransaction();
    for (let i = at; i < at + 100; i++) tx.upsertEntity(row("p", i), "Replace");
    await client.submitTransaction(tx.actions);
  }
  const upserts = total / ((performance.now() - start) / 1000);
  start = performance.now();
  let seen = 0;
  for await (const page of client.listEntities().byPage({ maxPageSize: 1000 })) seen += page.length;
  const paging = seen / ((performance.now() - start) / 1000);
  start = performance.now();
  for (let i = 0; i < reads; i++) await client.getEntity("p", String((i * 7919) % total).padStart(8, "0"));
  const read = reads / ((performance.now() - start) / 1000);
  return { upserts, paging, reads: read };
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

/** A server script in its own process, like Azurite (so server and client do not share one thread). */
async function spawnServer(
  script: string,
  args: string[],
): Promise<{ connectionString: string; close(): Promise<void> }> {
  const path = new URL(script, import.meta.url).pathname;
  const child = spawn(process.execPath, ["--import", "tsx", path, ...args], {
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
    connectionString,
    close: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** Runs the comparisons and records them (serve and Azurite each as a share of the stub's rate). */
export async function serveVsAzurite(azurite: string, record: RateRecorder, quick: boolean): Promise<void> {
  console.log("\n[serve] tablekit serve vs Azurite vs a no-work stub (same raw SDK client)");
  const total = quick ? 10_000 : 100_000;
  const reads = quick ? 300 : 1_000;
  const stub = await spawnServer("./table-stub.ts", [String(total)]);
  const server = await spawnServer("../src/server/cli.ts", ["serve", "--port", "0"]);
  try {
    await rates(stub.connectionString, "benchwarm", 2_000, 200); // warm the client up first
    const s = await rates(stub.connectionString, "benchstub", total, reads);
    const t = await rates(server.connectionString, "benchserve", total, reads);
    const a = await rates(azurite, "benchserveaz", total, reads);
    for (const [what, key] of [
      ["batched upserts", "upserts"],
      ["paging", "paging"],
      ["point reads", "reads"],
    ] as const) {
      record(
        `tablekit serve / stub, ${what} (${total.toLocaleString("en-US")})`,
        t[key],
        s[key],
        perSecond,
        0.7,
        false,
      );
      record(`Azurite / stub, ${what}`, a[key], s[key], perSecond, undefined, false);
    }
  } finally {
    await server.close();
    await stub.close();
  }
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
if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = Number(process.argv[2] ?? 1_000_000);
  const small = await pageTime(10_000, 30);
  const large = await pageTime(rows, 30, true);
  console.log(
    `one 1,000-row page: ${small.page.toFixed(2)} ms at 10k rows, ${large.page.toFixed(2)} ms at ` +
      `${rows.toLocaleString("en")} (${(large.page / small.page).toFixed(2)}×); all ${rows.toLocaleString("en")} rows paged in ${large.full?.toFixed(1)} s`,
  );
}
