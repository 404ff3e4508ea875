/**
 * Under exactOptionalPropertyTypes users pass `undefined` for options they do not have
 * (`page({ continuation: last.continuation })`): every option given as undefined behaves as absent.
 */
import { describe, expect, it } from "vitest";
import { etagOf, MemoryStore, TableContext } from "../../src/index.js";
import { freshContext, stores } from "../fixtures/context.js";
import { Employee, employee } from "../fixtures/models.js";

describe.each(stores)("options given as undefined on %s", (_name, kind) => {
  it("writes, reads and pages as with the options left out", async () => {
    const { db } = await freshContext(kind, [Employee], { retry: undefined, onEvent: undefined });
    const employees = db.repository(Employee);
    const bulk = await employees.bulkInsert(
      [employee("Sales", 1), employee("Sales", 2), employee("Sales", 3)],
      {
        concurrency: undefined,
        onProgress: undefined,
        signal: undefined,
        stopOnError: undefined,
        maxBufferedUnits: undefined,
      },
    );
    expect(bulk.written).toBe(3);

    // mode undefined is the default, replace: a property left out is dropped.
    const replaced = employee("Sales", 1, { age: 50 });
    await employees.upsert(Object.assign(replaced, { email: undefined }), { mode: undefined });
    const stored = await employees.get({ department: "Sales", employeeId: 1 }, { select: undefined });
    expect(stored?.age).toBe(50);
    expect(stored?.email).toBeUndefined();

    // ifMatch undefined means the tracked ETag: a read entity updates, an untracked copy is refused.
    const stale = employee("Sales", 2);
    const fresh = await employees.getOrThrow({ department: "Sales", employeeId: 2 });
    await employees.update(fresh, { mode: undefined, ifMatch: undefined });
    Object.assign(stale, { age: 1 });
    await expect(employees.update(stale, { ifMatch: undefined })).rejects.toMatchObject({
      code: "VALIDATION",
    });
    expect(etagOf(fresh)).not.toBe(etagOf(stale));

    const changed = await employees.mutate(
      { department: "Sales", employeeId: 3 },
      (e) => {
        e.age = 99;
      },
      { attempts: undefined, create: undefined },
    );
    expect(changed?.age).toBe(99);

    // A page's continuation goes back in as it is; undefined starts from the beginning.
    const query = employees.find({ department: "Sales" });
    const first = await query.page({ size: 2, continuation: undefined });
    const second = await query.page({ size: undefined, continuation: first.continuation });
    expect([...first.items, ...second.items].map((e) => e.employeeId)).toEqual([1, 2, 3]);
    expect(second.continuation).toBeUndefined();

    expect(await employees.delete({ department: "Sales", employeeId: 3 }, { ifMatch: undefined })).toBe(true);
    expect(await db.repairIndexes(Employee, { scan: undefined, minIntentAgeMs: undefined })).toBeDefined();
  });
});

describe("store and context options given as undefined", () => {
  it("use their defaults", async () => {
    const db = new TableContext({
      store: new MemoryStore({ file: undefined, pageBreaks: undefined, flavor: undefined, seed: undefined }),
      retry: { retries: undefined, minDelayMs: undefined, maxDelayMs: undefined },
      tablePrefix: undefined,
    });
    await db.ensureTables(Employee);
    const employees = db.repository(Employee);
    await employees.insert(employee("Sales", 1));
    expect(employees.table).toBe("Employees");
    expect(db.store.capabilities.sortedResults).toBe(true);
  });
});
