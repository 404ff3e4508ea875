import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { TableClient } from "@azure/data-tables";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startTableServer, type TableServer } from "../../src/server/table-server.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { edgeLines } from "./edge-rows.js";

// The four data movement commands as a user runs them: exit codes, messages, files.
const CLI = resolve(dirname(fileURLToPath(import.meta.url)), "../../src/cli/main.ts");
const dir = mkdtempSync(join(tmpdir(), "tablekit-movement-cli-"));
let source: TableServer;
let target: TableServer;

beforeAll(async () => {
  [source, target] = await Promise.all([
    startTableServer({ port: 0, store: new MemoryStore() }),
    startTableServer({ port: 0, store: new MemoryStore() }),
  ]);
});
afterAll(async () => {
  await Promise.all([source?.close(), target?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `tablekit …` against the source server (by environment variable); its code and output. */
function tablekit(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", CLI, ...args], {
    env: { ...process.env, TABLEKIT_CONNECTION_STRING: source.connectionString },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => {
    stdout += c.toString("utf8");
  });
  child.stderr.on("data", (c: Buffer) => {
    stderr += c.toString("utf8");
  });
  return new Promise((done) => child.once("close", (code) => done({ code, stdout, stderr })));
}

describe("tablekit import/export/copy/verify (CLI)", () => {
  test("import: a broken line and a refused one are reported by number, the rest is imported, exit 1", async () => {
    const lines = Array.from(
      { length: 12 },
      (_, i) => `{"PartitionKey":"p","RowKey":"r${i + 1}","n":${i + 1}}`,
    );
    lines[4] = '{"PartitionKey":"p","RowKey":'; // line 5: broken JSON
    lines[9] = '{"PartitionKey":"p","RowKey":"a#b"}'; // line 10: a key the service refuses
    lines[11] = '{"PartitionKey":"p","RowKey":"r1","n":99}'; // line 12: r1 again, refused in insert mode
    const file = join(dir, "broken.ndjson");
    writeFileSync(file, `${lines.join("\n")}\n`);
    const errors = join(dir, "errors.ndjson");
    const run = await tablekit([
      "import",
      file,
      "--table",
      "Broken",
      "--create-table",
      "--mode",
      "insert",
      "--errors",
      errors,
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/line 5: malformed JSON/);
    expect(run.stderr).toMatch(/line 10: RowKey 'a#b' contains a forbidden character/);
    expect(run.stderr).toMatch(/line 12: 409 EntityAlreadyExists/);
    expect(run.stderr).toContain("9 rows imported into Broken, 3 failed (lines 5, 10, 12)");
    const reported = readFileSync(errors, "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { line: number; text: string });
    expect(reported.map((r) => r.line).sort((a, b) => a - b)).toEqual([5, 10, 12]);
    expect(reported.find((r) => r.line === 5)?.text).toBe(lines[4]);
    const table = TableClient.fromConnectionString(source.connectionString, "Broken", {
      allowInsecureConnection: true,
    });
    let count = 0;
    for await (const _ of table.listEntities()) count++;
    expect(count).toBe(9);
    expect((await table.getEntity<{ n: number }>("p", "r1")).n).toBe(1);
  });

  test("export --all, import --all, verify --all; copy; verify names a changed value", async () => {
    const file = join(dir, "edges.ndjson");
    writeFileSync(file, `${edgeLines().join("\n")}\n`);
    expect((await tablekit(["import", file, "--table", "Edges", "--create-table", "--quiet"])).code).toBe(0);
    const backup = join(dir, "backup");
    const exported = await tablekit(["export", "--all", "--out", backup, "--gzip"]);
    expect(exported.code).toBe(0);
    expect(exported.stderr).toMatch(/tablekit export: \d+ rows from \d+ tables/);
    const restored = await tablekit([
      "import",
      "--all",
      backup,
      "--connection-string",
      target.connectionString,
    ]);
    expect(restored.code).toBe(0);
    const all = await tablekit(["verify", "--all", "--to", target.connectionString]);
    expect(all.stderr).toContain("tablekit verify: equal");
    expect(all.code).toBe(0);

    const toEdgesCopy = ["--table", "Edges", "--to", target.connectionString, "--to-table", "EdgesCopy"];
    const copied = await tablekit(["copy", ...toEdgesCopy]);
    expect(copied.code).toBe(0);
    expect(copied.stderr).toContain(`${edgeLines().length} rows copied`);
    const changed = TableClient.fromConnectionString(target.connectionString, "EdgesCopy", {
      allowInsecureConnection: true,
    });
    await changed.updateEntity(
      { partitionKey: "edges", rowKey: "int64", min: { type: "Int64", value: "-9223372036854775807" } },
      "Merge",
    );
    const verify = await tablekit(["verify", ...toEdgesCopy]);
    expect(verify.code).toBe(1);
    expect(verify.stdout).toContain(
      `Edges PartitionKey="edges" RowKey="int64": 'min' differs: "-9223372036854775808" vs "-9223372036854775807"`,
    );
    expect(verify.stdout).toContain("1 different, 0 only on the first side, 0 only on the second side");
  });

  test("option errors print the usage and exit 2", async () => {
    const run = await tablekit(["import", "x.ndjson", "--table", "T", "--mode", "merge"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("Allowed choices are upsert, replace, insert");
    const neither = await tablekit(["export"]);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain("give --table NAME or --all");
  });
});
