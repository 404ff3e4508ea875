import { describe, expect, it } from "vitest";
import { TableContext } from "../../src/index.js";
import { stores, uniquePrefix } from "../fixtures/context.js";
import { type CrashMode, CrashStore } from "../indexes/crash-store.js";
import { readAll } from "../support/read-all.js";
import type { StoreKind } from "../support/stores.js";
import { sweepModes } from "../support/sweep-modes.js";
import { employee, expectExact, RsEmployee } from "./models.js";

const REGIONS = ["eu", "us"];

async function crashContext(kind: StoreKind) {
  const store = new CrashStore(kind.create());
  const prefix = uniquePrefix("rs");
  const db = new TableContext({ store, tablePrefix: prefix, retry: false });
  await db.ensureTables(RsEmployee);
  store.reset();
  const fresh = () => new TableContext({ store, tablePrefix: prefix, retry: false });
  const intents = async () =>
    (await readAll(store, `${prefix}TablekitIntents`)).filter((row) =>
      row.partitionKey.startsWith("~summary~"),
    );
  return { db, store, prefix, fresh, intents };
}

/**
 * One round of writes touching two source partitions of one region and one of another: an insert,
 * an update of a tracked entity, a blind upsert, a delete and a bulk upsert over two partitions.
 * Each write's failure is caught, so after a `refused` or `lost` request the next writes still run.
 */
async function writes(db: TableContext, id: number): Promise<void> {
  const employees = db.repository(RsEmployee);
  const base = id * 10;
  let tracked: RsEmployee | undefined;
  const steps: Array<() => Promise<unknown>> = [
    async () => {
      tracked = await employees.get({ region: "eu", department: "sales", employeeId: 1 });
    },
    () => employees.insert(employee("eu", "sales", base + 1, id, BigInt(id))),
    () => (tracked ? employees.update(Object.assign(tracked, { salary: id * 3 })) : Promise.resolve()),
    () => employees.upsert(employee("us", "ops", base + 2, id * 2)),
    () => employees.delete({ region: "eu", department: "sales", employeeId: base - 9 }),
    () =>
      employees.bulkUpsert([
        employee("eu", "hr", base + 3, 7, 2n),
        employee("eu", "hr", base + 4, 8),
        employee("us", "ops", base + 5, 9),
      ]),
  ];
  for (const step of steps) await step().catch(() => undefined);
}

/**
 * The writes interrupted at every one of their requests: `crash` (the process dies before request
 * N), `refused` (request N alone fails, nothing applied), `lost` (request N applied, its answer
 * lost). After each, `repair` in a fresh process must leave no intent, and every remote summary
 * must equal a recount of the stored rows (no delta lost, none applied twice).
 */
describe.each(stores)("remote summaries interrupted at each request, then db.repair, on %s", (name, kind) => {
  for (const mode of sweepModes(name, ["crash", "refused", "lost"] as CrashMode[])) {
    it(`${mode}: every request of a round of writes`, async () => {
      const { db, store, prefix, fresh, intents } = await crashContext(kind);
      await db.repository(RsEmployee).insert(employee("eu", "sales", 1, 1));
      let id = 1;
      store.reset();
      await writes(db, ++id);
      const total = store.requests;
      await expectExact(db, prefix, REGIONS, "clean round");
      let mirrored = 0;
      for (let at = 1; at <= total; at++) {
        store.arm(at, mode);
        // A writer that has run before (warm caches) and a cold one, alternately.
        await writes(at % 2 ? db : fresh(), ++id);
        store.reset();
        const where = `${mode} at request ${at} of ${total}`;
        const restarted = fresh();
        const report = await restarted.repair({ entities: [RsEmployee] });
        mirrored += report.summaries?.mirrored ?? 0;
        expect(report.summaries?.failed, where).toBe(0);
        expect(await intents(), where).toEqual([]);
        await expectExact(restarted, prefix, REGIONS, where);
      }
      // Repair did finish writes a crash had left unmirrored.
      if (mode === "crash") expect(mirrored).toBeGreaterThan(0);
    });
  }
});

/**
 * The repair itself interrupted at every one of its requests (after a write that died right after
 * its transaction), then repaired again: the remote summaries end exact.
 */
describe.each(stores)("db.repair of remote summaries interrupted at each request, on %s", (name, kind) => {
  for (const mode of sweepModes(name, ["crash", "lost"] as CrashMode[])) {
    it(`${mode}: every request of the repair`, async () => {
      const { db, store, prefix, fresh, intents } = await crashContext(kind);
      const employees = db.repository(RsEmployee);
      await employees.insert(employee("eu", "sales", 1, 1));
      let id = 1;
      const crashedWrite = async () => {
        // Warm: intent, transaction, then the process dies before the first contribution (the
        // write itself committed, so it resolves: its remote summaries are left to repair).
        store.arm(3, "crash");
        await employees.insert(employee("eu", "sales", ++id, id));
        expect(store.log.slice(0, 2)).toEqual(["upsert", "submitTransaction"]);
        store.reset();
      };
      await crashedWrite();
      await fresh().repair({ entities: [RsEmployee] });
      const total = store.requests;
      await expectExact(db, prefix, REGIONS, "clean repair");
      for (let n = 1; n <= total; n++) {
        await crashedWrite();
        store.arm(n, mode);
        await fresh()
          .repair({ entities: [RsEmployee] })
          .catch(() => undefined);
        store.reset();
        const where = `${mode} at request ${n} of ${total}`;
        const second = await fresh().repair({ entities: [RsEmployee] });
        expect(second.summaries?.failed, where).toBe(0);
        expect(await intents(), where).toEqual([]);
        await expectExact(fresh(), prefix, REGIONS, where);
      }
    });
  }
});
