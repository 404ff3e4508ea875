import { describe, expect, it } from "vitest";
import { EventualStepError, TableContext } from "../../src/index.js";
import { expectNoDrift } from "../indexes/helpers.js";
import { RxEmployee } from "../indexes/models.js";
import { testSeed } from "../support/seeded-random.js";
import { FAST_RETRY, faultyContext, faultyStores, readTable, storeNames } from "../writes/harness.js";
import { expectNoIntents, intentRows, MOVE } from "./harness.js";
import { ArchivedEmployee, CurrentEmployee, Departure, departure } from "./models.js";
import { movedEmployee } from "./move.js";

const SEED = testSeed(20261126);
const MOVES = 12;

/**
 * The archive move under the fault layers (FaultyStore on MemoryStore, the HTTP fault proxy on
 * Azurite): 503, 500, timeouts, resets and lost answers on a quarter of all requests, retried by
 * the context. Each move also records a departure (an entity with a same-partition summary). A move
 * either resolves or rejects with a fault (never a false conflict); after `repair` every move is
 * complete, no intent is left, no step met a conflict, and the summary equals a recount.
 */
describe.each(storeNames)("db.eventually under transient faults, on %s", (name) => {
  it.each([
    ["retried", FAST_RETRY],
    ["not retried", false],
  ] as const)(`%s: every move completes after repair (seed ${SEED})`, async (_label, retry) => {
    const stores = await faultyStores(name, { seed: SEED, rate: 0.25 });
    try {
      const { db, prefix } = await faultyContext(
        stores,
        [CurrentEmployee, ArchivedEmployee, RxEmployee, Departure],
        {
          retry,
        },
      );
      const moves: Array<() => Promise<unknown>> = [];
      stores.plan.setRate(0);
      for (let id = 1; id <= MOVES; id++) {
        await MOVE.prepare(db, id);
        moves.push(await MOVE.plan(db, id, (tx) => tx.insert(departure(movedEmployee(id)))));
      }
      stores.plan.setRate(0.25);
      let rejected = 0;
      const succeeded: boolean[] = [];
      for (const move of moves) {
        try {
          await move();
          succeeded.push(true);
        } catch (error) {
          expect(error).not.toBeInstanceOf(EventualStepError);
          rejected++;
          succeeded.push(false);
        }
      }
      stores.plan.setRate(0);
      expect(stores.plan.totalFaults).toBeGreaterThan(0);
      // Without retries, faults interrupt moves half-way: repair has work to finish.
      if (retry === false) expect(rejected).toBeGreaterThan(0);
      const restarted = new TableContext({ store: stores.direct, tablePrefix: prefix, retry: FAST_RETRY });
      // The moves a fault interrupted after their intent was recorded (which ones depends on the
      // faults each request met, and intent ids are random): repair replays exactly those.
      const pending = (await intentRows(restarted, `${prefix}TablekitIntents`)).filter(
        (row) => row.kind === "eventually",
      ).length;
      const report = await restarted.repair({ entities: [RxEmployee, Departure] });
      expect(report.eventually?.replayed ?? 0).toBe(pending);
      expect(report.eventually?.conflicts).toBe(0);
      expect(report.eventually?.replayed ?? 0).toBeLessThanOrEqual(rejected + MOVES);
      for (let id = 1; id <= MOVES; id++) {
        const state = await MOVE.state(restarted, id);
        // A move refused before its intent was recorded did nothing; any other is complete now.
        if (succeeded[id - 1]) expect(state, `move ${id}`).toEqual(MOVE.after(id));
        else expect([MOVE.before(id), MOVE.after(id)], `move ${id}`).toContainEqual(state);
        const recorded = await restarted.repository(Departure).get({ year: 2026, employeeId: id });
        expect(recorded && { ...recorded }, `move ${id}`).toEqual(
          state.archived === undefined ? undefined : { ...departure(movedEmployee(id)) },
        );
      }
      // The summary counted each departure once, whatever the faults and replays.
      const rows = (await readTable(stores.direct, `${prefix}EvDepartures`)).filter((row) =>
        row.rowKey.startsWith("d_"),
      );
      expect(await restarted.repository(Departure).summary("perYear", { year: 2026 })).toEqual({
        departures: rows.length,
        payroll: rows.reduce((sum, row) => sum + Number(row.salary), 0),
      });
      expect(await restarted.verifySummaries(Departure)).toEqual([]);
      await expectNoIntents(restarted, `${prefix}TablekitIntents`, "after repair");
      await expectNoDrift(restarted);
    } finally {
      await stores.close();
    }
  });
});
