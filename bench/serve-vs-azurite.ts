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

/** Median time of one 1,000-row page from the middle of a table of `rows` entities in one partition. */
async function pageTime(rows: number, rounds: number): Promise<number> {
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
      const from = String(Math.floor(((r + 1) * rows) / (rounds + 2))).padStart(8, "0");
      const t = performance.now();
      const pages = client
        .listEntities({ queryOptions: { filter: `PartitionKey eq 'p' and RowKey ge '${from}'` } })
        .byPage({ maxPageSize: 1000 });
      const first = await pages.next();
      times.push(performance.now() - t);
      if (first.value.length !== 1000) throw new Error(`expected a full page, got ${first.value.length}`);
    }
    return median(times);
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
  const large = await pageTime(quick ? 100_000 : 1_000_000, quick ? 10 : 30);
  record(
    `tablekit serve: one 1,000-row page at ${quick ? "100k" : "1M"} / at 10k rows`,
    large,
    small,
    ms,
    1.5,
  );
}
