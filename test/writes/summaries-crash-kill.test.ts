/**
 * Summaries under real process deaths: a child process (summaries-crash-writer.ts) doing single and
 * bulk writes on an entity with a same-partition summary is killed with SIGKILL at seeded points (a
 * chosen request, before which it freezes: not where the machine's load puts the kill). A summary
 * row changes in the same entity group transaction as its entities, so whatever request the kill
 * lands before, every summary must equal a recount of its partition's rows, with nothing to repair.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TableContext } from "../../src/repository/facade/table-context.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import type { TableStore } from "../../src/store/table-store.js";
import { uniquePrefix } from "../fixtures/context.js";
import { rowsOf } from "../indexes/helpers.js";
import { azuriteConnectionString, createAzuriteStore } from "../support/azurite.js";
import { bundleChild, type ChildScript, type StartedChild, tempStoreFile } from "../support/kill-child.js";
import { seededRandom, testSeed } from "../support/seeded-random.js";
import { azuriteSelected } from "../support/stores.js";
import { KILL_TEAMS, KillMember } from "./summaries-crash-models.js";

const SEED = testSeed(0x5a11);
/** Each kill is a child process: enough to land inside single and bulk writes, few enough for 2 cores. */
const KILLS = 8;
/** A safety net for a loaded machine (a child process per kill), not a performance limit. */
const SAFETY_NET = { timeout: 300_000 };

let writer: ChildScript;
beforeAll(async () => {
  writer = await bundleChild("test/writes/summaries-crash-writer.ts");
});
afterAll(() => writer?.dispose());

interface Target {
  argument: string;
  open(): TableStore;
}

/** A team's summary recounted from its rows as stored. */
async function recount(store: TableStore, table: string, team: string) {
  const rows = (await rowsOf(store, table)).filter(
    (row) => row.team === team && row.rowKey.startsWith("id_"),
  );
  return {
    members: rows.length,
    payroll: rows.reduce((sum, row) => sum + Number(row.salary), 0),
    bonuses: rows.reduce((sum, row) => sum + (typeof row.bonus === "bigint" ? row.bonus : 0n), 0n),
  };
}

async function runCrashTest(target: Target, seed: number): Promise<{ lines: number; transactions: number }> {
  const prefix = uniquePrefix("sk");
  const table = `${prefix}KillStaff`;
  await new TableContext({ store: target.open(), tablePrefix: prefix }).ensureTables(KillMember);
  const chooser = seededRandom(seed);
  const stops = Array.from({ length: KILLS }, () => 1 + Math.floor(chooser() * 60));
  const child = (run: number) =>
    writer.start([target.argument, prefix, String(seed * 100 + run)], stops[run - 1] as number);
  let lines = 0;
  let transactions = 0;
  // The next child starts (loading its modules) while the current one runs and is checked.
  let next: StartedChild | undefined = child(1);
  try {
    for (let run = 1; run <= KILLS; run++) {
      const current = next as StartedChild;
      next = run < KILLS ? child(run + 1) : undefined;
      const said = await current.go();
      const where = `run ${run} (seed ${seed}, killed before request ${stops[run - 1]}: '${said.at(-1)}')`;
      expect(said, where).toHaveLength(stops[run - 1] as number);
      lines += said.length;
      transactions += said.filter((line) => line.includes(" submitTransaction ")).length;

      const db = new TableContext({ store: target.open(), tablePrefix: prefix });
      const members = db.repository(KillMember);
      for (const team of KILL_TEAMS) {
        const summary = await members.summary("perTeam", { team });
        expect(summary, `${where}: ${team}`).toEqual(await recount(db.store, table, team));
      }
      expect(await db.verifySummaries(KillMember), where).toEqual([]);
      // Nothing was left half-done for repair: the summary moved with its entities, or not at all.
      expect(await db.repair({ entities: [KillMember] }), where).toMatchObject({
        indexes: { intentsReplayed: 0 },
        eventually: { replayed: 0 },
      });
    }
  } finally {
    next?.discard();
  }
  return { lines, transactions };
}

describe("summaries after SIGKILL at seeded requests of single and bulk writes", () => {
  it(`on a MemoryStore file: every summary equals a recount (seed ${SEED})`, SAFETY_NET, async () => {
    const { file, cleanup } = tempStoreFile("summaries-crash");
    try {
      const seen = await runCrashTest({ argument: file, open: () => new MemoryStore({ file }) }, SEED);
      console.log(
        `[summaries crash test] memory file (seed ${SEED}): ${KILLS} kills, ${JSON.stringify(seen)}`,
      );
      expect(seen.transactions).toBeGreaterThan(0);
    } finally {
      cleanup();
    }
  });

  it.skipIf(!azuriteSelected)(
    `on Azurite: every summary equals a recount (seed ${SEED}) (needs Azurite: TABLEKIT_STORES leaves it out)`,
    SAFETY_NET,
    async () => {
      const store = createAzuriteStore();
      const seen = await runCrashTest({ argument: azuriteConnectionString(), open: () => store }, SEED + 1);
      console.log(
        `[summaries crash test] azurite (seed ${SEED + 1}): ${KILLS} kills, ${JSON.stringify(seen)}`,
      );
      expect(seen.transactions).toBeGreaterThan(0);
    },
  );
});
