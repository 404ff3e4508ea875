import { describe, expect, it } from "vitest";
import { TableContext } from "../../src/index.js";
import { stores } from "../fixtures/context.js";
import { crashContext, expectNoDrift, putRaw, ref, rowsOf } from "./helpers.js";
import { RxEmployee, RxEmployeeV2, rxEmployee } from "./models.js";

describe.each(stores)("repairIndexes edge cases on %s", (_name, kind) => {
  it("sets an intent aside after 5 failed replays, and leaves other types' intents alone", async () => {
    const { db, tables } = await crashContext(kind);
    const employees = db.repository(RxEmployee);
    await employees.insert(rxEmployee("Ops", 1, 1));
    // The projected copy's key is taken by a row that is no copy at all: replay cannot write it.
    expect(await db.store.delete(tables.byAge, "age_021", "Ops_000001", "*")).toBe(true);
    await putRaw(db.store, tables.byAge, { partitionKey: "age_021", rowKey: "Ops_000001", note: "squatter" });
    const intent = {
      partitionKey: "RxEmployee~3",
      rowKey: "000000000000001_abc",
      table: tables.entities,
      sourcePartitionKey: "Ops",
      sourceRowKey: "empid_000001",
      refs: JSON.stringify([["byAge", tables.byAge, "age_021", "Ops_000001"]]),
      attempts: 0,
    };
    await putRaw(db.store, tables.intents, intent);
    const foreign = { ...intent, partitionKey: "SomethingElse~3" };
    await putRaw(db.store, tables.intents, foreign);

    for (let run = 1; run <= 4; run++) {
      expect(await db.repairIndexes(RxEmployee)).toEqual({
        intentsReplayed: 0,
        copiesWritten: 0,
        copiesDeleted: 0,
        poisoned: 0,
      });
      const [kept] = (await rowsOf(db.store, tables.intents)).filter(
        (r) => r.partitionKey === "RxEmployee~3",
      );
      expect(kept?.attempts).toBe(run);
    }
    expect(await db.repairIndexes(RxEmployee)).toMatchObject({ intentsReplayed: 0, poisoned: 1 });
    const rows = await rowsOf(db.store, tables.intents);
    expect(rows.map((r) => r.partitionKey).sort()).toEqual(["SomethingElse~3", "poison~RxEmployee"]);
    const poisoned = rows.find((r) => r.partitionKey === "poison~RxEmployee");
    expect(poisoned).toMatchObject({
      rowKey: intent.rowKey,
      sourcePartitionKey: "Ops",
      sourceRowKey: "empid_000001",
      attempts: 5,
      shard: "RxEmployee~3",
    });
    expect(String(poisoned?.error)).toContain("held by another entity");
    // Set aside: never replayed again.
    expect(await db.repairIndexes(RxEmployee)).toMatchObject({ intentsReplayed: 0, poisoned: 0 });
    expect(await db.verifyIndexes(RxEmployee)).toEqual({
      missing: [ref("byAge", tables.byAge, "age_021", "Ops_000001")],
      stale: [],
      orphans: [],
    });
  });

  it("does not resurrect a copy of a value the entity loses while the copy is being repaired", async () => {
    const { db, store, prefix, tables } = await crashContext(kind);
    const employees = db.repository(RxEmployee);
    await employees.insert(rxEmployee("Ops", 1, 1));
    // Unfinished work: an update to version 2 that died right after recording its intent.
    const e = await employees.getOrThrow({ department: "Ops", employeeId: 1 });
    store.arm(2, "crash");
    await expect(employees.update(Object.assign(e, rxEmployee("Ops", 1, 2)))).rejects.toThrow();
    store.reset();
    // ...and a copy of the current value lost, so the replay has to write it.
    expect(await db.store.delete(tables.byName, "L1", "Ops_000001", "*")).toBe(true);
    // Just before the replay writes that copy, another process moves the entity to version 3.
    const other = new TableContext({ store: store.inner, tablePrefix: prefix });
    let fired = false;
    store.before(
      (method, table) => method === "insert" && table === tables.byName,
      async () => {
        await other.repository(RxEmployee).upsert(rxEmployee("Ops", 1, 3));
        fired = true;
      },
    );
    const result = await db.repairIndexes(RxEmployee);
    expect(fired).toBe(true);
    expect(result).toMatchObject({ intentsReplayed: 1, poisoned: 0 });
    // The copy written for version 1 was taken back once the entity was seen to have moved.
    expect(result.copiesDeleted).toBeGreaterThanOrEqual(1);
    await expectNoDrift(db);
    expect((await rowsOf(db.store, tables.byName)).map((r) => r.partitionKey)).toEqual(["L3"]);
    expect(await rowsOf(db.store, tables.intents)).toEqual([]);
  });

  it("does not delete a copy the entity comes to derive while the replay runs", async () => {
    const { db, store, prefix, tables } = await crashContext(kind);
    const employees = db.repository(RxEmployee);
    // An insert that died after claiming its remote values, before the entity was written.
    store.arm(5, "crash");
    await expect(employees.insert(rxEmployee("Ops", 1, 1))).rejects.toThrow();
    // Intent, three claims (name, age, badge), then the entity's transaction: the crash.
    expect(store.log.slice(1)).toEqual(["insert", "insert", "insert", "submitTransaction"]);
    store.reset();
    expect(await employees.get({ department: "Ops", employeeId: 1 })).toBeUndefined();
    // The replay sees no entity, so the claims are stale... until the writer's retry lands just
    // before the replay deletes the first of them.
    const other = new TableContext({ store: store.inner, tablePrefix: prefix });
    let fired = false;
    store.before(
      (method) => method === "delete",
      async () => {
        await other.repository(RxEmployee).insert(rxEmployee("Ops", 1, 1));
        fired = true;
      },
    );
    const result = await db.repairIndexes(RxEmployee);
    expect(fired).toBe(true);
    expect(result).toMatchObject({ intentsReplayed: 1, poisoned: 0 });
    await expectNoDrift(db);
    expect(await employees.get({ department: "Ops", employeeId: 1 })).toBeDefined();
    expect(await rowsOf(db.store, tables.intents)).toEqual([]);
  });

  it("judges rows of older versions as upcast now, and leaves rows of newer versions to newer code", async () => {
    const { db, store, prefix, tables } = await crashContext(kind);
    const v2 = new TableContext({ store, tablePrefix: prefix, retry: false });
    await db.repository(RxEmployee).insert(rxEmployee("Ops", 1, 1));
    // Version 2 reads employee 1 with lastName "UpL1": its copies are due to move and be refreshed.
    const drift = await v2.verifyIndexes(RxEmployeeV2);
    expect(drift.missing).toContainEqual(ref("byLastName", tables.byName, "UpL1", "Ops_000001"));
    expect(drift.orphans).toEqual([ref("byLastName", tables.byName, "L1", "Ops_000001")]);
    await v2.repairIndexes(RxEmployeeV2, { scan: true });
    expect(await v2.verifyIndexes(RxEmployeeV2)).toEqual({ missing: [], stale: [], orphans: [] });
    const found = await v2
      .repository(RxEmployeeV2)
      .index("byLastName")
      .get({ lastName: "UpL1", department: "Ops", employeeId: 1 });
    expect(found?.employeeId).toBe(1);

    // A version-2 insert dies after its transaction: version-1 code neither judges nor replays it.
    // Requests: intent, three claims, the transaction, then the crash instead of removing the intent.
    store.arm(6, "crash");
    await expect(v2.repository(RxEmployeeV2).insert(rxEmployee("Ops", 2, 1))).rejects.toThrow();
    store.reset();
    const before = await db.verifyIndexes(RxEmployee);
    expect(before.orphans.filter((r) => r.rowKey === "Ops_000002" || r.rowKey.includes("B2v1"))).toEqual([]);
    expect(await db.repairIndexes(RxEmployee)).toMatchObject({ intentsReplayed: 0, poisoned: 0 });
    expect(await rowsOf(db.store, tables.intents)).toHaveLength(1);
    expect(await v2.repairIndexes(RxEmployeeV2)).toMatchObject({ intentsReplayed: 1, poisoned: 0 });
    expect(await rowsOf(db.store, tables.intents)).toEqual([]);
  });

  // Two writers of one entity can finish their remote copies in the wrong order (the later
  // writer's copies land first); each writer re-reads the entity before it lets go of its intent
  // and reconciles when it changed, so the copies end current.
  it("two concurrent writers of one entity leave its remote copies current", async () => {
    const { db, store, prefix, tables } = await crashContext(kind);
    const employees = db.repository(RxEmployee);
    await employees.insert(rxEmployee("Ops", 1, 1));
    const e = await employees.getOrThrow({ department: "Ops", employeeId: 1 });
    const other = new TableContext({ store: store.inner, tablePrefix: prefix });
    store.before(
      // Between the first writer's transaction and its remote copies.
      (method, table) => method === "upsert" && table === tables.byName,
      async () => {
        const later = await other.repository(RxEmployee).getOrThrow({ department: "Ops", employeeId: 1 });
        await other.repository(RxEmployee).update(Object.assign(later, rxEmployee("Ops", 1, 61)));
      },
    );
    // Versions 1, 31 and 61 share lastName and age: the remote copies keep their keys.
    await employees.update(Object.assign(e, rxEmployee("Ops", 1, 31)));
    await expectNoDrift(db);
  });

  // A repair that runs while a writer is between its claims and its transaction cannot tell the
  // writer's intent from a crashed one's; `minIntentAgeMs` leaves young intents to their writers.
  it("a repair next to live writers leaves intents younger than minIntentAgeMs alone", async () => {
    const { db, store, prefix, tables } = await crashContext(kind);
    const repairer = new TableContext({ store: store.inner, tablePrefix: prefix });
    let skipped: Awaited<ReturnType<TableContext["repairIndexes"]>> | undefined;
    store.before(
      (method, table) => method === "submitTransaction" && table === tables.entities,
      async () => {
        skipped = await repairer.repairIndexes(RxEmployee, { minIntentAgeMs: 60_000 });
      },
    );
    await db.repository(RxEmployee).insert(rxEmployee("Ops", 1, 1));
    expect(skipped).toMatchObject({ intentsReplayed: 0, copiesDeleted: 0 });
    await expectNoDrift(db);
  });
});
