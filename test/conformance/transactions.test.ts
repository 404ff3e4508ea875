import { describe, expect, it } from "vitest";
import { etagOf, TransactionError } from "../../src/index.js";
import { freshContext, stores } from "../fixtures/context.js";
import { Employee, employee } from "../fixtures/models.js";

describe.each(stores)("transactions on %s", (_name, kind) => {
  it("commits inserts, merges and deletes atomically and tracks the new ETags", async () => {
    const { db, counter } = await freshContext(kind, [Employee]);
    const employees = db.repository(Employee);
    await employees.insert(employee("Sales", 7));
    const existing = await employees.getOrThrow({ department: "Sales", employeeId: 7 });
    const before = etagOf(existing);
    const fresh = employee("Sales", 1);
    const merged = Object.assign(new Employee(), { department: "Sales", employeeId: 2, age: 77 });
    counter.reset();
    const result = await db.transaction((tx) => {
      tx.insert(fresh);
      tx.upsert(merged, { mode: "merge" });
      tx.delete(Employee, existing);
    });
    expect(counter.requests).toBe(1);
    expect(result.etags).toHaveLength(3);
    expect(etagOf(fresh)).toBe(result.etags[0]);
    expect(etagOf(fresh)).not.toBe(before);
    const rows = await employees.find({ department: "Sales" }).toArray();
    expect(rows.map((e) => [e.employeeId, e.age])).toEqual([
      [1, fresh.age],
      [2, 77],
    ]);
  });

  it("writes nothing when one operation fails, and says which", async () => {
    const { db } = await freshContext(kind, [Employee]);
    const employees = db.repository(Employee);
    await employees.insert(employee("Sales", 3, { age: 33 }));
    const error = await db
      .transaction((tx) => {
        tx.insert(employee("Sales", 1));
        tx.upsert(employee("Sales", 2));
        tx.insert(employee("Sales", 3, { age: 99 }));
        tx.insert(employee("Sales", 4));
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransactionError);
    expect(error).toMatchObject({
      code: "TRANSACTION",
      outcomeUnknown: false,
      index: 2,
      partitionKey: "Sales",
      rowKey: "empid_000003",
    });
    const rows = await employees.find({ department: "Sales" }).toArray();
    expect(rows.map((e) => [e.employeeId, e.age])).toEqual([[3, 33]]);
  });

  it("a stale ETag inside a transaction fails it at that operation", async () => {
    const { db } = await freshContext(kind, [Employee]);
    const employees = db.repository(Employee);
    await employees.insert(employee("Sales", 5));
    const stale = await employees.getOrThrow({ department: "Sales", employeeId: 5 });
    await employees.upsert(employee("Sales", 5, { age: 55 }));
    stale.age = 1;
    const error = await db
      .transaction((tx) => {
        tx.insert(employee("Sales", 6));
        tx.update(stale);
      })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ index: 1, statusCode: 412 });
    expect(await employees.get({ department: "Sales", employeeId: 6 })).toBeUndefined();
    expect((await employees.getOrThrow({ department: "Sales", employeeId: 5 })).age).toBe(55);
  });
});
