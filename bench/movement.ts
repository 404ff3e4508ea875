/**
 * Data movement (`tablekit import/export/copy`): rows per second into and out of `tablekit serve` (a
 * compiled server in its own process, as `npx tablekit serve` runs), copy Azurite → serve against a raw
 * SDK listing of the same Azurite table, and the heap of a large export/import (bench only).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TableClient } from "@azure/data-tables";
import { rowsAsItems } from "../src/movement/copy.js";
import { TableEndpoint } from "../src/movement/endpoint.js";
import { exportTable } from "../src/movement/export.js";
import { importItems } from "../src/movement/import.js";
import { openSink, readLines } from "../src/movement/lines.js";
import { type Endpoint, type RateRecorder, spawnServer } from "./serve-vs-azurite.js";

const perSecond = (v: number) => `${Math.round(v).toLocaleString("en-US")}/s`;
const mib = (v: number) => `${v.toFixed(1)} MiB`;

/** A line with every common type, 100 rows per partition. */
function line(i: number): string {
  const key = String(i).padStart(8, "0");
  return `{"PartitionKey":"p${Math.floor(i / 100)}","RowKey":"${key}","name":"item ${i}","count@odata.type":"Edm.Int32","count":${i % 1000},"big@odata.type":"Edm.Int64","big":"${i * 1_000_003}","price@odata.type":"Edm.Double","price":${i + 0.25},"active@odata.type":"Edm.Boolean","active":${i % 2 === 0},"at@odata.type":"Edm.DateTime","at":"2024-01-01T00:00:00.${String(i % 10_000_000).padStart(7, "0")}Z"}`;
}

function writeInput(path: string, count: number): void {
  const chunk: string[] = [];
  writeFileSync(path, "");
  for (let i = 0; i < count; i++) {
    chunk.push(line(i));
    if (chunk.length === 10_000 || i === count - 1) {
      writeFileSync(path, `${chunk.join("\n")}\n`, { flag: "a" });
      chunk.length = 0;
    }
  }
}

/**
 * Runs `work` (which moves `rows` rows) and records its wall rate, and the rate its CPU time allows
 * with a core each for client and server (rows / the larger of the two CPU times): on a loaded
 * machine the wall rate measures the neighbours as much as the code.
 */
async function measured(
  record: RateRecorder,
  name: string,
  target: number,
  server: Pick<Endpoint, "cpu">,
  work: () => Promise<number>,
): Promise<void> {
  const cpu0 = process.cpuUsage();
  const server0 = server.cpu();
  const started = performance.now();
  const rows = await work();
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu0);
  const clientMs = (used.user + used.system) / 1000;
  const server1 = server.cpu();
  const serverMs = server0 === undefined || server1 === undefined ? 0 : (server1 - server0) / 1000;
  console.log(
    `  ${name}: ${rows} rows, ${seconds.toFixed(2)} s wall, client CPU ${clientMs.toFixed(0)} ms, server CPU ${serverMs} ms`,
  );
  record(`${name}, rows/s (wall) / target`, rows / seconds, target, perSecond, 1, false);
  record(
    `${name}, rows/s (CPU-bound: a core each) / target`,
    rows / (Math.max(clientMs, serverMs) / 1000),
    target,
    perSecond,
    1,
    false,
  );
}

/** Samples the heap every 50 ms while `run` runs; resolves its result and the peak (MiB). */
async function withHeapPeak<T>(run: () => Promise<T>): Promise<{ result: T; peak: number }> {
  let peak = process.memoryUsage().heapUsed;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }, 50);
  try {
    const result = await run();
    return { result, peak: peak / 1024 / 1024 };
  } finally {
    clearInterval(timer);
  }
}

const nullSink = { write: () => undefined, close: async () => undefined };

export async function movementBench(
  azurite: string,
  record: RateRecorder,
  quick: boolean,
  heapRows: number | undefined,
): Promise<void> {
  console.log("\n[movement] tablekit import/export/copy");
  const count = quick ? 20_000 : 100_000;
  const dir = mkdtempSync(join(tmpdir(), "tablekit-bench-movement-"));
  const serve = await spawnServer("serve", "../src/cli/main.ts", ["serve", "--port", "0"]);
  try {
    const input = join(dir, "rows.ndjson");
    writeInput(input, count);
    const target = TableEndpoint.fromConnectionString(serve.connectionString);
    // Warm-up (JIT on both sides).
    await target.createTable("warm");
    await importItems(target, readLines(input), { table: "warm", mode: "upsert" });

    await target.createTable("moved");
    const n = count.toLocaleString("en-US");
    await measured(record, `import into tablekit serve (${n})`, 20_000, serve, async () => {
      const imported = await importItems(target, readLines(input), { table: "moved", mode: "insert" });
      return imported.imported;
    });
    await measured(record, `export from tablekit serve (${n})`, 50_000, serve, () =>
      exportTable(target, "moved", nullSink),
    );

    // Copy Azurite → serve, against a raw SDK listing of the same Azurite table.
    const copyCount = quick ? 5_000 : 20_000;
    const source = TableEndpoint.fromConnectionString(azurite);
    await source.createTable("movesrc");
    const part = join(dir, "part.ndjson");
    writeInput(part, copyCount);
    await importItems(source, readLines(part), { table: "movesrc", mode: "upsert" });
    const client = TableClient.fromConnectionString(azurite, "movesrc", { allowInsecureConnection: true });
    let started = performance.now();
    let listed = 0;
    for await (const _ of client.listEntities()) listed++;
    const listRate = listed / ((performance.now() - started) / 1000);
    await target.createTable("copied");
    started = performance.now();
    const copied = await importItems(target, rowsAsItems(source.pages("movesrc")), {
      table: "copied",
      mode: "upsert",
    });
    const copyRate = copied.imported / ((performance.now() - started) / 1000);
    record(
      `copy Azurite → serve / raw SDK listing of Azurite, rows/s (${copyCount.toLocaleString("en-US")})`,
      copyRate,
      listRate,
      perSecond,
      undefined,
      false,
    );

    if (heapRows !== undefined) {
      const big = join(dir, "big.ndjson");
      writeInput(big, heapRows);
      await target.createTable("big");
      (globalThis as { gc?: () => void }).gc?.();
      const baseline = process.memoryUsage().heapUsed / 1024 / 1024;
      const imp = await withHeapPeak(() =>
        importItems(target, readLines(big), { table: "big", mode: "insert" }),
      );
      const sink = openSink(join(dir, "big.out.ndjson"));
      const exp = await withHeapPeak(() => exportTable(target, "big", sink));
      await sink.close();
      console.log(
        `  heap before: ${mib(baseline)}; ${imp.result.imported} rows imported, ${exp.result} exported`,
      );
      record(`import heap peak, ${heapRows.toLocaleString("en-US")} rows / 200 MiB`, imp.peak, 200, mib, 1);
      record(`export heap peak, ${heapRows.toLocaleString("en-US")} rows / 200 MiB`, exp.peak, 200, mib, 1);
    }
  } finally {
    await serve.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
