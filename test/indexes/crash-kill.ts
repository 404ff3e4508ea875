import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import type { RepairResult } from "../../src/index.js";
import { TableContext } from "../../src/repository/facade/table-context.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import type { TableStore } from "../../src/store/table-store.js";
import { uniquePrefix } from "../fixtures/context.js";
import { azuriteConnectionString, createAzuriteStore } from "../support/azurite.js";
import { seededRandom } from "../support/seeded-random.js";
import { CRASH_KEYS } from "./crash-protocol.js";
import { expectNoDrift, rowsOf, tablesOf } from "./helpers.js";
import { RxEmployee, rxEmployee, valuesOf } from "./models.js";

/**
 * The crash test: a child process (crash-writer.ts) doing indexed writes in a loop is
 * killed with SIGKILL at seeded points (after a chosen number of its progress lines, where the child
 * freezes until the kill: no timers, no race with the machine's load); after each kill, `repairIndexes` (no scan) must leave no intent and no drift, and
 * every key must hold exactly what the child last reported committed, or exactly what its
 * interrupted write was writing (never a mix).
 */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const WRITER = "test/indexes/crash-writer.ts";

/** A key's state: absent, or present at a version. */
type KeyState = { exists: false } | { exists: true; version: number };

/** Where the child writes. */
export interface CrashTarget {
  name: string;
  kills: number;
  /** What the child is given to reach the store. */
  argument: string;
  /** A store over the same data, opened after the child died. */
  open(): TableStore;
  cleanup(): void;
}

/** Azurite, reached by the child through `AzureStore.fromConnectionString`. */
export function azuriteTarget(kills: number): CrashTarget {
  const store = createAzuriteStore();
  return {
    name: "azurite",
    kills,
    argument: azuriteConnectionString(),
    open: () => store,
    cleanup: () => {},
  };
}

/** A file-backed MemoryStore: what the child appended survives it. */
export function memoryFileTarget(kills: number): CrashTarget {
  const file = join(tmpdir(), `tablekit-crash-${process.pid}-${randomBytes(4).toString("hex")}.jsonl`);
  return {
    name: "memory file",
    kills,
    argument: file,
    // A new store reads what the dead child appended (a torn last line is not committed).
    open: () => new MemoryStore({ file }),
    // The file, and any compaction temp file (`<file>.<pid>.tmp`) a child was killed in the middle of.
    cleanup: () => {
      for (const name of readdirSync(dirname(file)))
        if (name.startsWith(basename(file))) rmSync(join(dirname(file), name), { force: true });
    },
  };
}

/** What a crash test run saw. */
export interface CrashSummary {
  kills: number;
  /** Progress lines the children printed, in all: exactly the sum of the chosen kill points. */
  linesSeen: number;
  /** The sum of the chosen kill points. */
  linesChosen: number;
  requestsSeen: number;
  /** Kills after which repair found an unfinished intent (the kill landed inside index work). */
  killsWithWork: number;
  totals: RepairResult;
  /** A one-line report for the log. */
  text: string;
}

/** Runs the kill loop against one target (kill points drawn from `seed`); returns what it saw. */
export async function runCrashTest(target: CrashTarget, seed: number): Promise<CrashSummary> {
  try {
    const prefix = uniquePrefix();
    const tables = tablesOf(prefix);
    const setup = new TableContext({ store: target.open(), tablePrefix: prefix });
    await setup.ensureTables(RxEmployee);

    const started = Date.now();
    const chooser = seededRandom(seed);
    let known = new Map<string, KeyState>(CRASH_KEYS.map(([d, id]) => [`${d}/${id}`, { exists: false }]));
    const totals: RepairResult = { intentsReplayed: 0, copiesWritten: 0, copiesDeleted: 0, poisoned: 0 };
    let killsWithWork = 0;
    let linesSeen = 0;
    let linesChosen = 0;
    let requestsSeen = 0;

    for (let run = 1; run <= target.kills; run++) {
      // Up to ~10 writes' worth of lines: the kill lands at any request of any write.
      const killAfter = 1 + Math.floor(chooser() * 80);
      const lines = await runAndKill(target.argument, run, prefix, killAfter);
      // The child froze after exactly that line: the kill landed where it was meant to.
      expect(lines, `run ${run}`).toHaveLength(killAfter);
      linesSeen += lines.length;
      linesChosen += killAfter;
      requestsSeen += lines.filter((line) => line.startsWith("request ")).length;

      // After the kill: what the child said it committed, and what it was in the middle of.
      const committed = new Map(known);
      const inFlight = new Map<string, KeyState>();
      for (const line of lines) {
        const [what, ...rest] = line.split(" ");
        if (what === "request") continue;
        if (what === "begin") {
          const [op, key, version] = rest as [string, string, string | undefined];
          inFlight.set(key, op === "delete" ? { exists: false } : { exists: true, version: Number(version) });
        } else if (what === "committed" || what === "deleted") {
          const [key, version] = rest as [string, string | undefined];
          committed.set(
            key,
            what === "deleted" ? { exists: false } : { exists: true, version: Number(version) },
          );
          inFlight.delete(key);
        } else throw new Error(`unexpected line from the writer: ${line}`);
      }

      const db = new TableContext({ store: target.open(), tablePrefix: prefix });
      const repair = await db.repairIndexes(RxEmployee);
      for (const k of Object.keys(totals) as Array<keyof RepairResult>) totals[k] += repair[k];
      if (repair.intentsReplayed > 0) killsWithWork++;
      const where = `run ${run} (killed after ${killAfter} lines)`;
      expect(repair.poisoned, where).toBe(0);
      expect(await rowsOf(db.store, tables.intents), where).toEqual([]);
      await expectNoDrift(db);

      const employees = db.repository(RxEmployee);
      const observed = new Map<string, KeyState>();
      for (const [department, employeeId] of CRASH_KEYS) {
        const key = `${department}/${employeeId}`;
        const e = await employees.get({ department, employeeId });
        const state: KeyState = e ? { exists: true, version: e.version } : { exists: false };
        const allowed = [committed.get(key), inFlight.get(key)].filter((s) => s !== undefined);
        expect(allowed, `${where}: ${key}`).toContainEqual(state);
        // Whole: every value is the one of its version (old or new, never a mix).
        if (e)
          expect(valuesOf(e), `${where}: ${key}`).toEqual(
            valuesOf(rxEmployee(department, employeeId, e.version)),
          );
        observed.set(key, state);
      }
      known = observed;
    }

    // Nothing is left for a full scan to find either.
    const db = new TableContext({ store: target.open(), tablePrefix: prefix });
    expect(await db.repairIndexes(RxEmployee, { scan: true })).toEqual({
      intentsReplayed: 0,
      copiesWritten: 0,
      copiesDeleted: 0,
      poisoned: 0,
    });
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const text =
      `[crash test] ${target.name} (seed ${seed}): ${target.kills} kills in ${seconds}s, ${linesSeen} progress lines ` +
      `(${requestsSeen} requests); ${killsWithWork} kills left unfinished intents; repair totals ${JSON.stringify(totals)}`;
    return { kills: target.kills, linesSeen, linesChosen, requestsSeen, killsWithWork, totals, text };
  } finally {
    target.cleanup();
  }
}

/** Starts the writer, kills it with SIGKILL once it has printed `killAfter` lines (then it is frozen), returns its lines. */
function runAndKill(argument: string, seed: number, prefix: string, killAfter: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const args = ["--import", "tsx", WRITER, argument, String(seed), prefix, String(killAfter)];
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
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
