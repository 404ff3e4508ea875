/**
 * The large-value crash test: a child process (crash-writer.ts) writing entities with large
 * columns is killed with SIGKILL at seeded points (after a chosen number of its progress lines, where
 * it freezes until the kill: any request of any write, table or blob). After each kill, repair must
 * leave zero unreferenced blobs, and every entity must read back whole (no reference to a missing
 * blob), at the version the child last committed or the one it was writing.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { TableContext } from "../../src/repository/facade/table-context.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import type { BlobStore, TableStore } from "../../src/store/table-store.js";
import { uniquePrefix } from "../fixtures/context.js";
import { azuriteConnectionString, createAzuriteStore } from "../support/azurite.js";
import { seededRandom, testSeed } from "../support/seeded-random.js";
import { azuriteSelected } from "../support/stores.js";
import { CRASH_DOC_KEYS, CrashDoc, crashDoc } from "./crash-models.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const WRITER = "test/large/crash-writer.ts";
const SEED = testSeed(0xb10b);
/** Each kill spawns a child Node process: enough to land on every step of a write, few enough for 2 cores. */
const KILLS = 8;

type KeyState = { exists: false } | { exists: true; version: number };

interface Target {
  argument: string;
  open(): TableStore;
  cleanup(): void;
}

async function runCrashTest(
  target: Target,
  seed: number,
): Promise<{ orphansRemoved: number; kills: number }> {
  const prefix = uniquePrefix("lc");
  const table = `${prefix}CrashDocs`;
  const container = `tablekit-${table.toLowerCase()}`;
  await new TableContext({ store: target.open(), tablePrefix: prefix }).ensureTables(CrashDoc);
  const chooser = seededRandom(seed);
  let known = new Map<string, KeyState>(CRASH_DOC_KEYS.map(([f, n]) => [`${f}/${n}`, { exists: false }]));
  let orphansRemoved = 0;
  for (let run = 1; run <= KILLS; run++) {
    const killAfter = 1 + Math.floor(chooser() * 60);
    const lines = await runAndKill(target.argument, seed * 100 + run, prefix, killAfter);
    const where = `run ${run} (killed after ${killAfter} lines: '${lines[lines.length - 1]}')`;
    expect(lines, where).toHaveLength(killAfter);
    const committed = new Map(known);
    const inFlight = new Map<string, KeyState>();
    for (const line of lines) {
      const [what, ...rest] = line.split(" ");
      if (what === "request") continue;
      if (what === "begin") {
        const [op, key, version] = rest as [string, string, string | undefined];
        inFlight.set(key, op === "delete" ? { exists: false } : { exists: true, version: Number(version) });
      } else {
        const [key, version] = rest as [string, string | undefined];
        committed.set(
          key,
          what === "deleted" ? { exists: false } : { exists: true, version: Number(version) },
        );
        inFlight.delete(key);
      }
    }

    const store = target.open();
    const db = new TableContext({ store, tablePrefix: prefix });
    orphansRemoved += (await db.repairLargeValues(CrashDoc)).blobsDeleted;
    const docs = db.repository(CrashDoc);
    const referenced: string[] = [];
    const observed = new Map<string, KeyState>();
    for (const [folder, name] of CRASH_DOC_KEYS) {
      const key = `${folder}/${name}`;
      const doc = await docs.get({ folder, name });
      const state: KeyState = doc ? { exists: true, version: doc.version } : { exists: false };
      const allowed = [committed.get(key), inFlight.get(key)].filter((s) => s !== undefined);
      expect(allowed, `${where}: ${key}`).toContainEqual(state);
      if (doc) {
        // Whole: both large values are those of its version (read from their blobs).
        const expected = crashDoc(folder, name, doc.version);
        expect(doc.text, `${where}: ${key}`).toBe(expected.text);
        expect(doc.content && Buffer.from(doc.content).toString("hex"), `${where}: ${key}`).toBe(
          expected.content && Buffer.from(expected.content).toString("hex"),
        );
        const row = await store.getEntity(table, folder, name);
        for (const property of ["text", "content"]) {
          const reference = row?.[property];
          if (reference !== undefined) referenced.push(String(reference).split(":").slice(2).join(":"));
        }
      }
      observed.set(key, state);
    }
    // Zero unreferenced blobs: the container holds exactly the blobs the rows point at.
    const blobs = (await (store.blobs as BlobStore).list(container)).items.map((b) => b.name);
    expect(blobs.sort(), where).toEqual(referenced.sort());
    known = observed;
  }
  return { orphansRemoved, kills: KILLS };
}

function runAndKill(argument: string, seed: number, prefix: string, killAfter: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const args = ["--import", "tsx", WRITER, argument, String(seed), prefix, String(killAfter)];
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    const lines: string[] = [];
    let stderr = "";
    let killed = false;
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    createInterface({ input: child.stdout }).on("line", (line) => {
      lines.push(line);
      if (!killed && lines.length >= killAfter) {
        killed = true;
        child.kill("SIGKILL");
      }
    });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (signal === "SIGKILL" && killed) resolve(lines);
      else reject(new Error(`the writer exited by itself (code ${code}, signal ${signal}): ${stderr}`));
    });
  });
}

/**
 * A safety net for a loaded 2-core machine (each kill starts a child process), not a performance
 * limit: the test asserts only what repair leaves behind.
 */
const CRASH_TEST_SAFETY_MS = 300_000;

it(
  `SIGKILL mid-write on a MemoryStore file: repair leaves zero unreferenced blobs, every entity whole (seed ${SEED})`,
  async () => {
    const file = join(
      tmpdir(),
      `tablekit-large-crash-${process.pid}-${randomBytes(4).toString("hex")}.jsonl`,
    );
    try {
      const result = await runCrashTest(
        { argument: file, open: () => new MemoryStore({ file }), cleanup: () => {} },
        SEED,
      );
      console.log(
        `[large crash test] memory file (seed ${SEED}): ${result.kills} kills, ${result.orphansRemoved} orphans removed`,
      );
    } finally {
      for (const name of readdirSync(dirname(file)))
        if (name.startsWith(basename(file))) rmSync(join(dirname(file), name), { force: true });
    }
  },
  CRASH_TEST_SAFETY_MS,
);

describe.skipIf(!azuriteSelected)(
  "large-value crash test on Azurite (needs Azurite: TABLEKIT_STORES leaves it out)",
  () => {
    it(
      `SIGKILL mid-write on Azurite table + blob: repair leaves zero unreferenced blobs, every entity whole (seed ${SEED})`,
      async () => {
        const store = createAzuriteStore();
        const result = await runCrashTest(
          { argument: azuriteConnectionString(), open: () => store, cleanup: () => {} },
          SEED,
        );
        console.log(
          `[large crash test] azurite (seed ${SEED}): ${result.kills} kills, ${result.orphansRemoved} orphans removed`,
        );
      },
      CRASH_TEST_SAFETY_MS,
    );
  },
);
