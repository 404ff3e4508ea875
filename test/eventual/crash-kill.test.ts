/**
 * The archive-move crash test with real process deaths: a child process (crash-mover.ts)
 * runs one `db.eventually` archive move (a delete, an insert in another table, an indexed update, a
 * blind upsert and an insert with a same-partition summary) and is killed with SIGKILL before each
 * request of the move's protocol in turn, and once after it resolved. The child counts its own
 * requests and freezes at the chosen one, so each kill lands where it was meant to, not where the
 * machine's load puts it. After each kill a fresh context (what a restarted process has) runs
 * `db.repair()`: no intent is left, no index drifts, the summary equals a recount, and every entity of
 * the move is exactly as before it (killed before its intent was recorded) or exactly as after it:
 * zero lost, zero duplicated, no step met a conflict (none applied twice with a different result).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TableContext, type TableKitEvent } from "../../src/index.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import type { TableStore } from "../../src/store/table-store.js";
import { uniquePrefix } from "../fixtures/context.js";
import { expectNoDrift, rowsOf } from "../indexes/helpers.js";
import { RxEmployee } from "../indexes/models.js";
import { azuriteConnectionString, createAzuriteStore } from "../support/azurite.js";
import { bundleChild, type ChildScript, type StartedChild, tempStoreFile } from "../support/kill-child.js";
import { azuriteSelected } from "../support/stores.js";
import { expectNoIntents } from "./harness.js";
import { ManualTimers } from "./manual-timers.js";
import { ArchivedEmployee, CurrentEmployee, Departure, departure } from "./models.js";
import { MOVE, movedEmployee } from "./move.js";

let mover: ChildScript;
beforeAll(async () => {
  mover = await bundleChild("test/eventual/crash-mover.ts");
});
afterAll(() => mover?.dispose());
const YEAR = 2026;
/** A safety net for a loaded machine (a child process per kill), not a performance limit. */
const SAFETY_NET = { timeout: 300_000 };

/** Where the child moves: what it is given, and a store over the same data opened after it died. */
interface Target {
  argument: string;
  open(): TableStore;
}

/** The protocol of one move, learnt from a child that ran it to the end. */
interface Protocol {
  /** The request lines, in order. */
  requests: string[];
  /** The 1-based number of the request recording the eventual intent: kills up to it leave nothing to finish. */
  intentAt: number;
}

/** The move's entities, the departure record included. */
async function stateOf(db: TableContext, id: number) {
  const d = await db.repository(Departure).get({ year: YEAR, employeeId: id });
  return { ...(await MOVE.state(db, id)), departure: d && { ...d } };
}
const before = (id: number) => ({ ...MOVE.before(id), departure: undefined });
const after = (id: number) => ({ ...MOVE.after(id), departure: { ...departure(movedEmployee(id), YEAR) } });

/** The departures summary recounted from the rows as stored. */
async function recount(store: TableStore, prefix: string) {
  const rows = (await rowsOf(store, `${prefix}EvDepartures`)).filter(
    (row) => row.year === YEAR && row.rowKey.startsWith("d_"),
  );
  return { departures: rows.length, payroll: rows.reduce((sum, row) => sum + Number(row.salary), 0) };
}

async function expectSummaryExact(db: TableContext, prefix: string, where: string): Promise<void> {
  expect(await db.repository(Departure).summary("perYear", { year: YEAR }), where).toEqual(
    await recount(db.store, prefix),
  );
  expect(await db.verifySummaries(Departure), where).toEqual([]);
}

/** Prepares the tables and learns the protocol from one move run to its end (id 1). */
async function learnProtocol(target: Target, prefix: string): Promise<Protocol> {
  const setup = new TableContext({ store: target.open(), tablePrefix: prefix });
  await setup.ensureTables(CurrentEmployee, ArchivedEmployee, RxEmployee, Departure);
  await MOVE.prepare(setup, 1);
  const lines = await mover.run([target.argument, prefix, "1"], 0);
  expect(lines.at(-1)).toBe("resolved");
  const requests = lines.slice(0, -1);
  const intents = `${prefix}TablekitIntents`;
  const intentAt = requests.findIndex((line) => line.endsWith(` upsert ${intents}`)) + 1;
  expect(intentAt, requests.join("\n")).toBeGreaterThan(0);
  // The eventual intent's removal is the last request.
  expect(requests.at(-1)).toBe(`request ${requests.length} delete ${intents}`);
  const db = new TableContext({ store: target.open(), tablePrefix: prefix });
  expect(await stateOf(db, 1)).toEqual(after(1));
  return { requests, intentAt };
}

/** A context as a restarted process has it: nothing tracked, the classes with indexes or summaries named. */
function restarted(
  store: TableStore,
  prefix: string,
  options: { now?: () => number; onEvent?: (e: TableKitEvent) => void } = {},
) {
  const db = new TableContext({ store, tablePrefix: prefix, ...options });
  db.repository(RxEmployee);
  db.repository(Departure);
  return db;
}

async function killAtEveryRequest(target: Target): Promise<{ kills: number; seconds: number }> {
  const started = Date.now();
  const prefix = uniquePrefix("ek");
  const protocol = await learnProtocol(target, prefix);
  const total = protocol.requests.length;
  const totals = { replayed: 0, applied: 0, alreadyDone: 0 };
  let store = target.open();
  const child = (at: number) => mover.start([target.argument, prefix, String(at + 1)], at);
  // The next child starts (loading its modules) while the current one runs and is checked.
  let next: StartedChild | undefined = child(1);
  try {
    // Before request 1, …, before request `total` (the intent's removal), and after the move resolved.
    for (let at = 1; at <= total + 1; at++) {
      const id = at + 1;
      const current = next as StartedChild;
      next = at <= total ? child(at + 1) : undefined;
      await MOVE.prepare(new TableContext({ store, tablePrefix: prefix }), id);
      const lines = await current.go();
      const where = `killed at line ${at} of ${total + 1} ('${lines.at(-1)}')`;
      // The child froze at the chosen line, having made exactly the requests the protocol starts with.
      expect(lines, where).toEqual([...protocol.requests, "resolved"].slice(0, at));

      store = target.open();
      const db = restarted(store, prefix);
      const report = await db.repair();
      const eventually = report.eventually ?? {};
      // The intent exists from its recording until its removal (the last request): exactly one to finish.
      const unfinished = at > protocol.intentAt && at <= total;
      expect(eventually, where).toMatchObject({
        replayed: unfinished ? 1 : 0,
        conflicts: 0,
        failed: 0,
        poisoned: 0,
        unknownTypes: 0,
      });
      expect(report.indexes, where).toMatchObject({ poisoned: 0, unknownTypes: 0 });
      await expectNoIntents(db, `${prefix}TablekitIntents`, where);
      await expectNoDrift(db);
      await expectSummaryExact(db, prefix, where);
      expect(await stateOf(db, id), where).toEqual(at > protocol.intentAt ? after(id) : before(id));
      totals.replayed += eventually.replayed ?? 0;
      totals.applied += eventually.applied ?? 0;
      totals.alreadyDone += eventually.alreadyDone ?? 0;
    }
  } finally {
    next?.discard();
  }
  // Every kill between the intent's recording and its removal left a move for repair to finish,
  // which applied the missing steps and recognised those the child had applied.
  expect(totals.replayed).toBe(total - protocol.intentAt);
  expect(totals.applied).toBeGreaterThan(0);
  expect(totals.alreadyDone).toBeGreaterThan(0);
  // Every move's summary contribution counted once: one departure per completed move.
  const db = restarted(store, prefix);
  const moved = (await Promise.all(Array.from({ length: total + 2 }, (_, i) => stateOf(db, i + 1)))).filter(
    (state) => state.departure !== undefined,
  ).length;
  expect(await db.repository(Departure).summary("perYear", { year: YEAR })).toMatchObject({
    departures: moved,
  });
  expect(moved).toBe(1 + total + 1 - protocol.intentAt);
  return { kills: total + 1, seconds: (Date.now() - started) / 1000 };
}

type PassEvent = Extract<TableKitEvent, { type: "repair-pass" }>;

/** Lets pending promise callbacks run until `done` holds (a bounded number of turns, no timers). */
async function until(done: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 1000 && !done(); turn++) await Promise.resolve();
  expect(done(), what).toBe(true);
}

/**
 * A move killed half-way (its first two steps applied; the indexed update has recorded its index
 * intent and written its copies, not its entity), finished by a repair worker: its first pass, while
 * both intents are younger than `minIntentAgeMs`, leaves them; the pass one interval later finishes
 * both; `stop()` during the next pass resolves once that pass has ended, and no pass runs after it.
 */
async function workerFinishesKilledMove(target: Target): Promise<void> {
  const prefix = uniquePrefix("ew");
  const protocol = await learnProtocol(target, prefix);
  const intents = `${prefix}TablekitIntents`;
  // Before the indexed entity's own transaction: its index intent and copies are written by then.
  const at =
    protocol.requests.findIndex((line) => line.endsWith(` submitTransaction ${prefix}RxEmployees`)) + 1;
  const done = protocol.requests.slice(protocol.intentAt, at - 1).join("\n");
  expect(done).toMatch(/ insert \S+EvArchive$/m);
  expect(done).toMatch(new RegExp(` upsert ${intents}$`, "m"));
  let store = target.open();
  await MOVE.prepare(new TableContext({ store, tablePrefix: prefix }), 2);
  await mover.run([target.argument, prefix, "2"], at);

  store = target.open();
  const [intent] = (await rowsOf(store, intents)).filter((row) => row.kind === "eventually");
  // The intent's RowKey starts with the time it was recorded: the virtual clock starts there.
  let clock = Number(intent?.rowKey.split("_")[0]);
  expect(clock).toBeGreaterThan(0);
  const events: PassEvent[] = [];
  let heard: (() => void) | undefined;
  const nextPass = () => new Promise<void>((resolve) => (heard = resolve));
  const db = restarted(store, prefix, {
    now: () => clock,
    onEvent: (event) => {
      if (event.type !== "repair-pass") return;
      events.push(event);
      heard?.();
    },
  });
  const timers = new ManualTimers();
  const intervalMs = 60_000;
  const worker = db.startRepairWorker({ intervalMs, minIntentAgeMs: 30_000, timers });
  expect(timers.waiting).toEqual([0]);
  let passed = nextPass();
  timers.fire();
  await passed;
  await until(() => timers.waiting.length === 1, "the first pass ended");
  expect(events).toHaveLength(1);
  expect(events[0]?.errors).toEqual([]);
  expect(events[0]?.counts.eventually).toMatchObject({ skipped: 1, replayed: 0 });
  expect(events[0]?.counts.indexes).toMatchObject({ intentsReplayed: 0 });
  const half = await stateOf(db, 2);
  expect(half).not.toEqual(after(2));
  expect(half).not.toEqual(before(2));

  // One interval later the intent is old enough: the pass finishes the move.
  expect(timers.waiting).toEqual([intervalMs]);
  clock += intervalMs;
  passed = nextPass();
  timers.fire();
  await passed;
  await until(() => timers.waiting.length === 1, "the second pass ended");
  expect(events).toHaveLength(2);
  expect(events[1]?.errors).toEqual([]);
  expect(events[1]?.counts.indexes).toMatchObject({ intentsReplayed: 1 });
  expect(events[1]?.counts.eventually).toMatchObject({ replayed: 1, conflicts: 0, failed: 0, skipped: 0 });
  expect(await stateOf(db, 2)).toEqual(after(2));
  await expectNoIntents(db, intents, "after the worker's pass");
  await expectNoDrift(db);
  await expectSummaryExact(db, prefix, "after the worker's pass");

  // Stopped while its third pass runs: stop resolves after that pass's event, and nothing follows.
  clock += intervalMs;
  timers.fire();
  expect(events).toHaveLength(2);
  await worker.stop();
  expect(events).toHaveLength(3);
  expect(events[2]?.counts.eventually).toMatchObject({ replayed: 0, skipped: 0 });
  expect(timers.waiting).toEqual([]);
  timers.fire();
  expect(events).toHaveLength(3);
}

function memoryFile() {
  const { file, cleanup } = tempStoreFile("eventual-crash");
  return { target: { argument: file, open: () => new MemoryStore({ file }) }, cleanup };
}

describe("db.eventually killed with SIGKILL, then repaired, on a MemoryStore file", () => {
  it(
    "a kill before every request of the archive move, and after it: repair leaves it whole",
    SAFETY_NET,
    async () => {
      const { target, cleanup } = memoryFile();
      try {
        const { kills, seconds } = await killAtEveryRequest(target);
        console.log(`[eventual crash test] memory file: ${kills} kills in ${seconds.toFixed(1)}s`);
      } finally {
        cleanup();
      }
    },
  );

  it(
    "a repair worker finishes the killed move within its interval and stops cleanly",
    SAFETY_NET,
    async () => {
      const { target, cleanup } = memoryFile();
      try {
        await workerFinishesKilledMove(target);
      } finally {
        cleanup();
      }
    },
  );
});

describe.skipIf(!azuriteSelected)(
  "db.eventually killed with SIGKILL, then repaired, on Azurite (needs Azurite: TABLEKIT_STORES leaves it out)",
  () => {
    const target = () => {
      const store = createAzuriteStore();
      return { argument: azuriteConnectionString(), open: () => store };
    };

    it(
      "a kill before every request of the archive move, and after it: repair leaves it whole",
      SAFETY_NET,
      async () => {
        const { kills, seconds } = await killAtEveryRequest(target());
        console.log(`[eventual crash test] azurite: ${kills} kills in ${seconds.toFixed(1)}s`);
      },
    );

    it(
      "a repair worker finishes the killed move within its interval and stops cleanly",
      SAFETY_NET,
      async () => {
        await workerFinishesKilledMove(target());
      },
    );
  },
);
