import { describe, expect, it } from "vitest";
import { TableContext } from "../../src/index.js";
import { stores } from "../fixtures/context.js";
import { sweepModes } from "../support/sweep-modes.js";
import { crashAt, requestsOf, WRITE_CASES } from "./crash-points.js";
import type { CrashMode } from "./crash-store.js";
import { crashContext, expectNoDrift } from "./helpers.js";
import { RxEmployee, rxEmployee } from "./models.js";

/**
 * A write interrupted at every one of its requests: `crash` (the process dies before request N:
 * nothing after it runs), `refused` (request N alone fails, nothing applied) and `lost` (request
 * N is applied but its answer lost). After each, `repairIndexes` without scan must leave no intent,
 * no drift, and the entity exactly old or exactly new.
 */
describe.each(stores)("repairIndexes after a write interrupted at each request, on %s", (name, kind) => {
  for (const mode of sweepModes(name, ["crash", "refused", "lost"] as CrashMode[])) {
    it(`${mode}: every request of insert, updates, upsert and delete`, async () => {
      const { db, store, prefix, tables } = await crashContext(kind);
      const fresh = () => new TableContext({ store, tablePrefix: prefix, retry: false });
      const totals = { intentsReplayed: 0, copiesWritten: 0, copiesDeleted: 0, poisoned: 0 };
      let id = 0;
      for (const write of WRITE_CASES) {
        const total = await requestsOf(db, store, write, ++id);
        expect(total, write.name).toBeGreaterThan(2);
        // One more than the write makes: the crash comes after the last request (nothing left to do).
        const last = mode === "crash" ? total + 1 : total;
        for (let at = 1; at <= last; at++) {
          const outcome = await crashAt(db, fresh, store, tables.intents, write, ++id, at, mode);
          if (mode === "crash" && at === last) expect(outcome.succeeded, write.name).toBe(true);
          totals.intentsReplayed += outcome.repair.intentsReplayed;
          totals.copiesWritten += outcome.repair.copiesWritten;
          totals.copiesDeleted += outcome.repair.copiesDeleted;
        }
      }
      // Repairs did replay intents, write missing or stale copies and delete stale ones.
      expect(totals.intentsReplayed).toBeGreaterThan(0);
      expect(totals.copiesWritten).toBeGreaterThan(0);
      expect(totals.copiesDeleted).toBeGreaterThan(0);
    });
  }

  it("the cost of repair follows the unfinished work, not the table size", async () => {
    const costs = async (seeded: number): Promise<number[]> => {
      const { db, store, prefix, tables } = await crashContext(kind);
      const employees = db.repository(RxEmployee);
      for (let start = 0; start < seeded; start += 50) {
        await Promise.all(
          Array.from({ length: Math.min(50, seeded - start) }, (_, i) =>
            employees.insert(rxEmployee(i % 2 ? "SeedA" : "SeedB", 1000 + start + i, start + i)),
          ),
        );
      }
      const fresh = () => new TableContext({ store, tablePrefix: prefix, retry: false });
      const counts: number[] = [];
      let id = 0;
      for (const write of WRITE_CASES) {
        const total = await requestsOf(db, store, write, ++id);
        for (let at = 1; at <= total; at++) {
          const outcome = await crashAt(db, fresh, store, tables.intents, write, ++id, at, "crash", false);
          counts.push(outcome.repairRequests);
        }
      }
      await expectNoDrift(db);
      return counts;
    };
    const empty = await costs(0);
    const full = await costs(500);
    expect(full).toEqual(empty);
    // A handful of requests per interrupted write: 8 intent-shard queries plus the intent's refs.
    expect(Math.max(...full)).toBeLessThan(40);
  });
});
