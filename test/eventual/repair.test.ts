import { describe, expect, it } from "vitest";
import { MemoryStore, TableContext, type TableKitEvent, ValidationError } from "../../src/index.js";
import type { RepairKind } from "../../src/repository/core/repair-kind.js";
import { stores } from "../fixtures/context.js";
import { expectNoDrift, rowsOf } from "../indexes/helpers.js";
import { RxEmployee, rxEmployee } from "../indexes/models.js";
import { rejectionOf } from "../support/rejection.js";
import { eventualContext, expectNoIntents, MOVE } from "./harness.js";
import { deferred, ManualTimers } from "./manual-timers.js";

/** Lets pending promise callbacks run until `done` holds (a bounded number of turns, no timers). */
async function until(done: () => boolean): Promise<void> {
  for (let turn = 0; turn < 1000 && !done(); turn++) await Promise.resolve();
  expect(done()).toBe(true);
}

type PassEvent = Extract<TableKitEvent, { type: "repair-pass" }>;

/** Collects `repair-pass` events and lets a test await the next one. */
function passEvents() {
  const events: PassEvent[] = [];
  let waiting: ((event: PassEvent) => void) | undefined;
  return {
    events,
    onEvent: (event: TableKitEvent) => {
      if (event.type !== "repair-pass") return;
      events.push(event);
      waiting?.(event);
      waiting = undefined;
    },
    next: () => new Promise<PassEvent>((resolve) => (waiting = resolve)),
  };
}

describe("db.startRepairWorker (scheduling)", () => {
  it("never runs two passes at once, stop awaits the running pass, a failing pass does not stop the worker", async () => {
    const heard = passEvents();
    const db = new TableContext({ store: new MemoryStore(), onEvent: heard.onEvent });
    let inFlight = 0;
    let maxInFlight = 0;
    let passes = 0;
    const gates: ReturnType<typeof deferred<void>>[] = [];
    const kind: RepairKind = {
      name: "probe",
      run: async () => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        passes++;
        const gate = deferred();
        gates.push(gate);
        try {
          await gate.promise;
        } finally {
          inFlight--;
        }
        return { passes };
      },
    };
    db.addRepairKind(kind);
    const timers = new ManualTimers();
    const first = db.startRepairWorker({ intervalMs: 1000, timers });
    const second = db.startRepairWorker({ intervalMs: 1000, timers });
    // Both workers start with a pass at once; the second waits for the first.
    expect(timers.waiting).toEqual([0, 0]);
    timers.fire();
    await until(() => gates.length === 1);
    const firstPass = heard.next();
    gates[0]?.resolve();
    expect((await firstPass).counts.probe).toEqual({ passes: 1 });
    // The second worker's pass starts only now.
    await until(() => gates.length === 2);
    const secondPass = heard.next();
    gates[1]?.reject(new ValidationError("probe", "a failing pass"));
    const failed = await secondPass;
    expect(failed.errors).toHaveLength(1);
    expect(maxInFlight).toBe(1);
    // Both workers scheduled their next pass an interval after their pass ended.
    await until(() => timers.waiting.length === 2);
    expect(timers.waiting).toEqual([1000, 1000]);
    timers.fire();
    await until(() => gates.length === 3);
    let stopped = false;
    const stopping = first.stop().then(() => (stopped = true));
    await Promise.resolve();
    expect(stopped).toBe(false);
    gates[2]?.resolve();
    await stopping;
    await until(() => gates.length === 4);
    gates[3]?.resolve();
    await second.stop();
    expect(timers.waiting).toEqual([]);
    expect(maxInFlight).toBe(1);
    expect(heard.events.map((event) => event.errors.length)).toEqual([0, 1, 0, 0]);
  });

  it("validates its options before starting", () => {
    const db = new TableContext({ store: new MemoryStore() });
    expect(() => db.startRepairWorker({ intervalMs: 0 })).toThrow(ValidationError);
    expect(() => db.startRepairWorker({ intervalMs: 10, minIntentAgeMs: -1 })).toThrow(ValidationError);
    // @ts-expect-error intervalMs is required
    expect(() => db.startRepairWorker({})).toThrow(ValidationError);
  });
});

describe.each(stores)("db.repair on %s", (_name, kind) => {
  it("a repair worker finishes crashed work within its interval and stops cleanly", async () => {
    const { db, store, prefix, intents } = await eventualContext(kind);
    await MOVE.prepare(db, 1);
    const move = await MOVE.plan(db, 1);
    store.arm(6, "crash");
    await rejectionOf(move());
    store.reset();
    const heard = passEvents();
    const restarted = new TableContext({ store, tablePrefix: prefix, retry: false, onEvent: heard.onEvent });
    restarted.repository(RxEmployee);
    const timers = new ManualTimers();
    const worker = restarted.startRepairWorker({ intervalMs: 60_000, minIntentAgeMs: 0, timers });
    const pass = heard.next();
    timers.fire();
    const event = await pass;
    expect(event.errors).toEqual([]);
    expect(event.counts.eventually).toMatchObject({ replayed: 1, conflicts: 0 });
    await worker.stop();
    expect(await MOVE.state(restarted, 1)).toEqual(MOVE.after(1));
    await expectNoIntents(restarted, intents, "after the worker's pass");
  });

  it("leaves intents younger than minIntentAgeMs, and a claimed intent to its claimer", async () => {
    const { db, store, prefix, intents } = await eventualContext(kind);
    let now = 1_000_000_000_000;
    const at = (options: { onEvent?: (e: TableKitEvent) => void } = {}) =>
      new TableContext({ store, tablePrefix: prefix, retry: false, now: () => now, ...options });
    await MOVE.prepare(db, 2);
    const move = await MOVE.plan(at(), 2);
    store.arm(6, "crash");
    await rejectionOf(move());
    store.reset();
    const young = await at().repair({ minIntentAgeMs: 1000, entities: [RxEmployee] });
    expect(young.eventually).toMatchObject({ replayed: 0, skipped: 1 });
    now += 1000;
    // Repairer A claims the intent; while it applies the steps, repairer B comes along and skips it.
    const a = at();
    const b = at();
    let other: Awaited<ReturnType<TableContext["repair"]>> | undefined;
    store.before(
      (method, table) => method === "insert" && table.endsWith("EvArchive"),
      async () => {
        other = await b.repair({ entities: [RxEmployee] });
      },
    );
    const mine = await a.repair({ minIntentAgeMs: 1000, entities: [RxEmployee] });
    expect(other?.eventually).toMatchObject({ replayed: 0, skipped: 1, applied: 0 });
    expect(mine.eventually).toMatchObject({ replayed: 1, conflicts: 0 });
    expect(await MOVE.state(a, 2)).toEqual(MOVE.after(2));
    await expectNoIntents(a, intents, "after the claimed replay");
  });

  it("a claim held by a crashed repairer runs out; an intent failing every replay is set aside", async () => {
    const { db, store, prefix, intents } = await eventualContext(kind);
    let now = 1_000_000_000_000;
    const at = () => new TableContext({ store, tablePrefix: prefix, retry: false, now: () => now });
    await MOVE.prepare(db, 3);
    const move = await MOVE.plan(at(), 3);
    store.arm(6, "crash");
    await rejectionOf(move());
    store.reset();
    // The repairer dies right after its claim (the claim is applied, nothing after it).
    store.before(
      (method, table) => method === "update" && table.endsWith("TablekitIntents"),
      async () => store.arm(2, "crash"),
    );
    await rejectionOf(at().repair({ entities: [RxEmployee] }));
    store.reset();
    expect((await at().repair({ entities: [RxEmployee] })).eventually).toMatchObject({
      skipped: 1,
      replayed: 0,
    });
    now += 60_000;
    // Every replay fails now (the archive table is gone): five attempts, then the intent is set aside.
    await db.store.deleteTable(`${prefix}EvArchive`);
    let failures = 0;
    let poisoned = 0;
    for (let pass = 0; pass < 6; pass++) {
      const error = await at()
        .repair({ entities: [RxEmployee] })
        .then(
          (report) => {
            poisoned += report.eventually?.poisoned ?? 0;
            return undefined;
          },
          (e: unknown) => e,
        );
      if (error) failures++;
      now += 60_000;
    }
    expect(failures).toBe(4);
    expect(poisoned).toBe(1);
    const left = await rowsOf(db.store, intents);
    expect(left.map((row) => row.partitionKey)).toEqual(["poison~~eventually"]);
    expect(left[0]?.error).toContain("failed 5 replays");
  });

  it("finds index intents without being told the classes, and replays those of classes it knows", async () => {
    const { db, store, fresh } = await eventualContext(kind);
    const employees = db.repository(RxEmployee);
    await employees.insert(rxEmployee("Idx", 1, 1));
    const one = await employees.getOrThrow({ department: "Idx", employeeId: 1 });
    // The index intent is recorded, the write dies after it.
    store.arm(2, "crash");
    await rejectionOf(employees.update(Object.assign(one, rxEmployee("Idx", 1, 2))));
    store.reset();
    const blind = await fresh().repair();
    expect(blind.indexes).toMatchObject({ intentsReplayed: 0, unknownTypes: 1 });
    const told = await fresh().repair({ entities: [RxEmployee] });
    expect(told.indexes).toMatchObject({ intentsReplayed: 1, unknownTypes: 0 });
    await expectNoDrift(fresh());
  });

  it("dates and ages index intents by the context's clock, like eventual transactions", async () => {
    const { db, store, prefix, intents } = await eventualContext(kind);
    // A clock far from the wall clock: an intent dated or aged by Date.now would show.
    let now = 1_000_000_000_000;
    const at = () => new TableContext({ store, tablePrefix: prefix, retry: false, now: () => now });
    const employees = at().repository(RxEmployee);
    await employees.insert(rxEmployee("Clock", 1, 1));
    const one = await employees.getOrThrow({ department: "Clock", employeeId: 1 });
    // The index intent is recorded, the write dies after it.
    store.arm(2, "crash");
    await rejectionOf(employees.update(Object.assign(one, rxEmployee("Clock", 1, 2))));
    store.reset();
    expect((await rowsOf(db.store, intents)).map((row) => Number(row.rowKey.split("_")[0]))).toEqual([now]);
    now += 999;
    const young = await at().repair({ minIntentAgeMs: 1000, entities: [RxEmployee] });
    expect(young.indexes).toMatchObject({ intentsReplayed: 0 });
    now += 1;
    const old = await at().repair({ minIntentAgeMs: 1000, entities: [RxEmployee] });
    expect(old.indexes).toMatchObject({ intentsReplayed: 1 });
    await expectNoIntents(db, intents, "after the repair");
    await expectNoDrift(at());
  });

  it("resolves counts per kind, including kinds added by other features", async () => {
    const { db } = await eventualContext(kind);
    db.addRepairKind({ name: "blobs", run: async ({ minIntentAgeMs }) => ({ deleted: minIntentAgeMs }) });
    const report = await db.repair({ minIntentAgeMs: 5 });
    expect(Object.keys(report)).toEqual([
      "indexes",
      "eventually",
      "summaries",
      "largeValues",
      "expiry",
      "changeFeed",
      "blobs",
    ]);
    expect(report.blobs).toEqual({ deleted: 5 });
    await expect(db.repair({ minIntentAgeMs: 1.5 })).rejects.toBeInstanceOf(ValidationError);
  });
});
