/**
 * verifyIndexes / repairIndexes of index entities (list indexes), kept in another table (`byCity`) and
 * in the entity's partition (`byLastName`): drift made through the raw store is reported in
 * `{ missing, stale, orphans }` by index entity, and a scan repair fixes the membership; an intent
 * left by a write that crashed before its list kept elsewhere was brought in line is replayed.
 */
import { describe, expect, it } from "vitest";
import { Column, type CopyRef, Entity, TableContext } from "../../src/index.js";
import { stores, uniquePrefix } from "../fixtures/context.js";
import { CrashStore } from "./crash-store.js";
import { bare, rowsOf } from "./helpers.js";

@Entity({
  table: "LvEmployees",
  type: "LvEmployee",
  partitionKey: "{department}",
  rowKey: "empid_{employeeId:6}",
  indexes: {
    byLastName: { list: true, rowKey: "lastname_{lastName}" },
    byCity: { list: true, table: "LvEmployeesByCity", partitionKey: "{city}", rowKey: "city" },
  },
})
class LvEmployee {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "String" }) lastName!: string;
  @Column({ type: "String" }) city!: string;
}

const person = (department: string, employeeId: number, lastName: string, city: string) =>
  Object.assign(new LvEmployee(), { department, employeeId, lastName, city });
const member = (department: string, id: number) => [department, `empid_${String(id).padStart(6, "0")}`];
const clean = { missing: [], stale: [], orphans: [] };

async function setUp(kind: (typeof stores)[number][1]) {
  const store = new CrashStore(kind.create());
  const prefix = uniquePrefix("lv");
  const db = new TableContext({ store, tablePrefix: prefix, retry: false });
  await db.ensureTables(LvEmployee);
  const employees = db.repository(LvEmployee);
  await employees.insert(person("Sales", 1, "Lee", "Paris"));
  await employees.insert(person("Sales", 2, "Lee", "Oslo"));
  await employees.insert(person("Sales", 3, "Kim", "Paris"));
  await employees.insert(person("Ops", 4, "Lee", "Oslo"));
  const byCity = `${prefix}LvEmployeesByCity`;
  const cityRef = (city: string): CopyRef => ({
    index: "byCity",
    table: byCity,
    partitionKey: city,
    rowKey: "city",
  });
  return { db, store, prefix, employees, byCity, cityRef };
}

const cities = async (db: TableContext, city: string) =>
  (await db.repository(LvEmployee).index("byCity").find({ city }).toArray()).map(
    (e) => `${e.department}/${e.employeeId}`,
  );

describe.each(stores)("verifyIndexes / repairIndexes of list indexes on %s", (_name, kind) => {
  it("report index entities whose members drift, and a scan repair fixes their membership", async () => {
    const { db, prefix, byCity, cityRef } = await setUp(kind);
    expect(await db.verifyIndexes(LvEmployee)).toEqual(clean);
    const nothing = { intentsReplayed: 0, copiesWritten: 0, copiesDeleted: 0, poisoned: 0 };
    expect(await db.repairIndexes(LvEmployee, { scan: true })).toEqual(nothing);

    const raw = db.store;
    const paris = await raw.getEntity(byCity, "Paris", "city");
    if (!paris) throw new Error("no Paris list");
    // Paris drops Sales/3 (a member missing) and lists Sales/2, who lives in Oslo (a stale member).
    await raw.upsert(
      byCity,
      { ...bare(paris), m0: JSON.stringify([member("Sales", 1), member("Sales", 2)]) },
      "replace",
    );
    // Oslo's index entity is gone; Rome's lists only an employee that does not exist.
    expect(await raw.delete(byCity, "Oslo", "city", "*")).toBe(true);
    await raw.upsert(
      byCity,
      { ...bare(paris), partitionKey: "Rome", m0: JSON.stringify([member("Ops", 9)]) },
      "replace",
    );
    // The list in the entity's partition loses a member too.
    const lee = await raw.getEntity(`${prefix}LvEmployees`, "Sales", "lastname_Lee");
    if (!lee) throw new Error("no Lee list");
    await raw.upsert(
      `${prefix}LvEmployees`,
      { ...bare(lee), m0: JSON.stringify([member("Sales", 1)]) },
      "replace",
    );

    const drift = await db.verifyIndexes(LvEmployee);
    expect(drift).toEqual({
      missing: [cityRef("Oslo")],
      stale: [
        { index: "byLastName", table: `${prefix}LvEmployees`, partitionKey: "Sales", rowKey: "lastname_Lee" },
        cityRef("Paris"),
      ],
      orphans: [cityRef("Rome")],
    });
    // Paris and Lee rewritten, Oslo inserted, Rome deleted.
    expect(await db.repairIndexes(LvEmployee, { scan: true })).toEqual({
      ...nothing,
      copiesWritten: 3,
      copiesDeleted: 1,
    });
    expect(await db.verifyIndexes(LvEmployee)).toEqual(clean);
    expect(await cities(db, "Paris")).toEqual(["Sales/1", "Sales/3"]);
    expect(await cities(db, "Oslo")).toEqual(["Ops/4", "Sales/2"]);
    expect(await cities(db, "Rome")).toEqual([]);
    expect((await rowsOf(raw, byCity)).map((r) => r.partitionKey).sort()).toEqual(["Oslo", "Paris"]);
  });

  it("replay an intent left by a write that crashed at any request: the lists elsewhere are exact", async () => {
    const { db, store, employees } = await setUp(kind);
    store.reset();
    await employees.upsert(person("Sales", 1, "Lee", "Rome"));
    const total = store.requests;
    // The write reads, records its intent, commits and moves the lists elsewhere: several requests to crash at.
    expect(total).toBeGreaterThan(2);
    for (let at = 1; at <= total; at++) {
      const city = at % 2 ? "Oslo" : "Paris";
      store.arm(at, "crash");
      const crashed = await employees.upsert(person("Sales", 1, "Lee", city)).then(
        () => false,
        () => true,
      );
      const where = `crash at request ${at} of ${total} (${store.log.join(", ")})`;
      store.reset();
      // Every request of the write is one it makes whatever the crash before (the city always moves).
      expect(crashed, where).toBe(true);
      await db.repairIndexes(LvEmployee);
      expect(await db.verifyIndexes(LvEmployee), where).toEqual(clean);
      const now = (await employees.getOrThrow({ department: "Sales", employeeId: 1 })).city;
      expect(await cities(db, now), where).toContain("Sales/1");
    }
  });
});
