import { describe, expect, it } from "vitest";
import { Column, Entity, ValidationError } from "../../src/index.js";
import { freshContext, stores } from "../fixtures/context.js";
import { seededRandom, testSeed } from "../support/seeded-random.js";

const SEED = testSeed(16);

/** All employees named X in a department (same partition), and across departments (another table). */
@Entity({
  table: "ListEmployees",
  partitionKey: "{department}",
  rowKey: "empid_{employeeId:6}",
  indexes: {
    byLastName: { list: true, rowKey: "lastname_{lastName}" },
    byCity: { list: true, table: "ListEmployeesByCity", partitionKey: "{city}", rowKey: "city" },
  },
})
class Employee {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "String" }) lastName!: string;
  @Column({ type: "String" }) city!: string;
}

const person = (department: string, employeeId: number, lastName: string, city = "Paris") =>
  Object.assign(new Employee(), { department, employeeId, lastName, city });

const ids = (items: Employee[]) => items.map((e) => `${e.department}/${e.employeeId}`);

describe.each(stores)("index entities (list indexes) on %s", (_name, kind) => {
  it("lists every entity with a value, follows changes, and forgets deleted ones", async () => {
    const { db } = await freshContext(kind, [Employee]);
    const employees = db.repository(Employee);
    for (const [id, name] of [
      [1, "Jones"],
      [2, "Smith"],
      [3, "Jones"],
      [4, "Jones"],
    ] as const) {
      await employees.insert(person("Sales", id, name, id % 2 ? "Paris" : "Oslo"));
    }
    await employees.insert(person("Ops", 9, "Jones", "Oslo"));
    const jones = employees.index("byLastName").find({ department: "Sales", lastName: "Jones" });
    expect(jones.explain().kind).toBe("range");
    expect(ids(await jones.toArray())).toEqual(["Sales/1", "Sales/3", "Sales/4"]);
    const moved = await employees.getOrThrow({ department: "Sales", employeeId: 3 });
    moved.lastName = "Smith";
    moved.city = "Oslo";
    await employees.update(moved);
    await employees.delete({ department: "Sales", employeeId: 4 });
    expect(
      ids(await employees.index("byLastName").find({ department: "Sales", lastName: "Jones" }).toArray()),
    ).toEqual(["Sales/1"]);
    expect(
      ids(await employees.index("byLastName").find({ department: "Sales", lastName: "Smith" }).toArray()),
    ).toEqual(["Sales/2", "Sales/3"]);
    expect(ids(await employees.index("byCity").find({ city: "Oslo" }).toArray())).toEqual([
      "Ops/9",
      "Sales/2",
      "Sales/3",
    ]);
    expect(ids(await employees.index("byCity").find({ city: "Paris" }).toArray())).toEqual(["Sales/1"]);
    await expect(
      employees.index("byLastName").get({ department: "Sales", lastName: "Jones" }),
    ).rejects.toBeInstanceOf(ValidationError);
  });

  it("pages through a long list", async () => {
    const { db } = await freshContext(kind, [Employee]);
    const employees = db.repository(Employee);
    for (let id = 0; id < 30; id++) await employees.insert(person("Sales", id, "Lee"));
    const query = employees.index("byLastName").find({ department: "Sales", lastName: "Lee" });
    const first = await query.page({ size: 12 });
    const second = await query.page({ size: 12, continuation: first.continuation as string });
    const third = await query.page({ size: 12, continuation: second.continuation as string });
    expect([...first.items, ...second.items, ...third.items].map((e) => e.employeeId)).toEqual(
      Array.from({ length: 30 }, (_, i) => i),
    );
    expect(third.continuation).toBeUndefined();
  });

  // Bounded, not lucky: a list write only loses its ETag race to another writer's successful write, and
  // the 16 writers make 24 list writes in all, far below the 60 rounds a list change may take.
  it(`stays exact under 16 concurrent writers adding and removing members (seed ${SEED})`, async () => {
    const { db } = await freshContext(kind, [Employee], {
      // Seeded backoff jitter; retries yield a turn instead of sleeping (no real time in the test).
      random: seededRandom(SEED),
      sleep: () => new Promise<void>((resolve) => setImmediate(resolve)),
    });
    const employees = db.repository(Employee);
    // Each writer adds its own employee to "Jones", then half of them move away to "Brown".
    await Promise.all(
      Array.from({ length: 16 }, async (_, i) => {
        await employees.insert(person("Sales", i, "Jones", i % 2 ? "Paris" : "Oslo"));
        if (i % 2 === 0) {
          const e = await employees.getOrThrow({ department: "Sales", employeeId: i });
          e.lastName = "Brown";
          await employees.update(e);
        }
      }),
    );
    const jones = (
      await employees.index("byLastName").find({ department: "Sales", lastName: "Jones" }).toArray()
    ).map((e) => e.employeeId);
    const brown = (
      await employees.index("byLastName").find({ department: "Sales", lastName: "Brown" }).toArray()
    ).map((e) => e.employeeId);
    expect(jones).toEqual([1, 3, 5, 7, 9, 11, 13, 15]);
    expect(brown).toEqual([0, 2, 4, 6, 8, 10, 12, 14]);
    const paris = (await employees.index("byCity").find({ city: "Paris" }).toArray()).map(
      (e) => e.employeeId,
    );
    expect(paris).toEqual([1, 3, 5, 7, 9, 11, 13, 15]);
  });
});
