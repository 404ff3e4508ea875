import { describe, expect, it } from "vitest";
import {
  ConcurrencyError,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  etagOf,
  ValidationError,
} from "../../src/index.js";
import { freshContext, stores } from "../fixtures/context.js";
import { Employee, employee } from "../fixtures/models.js";

describe.each(stores)("repository writes and point reads on %s", (_name, kind) => {
  it("stores the design guide's keys and reads the entity back by them", async () => {
    const { db } = await freshContext(kind, [Employee]);
    const employees = db.repository(Employee);
    await employees.insert(employee("Sales", 223, { email: "jonesj@contoso.com", lastName: "Jones" }));
    const row = await db.store.getEntity(employees.table, "Sales", "empid_000223");
    expect(row?.lastName).toBe("Jones");
    expect(row?.EntityType).toBe("Employee@1");
    const found = await employees.get({ department: "Sales", employeeId: 223 });
    expect(found).toBeInstanceOf(Employee);
    expect(found).toMatchObject({ department: "Sales", employeeId: 223, email: "jonesj@contoso.com" });
    expect(etagOf(found as Employee)).toBe(row?.etag);
  });

  it("insert fails on an existing key; get is undefined and getOrThrow throws when absent", async () => {
    const { db } = await freshContext(kind, [Employee]);
    const employees = db.repository(Employee);
    await employees.insert(employee("Sales", 1));
    await expect(employees.insert(employee("Sales", 1))).rejects.toBeInstanceOf(EntityAlreadyExistsError);
    expect(await employees.get({ department: "Sales", employeeId: 2 })).toBeUndefined();
    const error = await employees.getOrThrow({ department: "Sales", employeeId: 2 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EntityNotFoundError);
    expect(error).toMatchObject({ code: "ENTITY_NOT_FOUND", partitionKey: "Sales", rowKey: "empid_000002" });
  });

  it("upsert replaces by default and merges on request", async () => {
    const { db } = await freshContext(kind, [Employee]);
    const employees = db.repository(Employee);
    await employees.upsert(employee("Sales", 5, { firstName: "Ann", age: 30 }));
    const partial = Object.assign(new Employee(), { department: "Sales", employeeId: 5, age: 31 });
    await employees.upsert(partial, { mode: "merge" });
    expect(await employees.get({ department: "Sales", employeeId: 5 })).toMatchObject({
      firstName: "Ann",
      age: 31,
    });
    await employees.upsert(partial);
    const replaced = await employees.get({ department: "Sales", employeeId: 5 });
    expect(replaced?.age).toBe(31);
    expect(replaced?.firstName).toBeUndefined();
  });

  it("update uses the tracked ETag: a stale copy gets ConcurrencyError and nothing is lost", async () => {
    const { db } = await freshContext(kind, [Employee]);
    const employees = db.repository(Employee);
    await employees.insert(employee("Sales", 9, { age: 40 }));
    const mine = await employees.getOrThrow({ department: "Sales", employeeId: 9 });
    const theirs = await employees.getOrThrow({ department: "Sales", employeeId: 9 });
    theirs.age = 41;
    await employees.update(theirs);
    expect(etagOf(theirs)).not.toBe(etagOf(mine));
    mine.age = 99;
    await expect(employees.update(mine)).rejects.toBeInstanceOf(ConcurrencyError);
    expect((await employees.getOrThrow({ department: "Sales", employeeId: 9 })).age).toBe(41);
    // An explicit wildcard overwrites unconditionally.
    await employees.update(mine, { ifMatch: "*", mode: "merge" });
    expect((await employees.getOrThrow({ department: "Sales", employeeId: 9 })).age).toBe(99);
  });

  it("update without a known ETag is a ValidationError; update of a missing entity is EntityNotFoundError", async () => {
    const { db, counter } = await freshContext(kind, [Employee]);
    const employees = db.repository(Employee);
    await expect(employees.update(employee("Sales", 3))).rejects.toBeInstanceOf(ValidationError);
    expect(counter.requests).toBe(0);
    await expect(employees.update(employee("Sales", 3), { ifMatch: "*" })).rejects.toBeInstanceOf(
      EntityNotFoundError,
    );
  });

  it("delete is idempotent and reports whether the entity existed", async () => {
    const { db } = await freshContext(kind, [Employee]);
    const employees = db.repository(Employee);
    await employees.insert(employee("Sales", 7));
    expect(await employees.delete({ department: "Sales", employeeId: 7 })).toBe(true);
    expect(await employees.delete({ department: "Sales", employeeId: 7 })).toBe(false);
    expect(await employees.get({ department: "Sales", employeeId: 7 })).toBeUndefined();
  });

  it("delete of an entity read earlier is conditional on its ETag", async () => {
    const { db } = await freshContext(kind, [Employee]);
    const employees = db.repository(Employee);
    await employees.insert(employee("Sales", 8));
    const stale = await employees.getOrThrow({ department: "Sales", employeeId: 8 });
    await employees.upsert(employee("Sales", 8, { age: 50 }));
    await expect(employees.delete(stale)).rejects.toBeInstanceOf(ConcurrencyError);
    expect(await employees.get({ department: "Sales", employeeId: 8 })).toBeDefined();
  });

  it("point reads project with select and still carry key fields", async () => {
    const { db } = await freshContext(kind, [Employee]);
    const employees = db.repository(Employee);
    await employees.insert(employee("Sales", 11, { firstName: "Zed", lastName: "Zed" }));
    const found = await employees.get({ department: "Sales", employeeId: 11 }, { select: ["firstName"] });
    expect(found).toMatchObject({ department: "Sales", employeeId: 11, firstName: "Zed" });
    expect((found as Partial<Employee> | undefined)?.lastName).toBeUndefined();
  });
});
