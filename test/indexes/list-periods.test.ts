/**
 * List indexes of an entity kept in a table per period. Entities of different periods may share their
 * keys, so a list kept elsewhere names each entity's period table in its entries; a list kept beside its
 * entities (the default table) lives in each period's table. Lookups find exactly the listed entities.
 */
import { describe, expect, it } from "vitest";
import { Column, Entity, TableContext } from "../../src/index.js";
import { stores, uniquePrefix } from "../fixtures/context.js";

@Entity({
  table: "LpLogs{at:month}",
  type: "LpLog",
  partitionKey: "{device}",
  rowKey: "e_{id:4}",
  indexes: {
    byLevel: { table: "LpLevels", partitionKey: "{level}", rowKey: "l", list: true },
    beside: { rowKey: "k_{level}", list: true },
  },
})
class LpLog {
  @Column({ type: "String" }) device!: string;
  @Column({ type: "Int32" }) id!: number;
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "String" }) level!: string;
}

const JAN = new Date(Date.UTC(2026, 0, 5));
const FEB = new Date(Date.UTC(2026, 1, 5));
const log = (device: string, id: number, at: Date, level: string) =>
  Object.assign(new LpLog(), { device, id, at, level });
const names = (rows: LpLog[]) => rows.map((r) => `${r.device}/${r.id}@${r.at.getUTCMonth() + 1}`);

describe.each(stores)("list indexes of an entity kept in a table per period, on %s", (_name, kind) => {
  it("entries name each entity's period table: same keys in two periods are two members", async () => {
    const db = new TableContext({ store: kind.create(), tablePrefix: uniquePrefix("lp") });
    await db.ensureTables(LpLog);
    const logs = db.repository(LpLog);
    const byLevel = logs.index("byLevel");
    const beside = logs.index("beside");
    await logs.insert(log("d1", 1, JAN, "warn"));
    await logs.insert(log("d1", 1, FEB, "warn"));
    await logs.upsert(log("d2", 2, FEB, "error"));
    expect(names(await byLevel.find({ level: "warn" }).toArray())).toEqual(["d1/1@1", "d1/1@2"]);
    expect(names(await beside.find({ device: "d1", level: "warn", at: FEB }).toArray())).toEqual(["d1/1@2"]);
    expect(names(await beside.find({ device: "d1", level: "warn", at: JAN }).toArray())).toEqual(["d1/1@1"]);
    // A month nobody wrote to lists nothing.
    expect(
      await beside.find({ device: "d1", level: "warn", at: new Date(Date.UTC(2026, 5, 1)) }).toArray(),
    ).toEqual([]);

    // January's entity changes level: only its own membership moves.
    const january = await logs.getOrThrow({ device: "d1", id: 1, at: JAN });
    january.level = "error";
    await logs.update(january);
    expect(names(await byLevel.find({ level: "warn" }).toArray())).toEqual(["d1/1@2"]);
    expect(names(await byLevel.find({ level: "error" }).toArray())).toEqual(["d1/1@1", "d2/2@2"]);

    // Deletes, bulk writes and transactions keep the lists too.
    expect(await logs.delete({ device: "d1", id: 1, at: FEB })).toBe(true);
    expect(await byLevel.find({ level: "warn" }).toArray()).toEqual([]);
    await logs.bulkUpsert([log("d3", 3, JAN, "warn"), log("d3", 3, FEB, "warn")]);
    await db.transaction((tx) => {
      tx.insert(log("d4", 4, FEB, "warn"));
      tx.upsert(log("d4", 5, FEB, "error"));
    });
    expect(names(await byLevel.find({ level: "warn" }).toArray())).toEqual(["d3/3@1", "d3/3@2", "d4/4@2"]);
    expect(names(await byLevel.find({ level: "error" }).toArray())).toEqual(["d1/1@1", "d2/2@2", "d4/5@2"]);
    expect(names(await beside.find({ device: "d4", level: "error", at: FEB }).toArray())).toEqual(["d4/5@2"]);
    // verifyIndexes judges both lists by their members (each naming its period's table): no drift.
    expect(await db.verifyIndexes(LpLog)).toEqual({ missing: [], stale: [], orphans: [] });
    // January dropped: its entities' entries in the list kept elsewhere are orphans the scan repair removes.
    await db.dropTables(LpLog, { before: FEB });
    expect((await db.verifyIndexes(LpLog)).stale.map((r) => r.partitionKey)).toEqual(["error", "warn"]);
    expect(await db.repairIndexes(LpLog, { scan: true })).toEqual({
      intentsReplayed: 0,
      copiesWritten: 2,
      copiesDeleted: 0,
      poisoned: 0,
    });
    expect(names(await byLevel.find({ level: "warn" }).toArray())).toEqual(["d3/3@2", "d4/4@2"]);
    expect(await db.verifyIndexes(LpLog)).toEqual({ missing: [], stale: [], orphans: [] });
  });
});
