import { spawn } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, test } from "vitest";
import { AzureStore, ShardedStore, startTableServer, type TableServer } from "../../src/index.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const CLI = resolve(ROOT, "src/cli/main.ts");

/** Runs the CLI as a child (asynchronously: the servers it talks to live in this process). */
function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ["--import", "tsx", CLI, ...args], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    child.on("close", (code) => done({ code, stderr }));
  });
}

describe("tablekit reshard", () => {
  const servers: TableServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  test("adds shard d over four `tablekit serve` accounts, reporting partitions, rows and the longest stall", async () => {
    servers.push(...(await Promise.all(["a", "b", "c", "d"].map(() => startTableServer({ port: 0 })))));
    const cs = Object.fromEntries(
      ["a", "b", "c", "d"].map((n, i) => [n, (servers[i] as TableServer).connectionString]),
    );
    const connect = (names: string[]) =>
      new ShardedStore({
        shards: Object.fromEntries(names.map((n) => [n, AzureStore.fromConnectionString(cs[n] as string)])),
      });
    const before = connect(["a", "b", "c"]);
    await before.createTable("Reshard");
    for (let p = 0; p < 24; p++) await before.insert("Reshard", { partitionKey: `p${p}`, rowKey: "r", n: p });

    const env = Object.fromEntries(Object.entries(cs).map(([n, s]) => [`SHARD_${n.toUpperCase()}`, s]));
    const result = await run(
      [
        "reshard",
        "--shard",
        "a=$SHARD_A",
        "--shard",
        "b=$SHARD_B",
        "--shard",
        "c=$SHARD_C",
        "--add",
        "d=$SHARD_D",
      ],
      env,
    );
    expect(result.stderr).toMatch(
      /added shard d \(map version 2\): moved \d+ partitions, \d+ rows .* longest write stall/,
    );
    expect(result.code).toBe(0);
    // The account key never reaches the output.
    expect(result.stderr).not.toContain("AccountKey");
    const moved = Number(/moved (\d+) partitions/.exec(result.stderr)?.[1]);
    const after = connect(["a", "b", "c", "d"]);
    let onD = 0;
    for (let p = 0; p < 24; p++) {
      expect((await after.getEntity("Reshard", `p${p}`, "r"))?.n).toBe(p);
      if ((await after.shardOf("Reshard", `p${p}`)) === "d") onD++;
    }
    expect(onD).toBe(moved);
    expect(moved).toBeGreaterThan(0);
  });

  test("refuses a shard given without a name", async () => {
    const result = await run(["reshard", "--shard", "UseDevelopmentStorage=true", "--add", "x"], {});
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("name=<connection string>");
    expect(result.stderr).not.toContain("true");
  });
});
