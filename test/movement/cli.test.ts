import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { TableClient, TableServiceClient } from "@azure/data-tables";
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

/** A port nothing listens on: one the system just gave out and was closed again. */
function freePort(): Promise<number> {
  const server = createServer();
  return new Promise((done) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    }),
  );
}

/** The first line of `stream` that matches `pattern` (waits for it). */
function firstLineMatching(stream: Readable, pattern: RegExp): Promise<string> {
  let text = "";
  return new Promise((done) => {
    stream.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
      const line = text.split("\n").find((l, i, all) => i < all.length - 1 && pattern.test(l));
      if (line !== undefined) done(line);
    });
  });
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
    expect(run.stderr).toMatch(
      /line 10, PartitionKey 'p', RowKey 'a#b': RowKey 'a#b' contains a forbidden character/,
    );
    expect(run.stderr).toMatch(/line 12, PartitionKey .p., RowKey .r1.: 409 EntityAlreadyExists/);
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

  test("a failed export (missing table) leaves no file, and an older file of that name as it was", async () => {
    const out = join(dir, "missing-export");
    mkdirSync(out);
    const fresh = join(out, "fresh.ndjson");
    const failed = await tablekit(["export", "--table", "NoSuchTable", "--out", fresh]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(
      /^tablekit export: GET \/devstoreaccount1\/NoSuchTable\(\) failed: 404 TableNotFound/m,
    );
    expect(failed.stderr).not.toContain("tablekit: tablekit");
    const older = join(out, "older.ndjson");
    writeFileSync(older, "kept\n");
    expect((await tablekit(["export", "--table", "NoSuchTable", "--out", older])).code).toBe(1);
    expect(readFileSync(older, "utf8")).toBe("kept\n");
    // No temporary left beside them either.
    expect(readdirSync(out)).toEqual(["older.ndjson"]);
  });

  test("copy from a missing source table, or import of a missing file, creates no table", async () => {
    const run = await tablekit(["copy", "--table", "NoSuchSource", "--to", target.connectionString]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("tablekit copy: the source table NoSuchSource does not exist");
    const missing = join(dir, "no-such-file.ndjson");
    const imported = await tablekit(["import", missing, "--table", "NoSuchInput", "--create-table"]);
    expect(imported.code).toBe(1);
    expect(imported.stderr).toBe(`tablekit import: cannot read ${missing} (ENOENT); nothing was imported\n`);
    const names = async (cs: string) => {
      const found: string[] = [];
      const service = TableServiceClient.fromConnectionString(cs, { allowInsecureConnection: true });
      for await (const table of service.listTables()) found.push(table.name ?? "");
      return found;
    };
    expect(await names(target.connectionString)).not.toContain("NoSuchSource");
    expect(await names(source.connectionString)).not.toContain("NoSuchInput");
  });

  test("insert over existing rows: the first refusals by key, then the rest counted by code", async () => {
    const rows = Array.from({ length: 40 }, (_, i) => `{"PartitionKey":"p${i % 3}","RowKey":"r${i}"}`);
    const file = join(dir, "twice.ndjson");
    writeFileSync(file, `${rows.join("\n")}\n`);
    const args = ["import", file, "--table", "Twice", "--create-table", "--mode", "insert"];
    expect((await tablekit(args)).code).toBe(0);
    const again = await tablekit(args);
    expect(again.code).toBe(1);
    const lines = again.stderr.trimEnd().split("\n");
    const refusals = lines.filter((l) =>
      / PartitionKey 'p\d', RowKey 'r\d+': 409 EntityAlreadyExists/.test(l),
    );
    expect(refusals).toHaveLength(10);
    expect(lines.slice(10)).toEqual([
      "tablekit import: … and 30 more",
      "tablekit import: failed by code: 409 EntityAlreadyExists (40)",
      expect.stringMatching(/^tablekit import: 0 rows imported into Twice, 40 failed \(lines /),
    ]);
  });

  test("a refused connection is said from the first retry on", async () => {
    const closed = await freePort();
    const child = spawn(process.execPath, ["--import", "tsx", CLI, "export", "--table", "T"], {
      env: {
        ...process.env,
        TABLEKIT_CONNECTION_STRING: `TableEndpoint=http://127.0.0.1:${closed}/acct;SharedAccessSignature=sv=1&sig=${"c2ln".repeat(8)}`,
      },
      stdio: ["ignore", "ignore", "pipe"],
    });
    const line = await firstLineMatching(child.stderr, /retry 1 of/);
    child.kill("SIGKILL");
    expect(line).toBe(
      `tablekit export: GET /acct/T() to http://127.0.0.1:${closed} failed (ECONNREFUSED); retry 1 of 7 in 0.1 s`,
    );
  });

  test("a host name that does not resolve fails at once, without retries", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", CLI, "export", "--table", "T"], {
      env: {
        ...process.env,
        // .invalid never resolves (RFC 2606).
        TABLEKIT_CONNECTION_STRING: `TableEndpoint=https://tablekit-test.invalid;SharedAccessSignature=sv=1&sig=${"c2ln".repeat(8)}`,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString("utf8");
    });
    const code = await new Promise<number | null>((done) => child.once("close", done));
    expect(code).toBe(1);
    expect(stderr).toBe(
      "tablekit export: GET /T() to https://tablekit-test.invalid failed: the host name does not resolve (ENOTFOUND); check the connection string's endpoint\n",
    );
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
