import {
  accessSync,
  closeSync,
  constants,
  mkdirSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { type Command, Option } from "commander";
import { StoreError } from "../errors.js";
import type { ImportMode } from "../movement/batch.js";
import { Checkpoint, type ResumeState } from "../movement/checkpoint.js";
import { rowsAsItems } from "../movement/copy.js";
import type { TableEndpoint } from "../movement/endpoint.js";
import { exportTable } from "../movement/export.js";
import { type ImportFailure, type ImportStats, importItems, newStats } from "../movement/import.js";
import { type OutputSink, openSink, readLines } from "../movement/lines.js";
import { Progress } from "../movement/progress.js";
import { connect, connectionOption, endpointOf, tablesOf } from "./connection.js";
import { FailureReport } from "./failure-report.js";
import { integerOption, positiveNumberOption, UsageError } from "./options.js";
import { runVerify, type VerifyFlags } from "./verify-command.js";

interface Common {
  connectionString?: string;
  quiet?: boolean;
}

interface ExportFlags extends Common {
  table?: string;
  all?: boolean;
  filter?: string;
  select?: string;
  out?: string;
  gzip?: boolean;
}

interface ImportFlags extends Common {
  table?: string;
  all?: boolean;
  mode: ImportMode;
  createTable?: boolean;
  checkpoint?: string;
  errors?: string;
  concurrency: number;
  maxRowsPerSecond?: number;
}

interface CopyFlags extends Common {
  table?: string;
  all?: boolean;
  to: string;
  toTable?: string;
  filter?: string;
  mode: ImportMode;
  concurrency: number;
  maxRowsPerSecond?: number;
}

function modeOption(fallback: ImportMode): Option {
  return new Option(
    "--mode <mode>",
    "insert (fail on existing rows), upsert (insert or replace), replace (existing rows only)",
  )
    .choices(["upsert", "replace", "insert"])
    .default(fallback);
}

/** Adds `export`, `import`, `copy` and `verify` to the program. */
export function addMovementCommands(program: Command): void {
  program
    .command("export")
    .description("Writes a table as typed NDJSON (one entity per line; docs/data-movement.md).")
    .addOption(connectionOption())
    .option("--table <name>", "the table to export")
    .option("--all", "every table of the account, one file each in --out DIR")
    .option("--filter <odata>", "an OData filter (e.g. \"PartitionKey eq 'p1'\")")
    .option("--select <names>", "properties to export, comma-separated (keys and Timestamp always)")
    .option("--out <path>", "output file (.gz compresses; default stdout), or the directory of --all")
    .option("--gzip", "with --all: write <table>.ndjson.gz files")
    .option("--quiet", "no progress and no summary")
    .action((flags: ExportFlags) => runExport(flags));

  program
    .command("import")
    .description("Imports typed NDJSON into a table with batched transactions, partitions in parallel.")
    .argument("<file>", "input file (.gz decompressed; - for stdin), or the directory of --all")
    .addOption(connectionOption())
    .option("--table <name>", "the table to write")
    .option("--all", "import every <table>.ndjson[.gz] file of the directory <file> into its table")
    .addOption(modeOption("upsert"))
    .option("--create-table", "create the table if it does not exist")
    .option("--checkpoint <file>", "record committed progress here; a killed run started again resumes")
    .option("--errors <file>", "write each failed line (number, reason, text) to this file as JSON")
    .option("--concurrency <n>", "batches in flight at once", integerOption("--concurrency", 1), 16)
    .option("--max-rows-per-second <n>", "pace the writes", positiveNumberOption("--max-rows-per-second"))
    .option("--quiet", "no progress and no summary")
    .action((file: string, flags: ImportFlags) => runImport(file, flags));

  program
    .command("copy")
    .description("Copies a table to another account or table, streamed (export into import, no file).")
    .addOption(connectionOption())
    .option("--table <name>", "the source table")
    .option("--all", "every table of the account, each to the same name")
    .requiredOption("--to <cs>", "the target's connection string")
    .option("--to-table <name>", "the target table (default: the source's name)")
    .option("--filter <odata>", "copy only the rows matching this OData filter")
    .addOption(modeOption("upsert"))
    .option("--concurrency <n>", "batches in flight at once", integerOption("--concurrency", 1), 16)
    .option("--max-rows-per-second <n>", "pace the writes", positiveNumberOption("--max-rows-per-second"))
    .option("--quiet", "no progress and no summary")
    .action((flags: CopyFlags) => runCopy(flags));

  program
    .command("verify")
    .description("Compares two tables entity by entity (keys, types, values); exit 0 only when equal.")
    .addOption(connectionOption())
    .option("--table <name>", "the first table")
    .option("--all", "every table of both accounts")
    .requiredOption("--to <cs>", "the second side's connection string")
    .option("--to-table <name>", "the second table (default: the first's name)")
    .option("--filter <odata>", "compare only the rows matching this OData filter")
    .option("--show <n>", "differences to print before the counts", integerOption("--show", 0), 10)
    .option("--quiet", "no progress")
    .action((flags: VerifyFlags) => runVerify(flags));
}

async function runExport(flags: ExportFlags): Promise<void> {
  const endpoint = endpointOf(flags, "export");
  const tables = await tablesOf(flags, endpoint);
  const select = flags.select
    ?.split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  let createdDir: string | undefined;
  if (flags.all === true) {
    if (flags.out === undefined) throw new UsageError("export --all needs --out DIR");
    createdDir = mkdirSync(flags.out, { recursive: true });
  }
  let total = 0;
  const progress = new Progress("export", { quiet: flags.quiet });
  // Every file gets its name only once every table is exported: a failed export leaves no file (an
  // older one of that name stays as it was), and no folder it made.
  const sinks: OutputSink[] = [];
  try {
    for (const table of tables) {
      const out =
        flags.all === true ? join(flags.out!, `${table}.ndjson${flags.gzip ? ".gz" : ""}`) : flags.out;
      const sink = openSink(out);
      sinks.push(sink);
      total += await exportTable(endpoint, table, sink, { filter: flags.filter, select }, (n) =>
        progress.add(n),
      );
      await sink.end();
    }
  } catch (error) {
    for (const sink of sinks) await sink.discard();
    if (createdDir !== undefined) rmSync(createdDir, { recursive: true, force: true });
    throw error;
  }
  for (const sink of sinks) sink.commit();
  const where = flags.out === undefined ? "stdout" : flags.out;
  progress.finish(
    `tablekit export: ${total.toLocaleString("en-US")} rows from ${tables.length === 1 ? tables[0] : `${tables.length} tables`} to ${where}`,
    total,
  );
}

async function runImport(file: string, flags: ImportFlags): Promise<void> {
  const endpoint = endpointOf(flags, "import");
  if ((flags.table === undefined) === (flags.all !== true))
    throw new UsageError("give --table NAME or --all");
  const jobs: Array<{ table: string; path: string }> =
    flags.all === true
      ? readdirSync(file)
          .sort()
          .flatMap((name) => {
            const match = /^([A-Za-z][A-Za-z0-9]{2,62})\.(?:ndjson|jsonl)(?:\.gz)?$/.exec(name);
            return match === null ? [] : [{ table: match[1]!, path: join(file, name) }];
          })
      : [{ table: flags.table!, path: file }];
  // Every input is readable before any table is created: a failed import leaves no empty table.
  for (const job of jobs) if (job.path !== "-") checkReadable(job.path);
  const stop = new AbortController();
  const onSigint = () => stop.abort();
  process.once("SIGINT", onSigint);
  let failed = 0;
  try {
    for (const job of jobs) {
      if (stop.signal.aborted) break;
      if (flags.createTable === true || flags.all === true) await endpoint.createTable(job.table);
      const checkpointPath =
        flags.checkpoint === undefined
          ? undefined
          : flags.all === true
            ? `${flags.checkpoint}.${job.table}`
            : flags.checkpoint;
      const stats = await importFile(endpoint, job.table, job.path, checkpointPath, flags, stop.signal);
      failed += stats.failed;
    }
  } finally {
    process.removeListener("SIGINT", onSigint);
  }
  if (stop.signal.aborted) {
    process.stderr.write(
      `tablekit import: interrupted${flags.checkpoint === undefined ? "" : `; the checkpoint ${flags.checkpoint} resumes it`}\n`,
    );
    process.exitCode = 130;
  } else if (failed > 0) process.exitCode = 1;
}

function checkReadable(path: string): void {
  try {
    accessSync(path, constants.R_OK);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new Error(
      `cannot read ${path}${typeof code === "string" ? ` (${code})` : ""}; nothing was imported`,
    );
  }
}

async function importFile(
  endpoint: TableEndpoint,
  table: string,
  path: string,
  checkpointPath: string | undefined,
  flags: ImportFlags,
  signal: AbortSignal,
): Promise<ImportStats> {
  let checkpoint: Checkpoint | undefined;
  let resume: ResumeState | undefined;
  if (checkpointPath !== undefined) {
    ({ checkpoint, resume } = Checkpoint.open(checkpointPath, { table, mode: flags.mode, input: path }));
  }
  const errors =
    flags.errors === undefined ? undefined : openSync(flags.errors, resume === undefined ? "w" : "a");
  const progress = new Progress("import", { quiet: flags.quiet });
  const stats = newStats();
  const failedLines: number[] = [];
  const report = new FailureReport("tablekit import", { file: path === "-" ? "stdin" : path });
  const onFailure = (failure: ImportFailure) => {
    if (failedLines.length < 10) failedLines.push(failure.line);
    report.add(failure);
    if (errors !== undefined) {
      writeSync(
        errors,
        `${JSON.stringify({ line: failure.line, reason: failure.reason, text: failure.text })}\n`,
      );
    }
  };
  // A plain file's size gives the ETA (bytes read so far against it).
  const size = path === "-" || path.endsWith(".gz") ? undefined : statSync(path).size;
  const items = counted(readLines(path, resume?.start), (item) => {
    // The rows to expect: the lines read so far, scaled by the bytes left.
    if (size !== undefined && item.end > 0) progress.total = Math.round((item.line * size) / item.end);
    // Rows committed (the reading runs ahead of them by the windows in flight).
    progress.set(stats.imported);
  });
  try {
    await importItems(
      endpoint,
      items,
      {
        table,
        mode: flags.mode,
        concurrency: flags.concurrency,
        maxRowsPerSecond: flags.maxRowsPerSecond,
        checkpoint,
        resume,
        onFailure,
        signal,
      },
      stats,
    );
  } finally {
    checkpoint?.close();
    if (errors !== undefined) closeSync(errors);
    report.finish();
  }
  const parts = [
    `${stats.imported.toLocaleString("en-US")} row${stats.imported === 1 ? "" : "s"} imported into ${table}`,
  ];
  if (resume !== undefined) {
    parts.push(`${(resume.imported + resume.failed).toLocaleString("en-US")} lines settled by earlier runs`);
  }
  if (stats.recovered > 0) parts.push(`${stats.recovered} found already written`);
  if (stats.failed > 0)
    parts.push(
      `${stats.failed.toLocaleString("en-US")} failed${failedLines.length > 0 ? ` (line${failedLines.length === 1 ? "" : "s"} ${failedLines.join(", ")}${stats.failed > failedLines.length ? ", …" : ""})` : ""}`,
    );
  progress.finish(`tablekit import: ${parts.join(", ")}`, stats.read);
  return stats;
}

async function* counted<T>(items: AsyncIterable<T>, onItem: (item: T) => void): AsyncGenerator<T> {
  for await (const item of items) {
    onItem(item);
    yield item;
  }
}

async function runCopy(flags: CopyFlags): Promise<void> {
  const source = endpointOf(flags, "copy");
  const target = connect(flags.to, "copy");
  const tables = await tablesOf(flags, source);
  if (flags.all === true && flags.toTable !== undefined)
    throw new UsageError("--to-table goes with --table, not --all");
  // The source first: a copy that cannot read leaves no empty table behind on the target.
  if (flags.all !== true && !(await source.tableExists(tables[0]!))) {
    throw new StoreError(`the source table ${tables[0]} does not exist; nothing was created`, {
      statusCode: 404,
      serviceCode: "TableNotFound",
    });
  }
  const progress = new Progress("copy", { quiet: flags.quiet });
  const stats = newStats();
  for (const table of tables) {
    const toTable = flags.toTable ?? table;
    const report = new FailureReport("tablekit copy", { table });
    await target.createTable(toTable);
    const items = rowsAsItems(source.pages(table, { filter: flags.filter }), (n) => progress.add(n));
    await importItems(
      target,
      items,
      {
        table: toTable,
        mode: flags.mode,
        concurrency: flags.concurrency,
        maxRowsPerSecond: flags.maxRowsPerSecond,
        onFailure: (failure) => report.add(failure),
      },
      stats,
    );
    report.finish();
  }
  const failed = stats.failed > 0 ? `, ${stats.failed} failed` : "";
  progress.finish(
    `tablekit copy: ${stats.imported.toLocaleString("en-US")} rows copied from ${tables.length === 1 ? tables[0] : `${tables.length} tables`}${failed}`,
    stats.read,
  );
  if (stats.failed > 0) process.exitCode = 1;
}
