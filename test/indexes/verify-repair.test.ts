import { describe, expect, it } from "vitest";
import { stores } from "../fixtures/context.js";
import { bare, crashContext, expectNoDrift, putRaw, ref, rowsOf } from "./helpers.js";
import { RxEmployee, rxEmployee } from "./models.js";

describe.each(stores)("verifyIndexes / repairIndexes({ scan }) on %s", (_name, kind) => {
  it("find no drift after normal writes, and repair then changes nothing", async () => {
    const { db, tables } = await crashContext(kind);
    const employees = db.repository(RxEmployee);
    await expectNoDrift(db);
    for (let id = 1; id <= 6; id++) await employees.insert(rxEmployee(id % 2 ? "Sales" : "Ops", id, id));
    await expectNoDrift(db);

    // Updates that move every indexed value, drop the sparse copy (version 3) and add it back (4).
    for (const version of [2, 3, 4]) {
      const e = await employees.getOrThrow({ department: "Sales", employeeId: 1 });
      Object.assign(e, rxEmployee("Sales", 1, version));
      await employees.update(e);
      await expectNoDrift(db);
    }
    // An update that changes only a projected property of the projected index (and every copy's content).
    const e2 = await employees.getOrThrow({ department: "Ops", employeeId: 2 });
    e2.firstName = "Renamed";
    await employees.update(e2);
    // Blind upserts of instances never read (replace and merge), inserting and overwriting.
    await employees.upsert(rxEmployee("Ops", 4, 9));
    await employees.upsert(rxEmployee("Ops", 40, 10));
    await employees.upsert(Object.assign(rxEmployee("Sales", 5, 12), { firstName: "Merged" }), {
      mode: "merge",
    });
    await expectNoDrift(db);
    expect(await employees.delete({ department: "Sales", employeeId: 3 })).toBe(true);
    expect(await employees.delete({ department: "Ops", employeeId: 6 })).toBe(true);
    await expectNoDrift(db);

    // The copies are where the model puts them: e2's projected copy carries only firstName and keys.
    const byAge = await rowsOf(db.store, tables.byAge);
    const e2Copy = byAge.find((r) => r.rowKey === "Ops_000002");
    expect(e2Copy).toMatchObject({ firstName: "Renamed", department: "Ops", employeeId: 2 });
    expect(e2Copy?.lastName).toBeUndefined();
    expect(await rowsOf(db.store, tables.intents)).toEqual([]);

    const nothing = { intentsReplayed: 0, copiesWritten: 0, copiesDeleted: 0, poisoned: 0 };
    expect(await db.repairIndexes(RxEmployee)).toEqual(nothing);
    expect(await db.repairIndexes(RxEmployee, { scan: true })).toEqual(nothing);
  });

  it("report exactly the tampered rows, and a scan repair fixes them", async () => {
    const { db, tables, store } = await crashContext(kind);
    const employees = db.repository(RxEmployee);
    // Versions chosen so every employee has a badge (version % 3 !== 0) except employee 6.
    for (let id = 1; id <= 6; id++) await employees.insert(rxEmployee("Sales", id, id === 6 ? 3 : id));
    await expectNoDrift(db);
    const raw = db.store;
    const get = (table: string, pk: string, rk: string) => raw.getEntity(table, pk, rk);

    // 1. A remote copy deleted: missing.
    expect(await raw.delete(tables.byName, "L1", "Sales_000001", "*")).toBe(true);
    // 2. A remote projected copy and a local copy with a changed property: stale.
    const age2 = await get(tables.byAge, "age_022", "Sales_000002");
    await putRaw(raw, tables.byAge, { ...bare(age2!), firstName: "Tampered" });
    const email3 = await get(tables.entities, "Sales", "email_e3v3@x.com");
    await putRaw(raw, tables.entities, { ...bare(email3!), age: 99 });
    // 3. Orphans: a copy for a value employee 4 never had, one whose entity does not exist, one
    //    naming no entity, and a sparse copy for employee 6 who has no badge.
    const name4 = await get(tables.byName, "L4", "Sales_000004");
    await putRaw(raw, tables.byName, { ...bare(name4!), partitionKey: "Ghost" });
    await putRaw(raw, tables.byName, {
      ...bare(name4!),
      rowKey: "Sales_000099",
      _tkSourceRK: "empid_000099",
    });
    const { _tkSourcePK: _pk, _tkSourceRK: _rk, ...unowned } = bare(name4!);
    await putRaw(raw, tables.byName, { ...unowned, partitionKey: "Nobody" });
    const badge5 = await get(tables.entities, "badges", "badge_B5v5");
    await putRaw(raw, tables.entities, {
      ...bare(badge5!),
      rowKey: "badge_B6v3",
      employeeId: 6,
      _tkSourceRK: "empid_000006",
    });
    // 4. An entity row changed behind the library's back: it points to a value whose copy never
    //    existed (missing), its old copy is left (orphan), and copies carrying lastName are stale.
    const entity5 = await get(tables.entities, "Sales", "empid_000005");
    await putRaw(raw, tables.entities, { ...bare(entity5!), lastName: "Vanished" });
    // Rows of other types and unrelated rows in the index tables are none of verify's business.
    await putRaw(raw, tables.byName, {
      partitionKey: "Other",
      rowKey: "x",
      _tkIndex: "byLastName",
      EntityType: "Other@1",
    });
    await putRaw(raw, tables.byAge, { partitionKey: "Plain", rowKey: "y", note: "not a copy" });

    const drift = await db.verifyIndexes(RxEmployee);
    expect(drift).toEqual({
      missing: [
        ref("byLastName", tables.byName, "L1", "Sales_000001"),
        ref("byLastName", tables.byName, "Vanished", "Sales_000005"),
      ],
      stale: [
        ref("byEmail", tables.entities, "Sales", "email_e3v3@x.com"),
        ref("byEmail", tables.entities, "Sales", "email_e5v5@x.com"),
        ref("byBadge", tables.entities, "badges", "badge_B5v5"),
        ref("byAge", tables.byAge, "age_022", "Sales_000002"),
      ].sort(byTableAndKeys),
      orphans: [
        ref("byBadge", tables.entities, "badges", "badge_B6v3"),
        ref("byLastName", tables.byName, "Ghost", "Sales_000004"),
        ref("byLastName", tables.byName, "L0", "Sales_000005"),
        ref("byLastName", tables.byName, "L4", "Sales_000099"),
        ref("byLastName", tables.byName, "Nobody", "Sales_000004"),
      ].sort(byTableAndKeys),
    });

    // Without scan there is no unfinished work: nothing changes.
    expect(await db.repairIndexes(RxEmployee)).toEqual({
      intentsReplayed: 0,
      copiesWritten: 0,
      copiesDeleted: 0,
      poisoned: 0,
    });
    expect(await db.verifyIndexes(RxEmployee)).toEqual(drift);

    store.reset();
    // The 6 copies missing or stale, and employee 5's byAge copy: its values are right, but its
    // stamp names the version before the change behind the library's back (the list rewrite's
    // version is stamped on every copy elsewhere the repair touches).
    expect(await db.repairIndexes(RxEmployee, { scan: true })).toEqual({
      intentsReplayed: 0,
      copiesWritten: 7,
      copiesDeleted: 5,
      poisoned: 0,
    });
    await expectNoDrift(db);
    // Employee 5's copy list now matches its values, so a normal write moves its copies correctly.
    const e5 = await employees.getOrThrow({ department: "Sales", employeeId: 5 });
    expect(e5.lastName).toBe("Vanished");
    Object.assign(e5, rxEmployee("Sales", 5, 7));
    await employees.update(e5);
    await expectNoDrift(db);
    expect((await rowsOf(raw, tables.byName)).map((r) => `${r.partitionKey}|${r.rowKey}`).sort()).toEqual([
      "L1|Sales_000001",
      "L2|Sales_000002",
      "L2|Sales_000005",
      "L3|Sales_000003",
      "L3|Sales_000006",
      "L4|Sales_000004",
      "Other|x",
    ]);
    // The entity rows themselves were never touched by the copy repairs.
    expect((await employees.getOrThrow({ department: "Sales", employeeId: 3 })).age).toBe(23);
  });

  it("copies written before stamps: verified clean, left alone by repair, removed by the next write", async () => {
    const { db, tables } = await crashContext(kind);
    const employees = db.repository(RxEmployee);
    await employees.insert(rxEmployee("Ops", 1, 1));
    // Every copy elsewhere (byLastName, byAge, byBadge) as a release before stamps wrote it.
    const elsewhere = [
      [tables.byName, "L1", "Ops_000001"],
      [tables.byAge, "age_021", "Ops_000001"],
      [tables.entities, "badges", "badge_B1v1"],
    ] as const;
    for (const [table, pk, rk] of elsewhere) {
      const copy = await db.store.getEntity(table, pk, rk);
      expect(copy?._tkStamp).toEqual(expect.any(String));
      const { _tkStamp: _stamp, ...unstamped } = bare(copy!);
      await putRaw(db.store, table, unstamped);
    }
    await expectNoDrift(db);
    expect(await db.repairIndexes(RxEmployee, { scan: true })).toMatchObject({
      copiesWritten: 0,
      copiesDeleted: 0,
    });
    // Version 2 moves every one of them: the unstamped copies are removed, the new ones stamped.
    const e = await employees.getOrThrow({ department: "Ops", employeeId: 1 });
    Object.assign(e, rxEmployee("Ops", 1, 2));
    await employees.update(e);
    await expectNoDrift(db);
    for (const [table, pk, rk] of elsewhere) expect(await db.store.getEntity(table, pk, rk)).toBeUndefined();
  });

  it("fix an entity row whose copy list disagrees with its values", async () => {
    const { db, tables } = await crashContext(kind);
    const employees = db.repository(RxEmployee);
    await employees.insert(rxEmployee("Ops", 1, 1));
    const row = await db.store.getEntity(tables.entities, "Ops", "empid_000001");
    // A row written without a copy list (e.g. before the indexes existed): copies look fine...
    const { _tkIndexKeys: _keys, ...withoutList } = bare(row!);
    await putRaw(db.store, tables.entities, withoutList);
    await expectNoDrift(db);
    // ...and a scan repair restores the list, so the next write removes the old copies. The list's
    // rewrite is a new version of the entity: its 3 copies elsewhere (byLastName, byAge, byBadge)
    // are stamped with it, their values unchanged.
    expect(await db.repairIndexes(RxEmployee, { scan: true })).toMatchObject({
      copiesWritten: 3,
      copiesDeleted: 0,
    });
    expect((await db.store.getEntity(tables.entities, "Ops", "empid_000001"))?._tkIndexKeys).toBe(
      row?._tkIndexKeys,
    );
    await employees.upsert(rxEmployee("Ops", 1, 2));
    await expectNoDrift(db);
  });
});

function byTableAndKeys(a: { table: string; partitionKey: string; rowKey: string }, b: typeof a): number {
  return `${a.table}\u0000${a.partitionKey}\u0000${a.rowKey}` <
    `${b.table}\u0000${b.partitionKey}\u0000${b.rowKey}`
    ? -1
    : 1;
}
