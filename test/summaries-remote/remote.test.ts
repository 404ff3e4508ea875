/**
 * Summaries kept in another partition (and table): each source partition's exact local row is
 * mirrored as one contribution row there; reads add them up. Expected values are recounted from the
 * stored entity rows, never copied from a summary.
 */
import { describe, expect, it } from "vitest";
import { Column, Entity, TableContext, ValidationError } from "../../src/index.js";
import { freshContext, stores } from "../fixtures/context.js";
import { CountingStore } from "../support/counting-store.js";
import { readAll } from "../support/read-all.js";
import { employee, expectExact, RsEmployee, recount } from "./models.js";

/** A remote summary in the entity's own table, with a template that cannot hold every year. */
@Entity({
  table: "RsYears",
  partitionKey: "{year}",
  rowKey: "{id}",
  summaries: { perCentury: { partitionKey: "y{year:2}", rowKey: "years", count: "n" } },
})
class RsYear {
  @Column({ type: "Int32" }) year!: number;
  @Column({ type: "String" }) id!: string;
}

describe.each(stores)("summaries in another partition, on %s", (_name, kind) => {
  it("bad values are a ValidationError before any request; db.transaction and db.eventually keep it exact", async () => {
    const { db, counter, prefix } = await freshContext(kind, [RsEmployee, RsYear]);
    const years = db.repository(RsYear);
    await expect(years.insert(Object.assign(new RsYear(), { year: 2026, id: "a" }))).rejects.toBeInstanceOf(
      ValidationError,
    );
    // A RowKey of the summary's rows in the entity's own table.
    await expect(
      years.insert(Object.assign(new RsYear(), { year: 26, id: "years~26" })),
    ).rejects.toBeInstanceOf(ValidationError);
    await expect(db.repository(RsEmployee).summary("perRegion", {})).rejects.toBeInstanceOf(ValidationError);
    expect(counter.requests).toBe(0);
    await years.insert(Object.assign(new RsYear(), { year: 26, id: "a" }));
    expect(await years.summary("perCentury", { year: 26 })).toEqual({ n: 1 });
    // The partition's summary rows ride in the transaction; the remote ones follow through an intent.
    await db.transaction((tx) => {
      tx.insert(employee("eu", "sales", 7, 70));
      tx.insert(employee("eu", "sales", 8, 80));
    });
    await expectExact(db, prefix, ["eu"], "after db.transaction");
    await db.transaction((tx) => {
      tx.delete(RsEmployee, { region: "eu", department: "sales", employeeId: 7 });
      tx.delete(RsEmployee, { region: "eu", department: "sales", employeeId: 8 });
    });
    await db.eventually((tx) => {
      tx.insert(employee("eu", "sales", 1, 10));
      tx.insert(employee("us", "ops", 2, 20, 3n));
    });
    await db.eventually((tx) => {
      tx.delete(RsEmployee, { region: "eu", department: "sales", employeeId: 1 });
      tx.upsert(employee("eu", "hr", 3, 30));
    });
    await expectExact(db, prefix, ["eu", "us"], "after db.eventually");
    expect((await recount(db.store, prefix)).global.employees).toBe(2);
  });

  it("follow inserts, updates, upserts, deletes and bulk writes; zeros before any write", async () => {
    const { db, prefix } = await freshContext(kind, [RsEmployee]);
    const employees = db.repository(RsEmployee);
    expect(await employees.summary("global", {})).toEqual({ employees: 0, totalSalary: 0, totalBonus: 0n });
    expect(await employees.summary("perRegion", { region: "eu" })).toEqual({ n: 0, salary: 0 });
    await employees.insert(employee("eu", "sales", 1, 100, 5n));
    await employees.insert(employee("eu", "ops", 2, 200));
    await employees.insert(employee("us", "sales", 3, 300, 7n));
    await expectExact(db, prefix, ["eu", "us"], "after inserts");
    const one = await employees.getOrThrow({ region: "eu", department: "sales", employeeId: 1 });
    one.salary = 150;
    await employees.update(one);
    await employees.upsert(employee("us", "sales", 3, 330));
    await employees.upsert(employee("us", "ops", 4, 400, 1n));
    await employees.delete({ region: "eu", department: "ops", employeeId: 2 });
    await expectExact(db, prefix, ["eu", "us"], "after changes");
    const bulk = Array.from({ length: 150 }, (_, i) =>
      employee(i % 2 ? "eu" : "us", `d${i % 3}`, 100 + i, i, BigInt(i)),
    );
    const inserted = await employees.bulkInsert(bulk);
    expect(inserted.failed).toEqual([]);
    await expectExact(db, prefix, ["eu", "us"], "after bulk insert");
    const deleted = await employees.bulkDelete(bulk.slice(0, 70));
    expect(deleted.failed).toEqual([]);
    await expectExact(db, prefix, ["eu", "us", "asia"], "after bulk delete");
    expect((await recount(db.store, prefix)).global.employees).toBe(83);
  });

  it("an insert costs intent + transaction + contribution + intent removal when warm; the remote rows live in their table", async () => {
    const { db, counter, prefix } = await freshContext(kind, [RsEmployee]);
    const employees = db.repository(RsEmployee);
    await employees.insert(employee("eu", "sales", 1, 100));
    counter.reset();
    await employees.insert(employee("eu", "sales", 2, 100));
    // intent, transaction (entity + 3 summary rows), 2 contributions (global, perRegion), intent removal.
    expect(counter.requests).toBe(5);
    // Another store object: another scope, whose caches know no summary row yet.
    const coldCounter = new CountingStore(db.store);
    const cold = new TableContext({ store: coldCounter, tablePrefix: prefix });
    await cold.repository(RsEmployee).insert(employee("eu", "sales", 3, 100));
    // + the 3 local summary rows and the 2 contributions read first.
    expect(coldCounter.requests).toBe(10);
    const stats = await readAll(db.store, `${prefix}RsStats`);
    expect(stats.map((row) => `${row.partitionKey}/${row.rowKey}`).sort()).toEqual([
      "eu/region~eu_sales",
      "totals/employees~eu_sales",
    ]);
    // Every intent was removed.
    expect(await readAll(db.store, `${prefix}TablekitIntents`)).toEqual([]);
  });

  it("verifySummaries reports a contribution that drifted; repairSummaries fixes it", async () => {
    const { db, prefix } = await freshContext(kind, [RsEmployee]);
    const employees = db.repository(RsEmployee);
    await employees.insert(employee("eu", "sales", 1, 100));
    await employees.insert(employee("us", "ops", 2, 50));
    // A write behind the repository's back: neither summary knows it.
    await db.dynamic("RsEmployees").insert({
      partitionKey: "eu_sales",
      rowKey: "emp_000009",
      EntityType: "RsEmployee@1",
      region: "eu",
      department: "sales",
      employeeId: 9,
      salary: 1000,
    });
    const drift = await db.verifySummaries(RsEmployee);
    expect(drift.map((d) => `${d.summary} ${d.partitionKey} ${d.sourcePartitionKey ?? ""}`).sort()).toEqual([
      "global totals eu_sales",
      "local eu_sales ",
      "perRegion eu eu_sales",
    ]);
    const global = drift.find((d) => d.summary === "global");
    expect(global).toMatchObject({
      table: `${prefix}RsStats`,
      rowKey: "employees~eu_sales",
      stored: { employees: 1, totalSalary: 100 },
      actual: { employees: 2, totalSalary: 1100 },
    });
    await db.repairSummaries(RsEmployee);
    await expectExact(db, prefix, ["eu", "us"]);
  });
});
