import { describe, expect, it } from "vitest";
import { Column, Entity, TableContext } from "../../src/index.js";
import { stores, uniquePrefix } from "../fixtures/context.js";
import { type CrashMode, CrashStore } from "../indexes/crash-store.js";
import { readAll } from "../support/read-all.js";

/**
 * Readings kept in a table per month, with a summary per site kept in another table. Partitions of
 * different months share PartitionKeys (`{site}`), so each month's partition is its own source: its
 * contribution row names the month's table (`<rowKey>~<period table>~<PartitionKey>`).
 */
@Entity({
  table: "RpReadings{at:month}",
  type: "RpReading",
  partitionKey: "{site}",
  rowKey: "r_{id:6}",
  summaries: {
    perSite: {
      partitionKey: "{site}",
      rowKey: "site",
      table: "RpTotals",
      count: "n",
      sum: { value: "total" },
    },
  },
})
class RpReading {
  @Column({ type: "String" }) site!: string;
  @Column({ type: "Int32" }) id!: number;
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "Int32" }) value!: number;
}

const reading = (site: string, id: number, month: number, value: number) =>
  Object.assign(new RpReading(), { site, id, at: new Date(Date.UTC(2026, month, 3)), value });

/** The per-site totals recounted from the stored rows of every month's table. */
async function recount(db: TableContext, prefix: string) {
  const totals = new Map<string, { n: number; total: number }>();
  for (const table of await db.store.listTables(`${prefix}RpReadings`)) {
    for (const row of await readAll(db.store, table)) {
      if (!String(row.EntityType).startsWith("RpReading@")) continue;
      const site = String(row.site);
      const sum = totals.get(site) ?? { n: 0, total: 0 };
      sum.n += 1;
      sum.total += Number(row.value);
      totals.set(site, sum);
    }
  }
  return totals;
}

async function expectExact(db: TableContext, prefix: string, where: string) {
  const repo = db.repository(RpReading);
  for (const site of ["north", "south"]) {
    const expected = (await recount(db, prefix)).get(site) ?? { n: 0, total: 0 };
    expect(await repo.summary("perSite", { site }), `${where}: ${site}`).toEqual(expected);
  }
  expect(await db.verifySummaries(RpReading), where).toEqual([]);
}

describe.each(stores)(
  "a summary in another partition of an entity with a table per period, on %s",
  (_name, kind) => {
    it("adds up every month's partitions, one contribution row each; verify and repair find a drifting one", async () => {
      const prefix = uniquePrefix("rp");
      const db = new TableContext({ store: kind.create(), tablePrefix: prefix });
      const repo = db.repository(RpReading);
      await repo.insert(reading("north", 1, 0, 5));
      await repo.insert(reading("north", 2, 1, 7));
      await repo.upsert(reading("north", 3, 1, 11));
      await repo.insert(reading("south", 4, 0, 13));
      await repo.delete({ site: "north", id: 3, at: new Date(Date.UTC(2026, 1, 3)) });
      await repo.bulkUpsert([reading("south", 5, 1, 17), reading("south", 6, 0, 19)]);
      await expectExact(db, prefix, "after the writes");
      const rows = (await readAll(db.store, `${prefix}RpTotals`)).filter(
        (row) => row.partitionKey === "north",
      );
      expect(rows.map((row) => row.rowKey).sort()).toEqual([
        `site~${"RpReadings202601"}~north`,
        `site~${"RpReadings202602"}~north`,
      ]);
      // A contribution changed behind the library's back: verify names its source, repair restores it.
      const january = rows.find((row) => row.rowKey.includes("202601")) as (typeof rows)[number];
      await db.store.upsert(`${prefix}RpTotals`, { ...january, total: 1000 }, "merge");
      const drift = await db.verifySummaries(RpReading);
      expect(drift.map((d) => [d.sourcePartitionKey, d.rowKey, d.stored.total, d.actual.total])).toEqual([
        ["north", "site~RpReadings202601~north", 1000, 5],
      ]);
      expect(await db.repairSummaries(RpReading)).toHaveLength(1);
      await expectExact(db, prefix, "after repairSummaries");
    });

    it("after dropTables, the dropped months' contributions are drift: verify reports them, repair removes them", async () => {
      const prefix = uniquePrefix("rp");
      const db = new TableContext({ store: kind.create(), tablePrefix: prefix });
      const repo = db.repository(RpReading);
      await repo.insert(reading("north", 1, 0, 5));
      await repo.insert(reading("north", 2, 1, 7));
      await repo.insert(reading("south", 3, 0, 13));
      await repo.insert(reading("south", 4, 2, 17));
      await expectExact(db, prefix, "before the drop");
      expect(await db.dropTables(RpReading, { before: new Date(Date.UTC(2026, 1, 1)) })).toEqual([
        `${prefix}RpReadings202601`,
      ]);
      // January's entities are gone; its contribution rows still count until repaired.
      const drift = await db.verifySummaries(RpReading);
      expect(
        drift.map((d) => [d.table, d.partitionKey, d.rowKey, d.sourcePartitionKey, d.stored, d.actual]),
      ).toEqual([
        [
          `${prefix}RpTotals`,
          "north",
          "site~RpReadings202601~north",
          "north",
          { n: 1, total: 5 },
          { n: 0, total: 0 },
        ],
        [
          `${prefix}RpTotals`,
          "south",
          "site~RpReadings202601~south",
          "south",
          { n: 1, total: 13 },
          { n: 0, total: 0 },
        ],
      ]);
      expect(await db.repairSummaries(RpReading)).toEqual(drift);
      await expectExact(db, prefix, "after repairSummaries");
      expect(await repo.summary("perSite", { site: "north" })).toEqual({ n: 1, total: 7 });
      expect((await readAll(db.store, `${prefix}RpTotals`)).map((row) => row.rowKey).sort()).toEqual([
        "site~RpReadings202602~north",
        "site~RpReadings202603~south",
      ]);
    });

    for (const mode of ["crash", "lost"] as CrashMode[]) {
      it(`${mode} at every request of an upsert into a month already written, then db.repair: exact`, async () => {
        const store = new CrashStore(kind.create());
        const prefix = uniquePrefix("rp");
        const db = new TableContext({ store, tablePrefix: prefix, retry: false });
        await db.repository(RpReading).insert(reading("north", 1, 0, 5));
        await db.repository(RpReading).upsert(reading("north", 2, 1, 7));
        // Counted on a write like the loop's: the first write into a month makes more requests (its
        // table), so counting on it left most armed requests unreached, their iterations crash-free.
        store.reset();
        await db.repository(RpReading).upsert(reading("north", 3, 1, 8));
        const total = store.requests;
        for (let at = 1; at <= total; at++) {
          store.arm(at, mode);
          await db
            .repository(RpReading)
            .upsert(reading("north", 10 + at, at % 2, at))
            .catch(() => undefined);
          const where = `${mode} at request ${at} of ${total} (${store.log.join(", ")})`;
          expect(store.requests, `${where}: the armed request was reached`).toBeGreaterThanOrEqual(at);
          store.reset();
          const restarted = new TableContext({ store, tablePrefix: prefix, retry: false });
          const report = await restarted.repair({ entities: [RpReading] });
          expect(report.summaries?.failed, where).toBe(0);
          await expectExact(restarted, prefix, where);
        }
      });
    }
  },
);
