import type { Command } from "commander";
import { AzureStore } from "../store/azure/azure-store.js";
import type { ReshardProgress } from "../store/sharded/shard-mover.js";
import { ShardedStore } from "../store/sharded/sharded-store.js";
import { UsageError } from "./options.js";

interface ReshardFlags {
  shard: string[];
  add: string;
  directory?: string;
  quiet?: boolean;
}

/** Adds `reshard` to the program. */
export function addReshardCommand(program: Command): void {
  program
    .command("reshard")
    .description(
      "Adds a shard (storage account) to a ShardedStore and moves its partitions there online (docs/sharding.md).",
    )
    .requiredOption(
      "--shard <name=cs>",
      "a current shard and its connection string, or name=$VAR to read it from an environment variable (repeat per shard)",
      (value: string, list: string[] = []) => [...list, value],
    )
    .requiredOption("--add <name=cs>", "the shard to add, in the same form")
    .option("--directory <name>", "the shard that keeps the shard map (default: the first name)")
    .option("--quiet", "no progress and no summary")
    .action((flags: ReshardFlags) => runReshard(flags));
}

/** A `name=cs` argument's parts; `$VAR` names an environment variable, so the secret stays off the command line. */
function parseShard(text: string): [string, string] {
  const at = text.indexOf("=");
  if (at <= 0) throw new UsageError("a shard is given as name=<connection string> (or name=$VAR)");
  const name = text.slice(0, at);
  let cs = text.slice(at + 1);
  if (cs.startsWith("$")) {
    const value = process.env[cs.slice(1)];
    if (value === undefined || value === "")
      throw new UsageError(`the environment variable ${cs.slice(1)} is not set`);
    cs = value;
  }
  // Every connection string is a list of key=value pairs: without one, the name was left out.
  if (!cs.includes("=")) {
    throw new UsageError(
      `a shard is given as name=<connection string>; '${name}' has no connection string after it`,
    );
  }
  return [name, cs];
}

async function runReshard(flags: ReshardFlags): Promise<void> {
  const shards = Object.fromEntries(
    flags.shard.map(parseShard).map(([name, cs]) => [name, AzureStore.fromConnectionString(cs)]),
  );
  const [name, cs] = parseShard(flags.add);
  if (name in shards) throw new UsageError(`shard '${name}' is already one of the --shard list`);
  const store = new ShardedStore({ shards, directory: flags.directory });
  const live = flags.quiet !== true && process.stderr.isTTY === true;
  const show = (p: ReshardProgress): void => {
    if (flags.quiet === true) return;
    const line =
      `tablekit reshard: ${p.partitions}/${p.totalPartitions} partitions, ${p.rows.toLocaleString("en-US")} rows, ` +
      `longest stall ${p.longestStallMs.toFixed(0)} ms`;
    // On a terminal one line redrawn in place; otherwise a line at the start and one per 100 partitions.
    if (live) process.stderr.write(`\r${line}\u001b[K`);
    else if (p.step === "start" || (p.step === "moved" && p.partitions % 100 === 0))
      process.stderr.write(`${line}\n`);
  };
  const started = performance.now();
  const result = await store.addShard(name, AzureStore.fromConnectionString(cs), { onProgress: show });
  if (live) process.stderr.write("\r\u001b[K");
  if (flags.quiet === true) return;
  const seconds = (performance.now() - started) / 1000;
  process.stderr.write(
    `tablekit reshard: added shard ${name} (map version ${result.version}): moved ${result.partitions} partitions, ` +
      `${result.rows} rows in ${seconds.toFixed(1)} s (${Math.round(result.rows / Math.max(seconds, 0.001))} rows/s), ` +
      `longest write stall ${result.longestStallMs.toFixed(1)} ms\n`,
  );
}
