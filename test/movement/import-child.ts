/**
 * The import crash test's victim: imports a file with a checkpoint, announcing each batch before it is
 * sent (`send <n>`) and once its answer is in, before the checkpoint records it (`answered <n>`).
 * After line <stop at> it freezes until the parent's SIGKILL, so the kill lands exactly there. Usage:
 *
 *   node import-child.mjs <connection string> <table> <input> <checkpoint> <mode> <stop at>
 *
 * Run to its end (stop at 0), it prints `done <imported> <failed> <recovered>` and exits 0.
 */
import { once } from "node:events";
import { createInterface } from "node:readline";
import type { ImportMode } from "../../src/movement/batch.js";
import { Checkpoint } from "../../src/movement/checkpoint.js";
import { TableEndpoint } from "../../src/movement/endpoint.js";
import { importItems } from "../../src/movement/import.js";
import { readLines } from "../../src/movement/lines.js";
import { childArguments, freezeAtLine, say } from "../support/child-lines.js";

async function main(): Promise<void> {
  const [cs, table, input, checkpointPath, mode, stopText] = childArguments("import-child.ts", [
    "connection string",
    "table",
    "input",
    "checkpoint",
    "mode",
    "stop at",
  ]) as [string, string, string, string, ImportMode, string];
  freezeAtLine(Number(stopText));
  await once(createInterface({ input: process.stdin }), "line");
  const endpoint = TableEndpoint.fromConnectionString(cs);
  let batches = 0;
  const submit = endpoint.submitBatch.bind(endpoint);
  endpoint.submitBatch = async (parts) => {
    const n = ++batches;
    say(`send ${n}`);
    const outcome = await submit(parts);
    say(`answered ${n}`);
    return outcome;
  };
  const { checkpoint, resume } = Checkpoint.open(checkpointPath, { table, mode, input });
  const stats = await importItems(endpoint, readLines(input, resume?.start), {
    table,
    mode,
    checkpoint,
    resume,
    concurrency: 4,
    windowLines: 150,
    onFailure: (f) => process.stderr.write(`line ${f.line}: ${f.reason}\n`),
  });
  checkpoint.close();
  say(`done ${stats.imported} ${stats.failed} ${stats.recovered}`);
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
