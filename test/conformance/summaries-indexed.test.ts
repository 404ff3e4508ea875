/**
 * Summaries on indexed entities (API.md's Employee: a same-partition copy `byEmail`, an other-table
 * copy `byLastName`, and a `perDepartment` summary): the summary row rides in the entity's own
 * transaction with its same-partition copies; the other table's copies go through the intent log as
 * before. Every test ends with both checks clean: `verifySummaries` (a recount) and `verifyIndexes`.
 * Expected values are recounted here from what the test wrote or from the rows read back.
 */
import { describe, expect, it } from "vitest";
import {
  Column,
  ConcurrencyError,
  TableContext as Context,
  Entity,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  type TableContext,
  UniqueConstraintError,
  ValidationError,
} from "../../src/index.js";
import { freshContext, stores } from "../fixtures/context.js";
import { CountingStore } from "../support/counting-store.js";
import { seededRandom, testSeed } from "../support/seeded-random.js";

@Entity({
  table: "SixEmployees",
  partitionKey: "{department}",
  rowKey: "empid_{employeeId:6}",
  indexes: {
    byEmail: { rowKey: "email_{email}" },
    byLastName: {
      table: "SixEmployeesByName",
      partitionKey: "{lastName}",
      rowKey: "{department}_{employeeId:6}",
    },
  },
  summaries: { perDepartment: { rowKey: "summary", count: "employees", sum: { salary: "totalSalary" } } },
})
class Employee {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "String" }) lastName!: string;
  @Column({ type: "String" }) email!: string;
  @Column({ type: "Int32" }) salary!: number;
}

/** A unique same-partition index and a same-partition list index beside the summary. */
@Entity({
  table: "SixBadges",
  partitionKey: "{site}",
  rowKey: "badge_{badge}",
  indexes: {
    byHolder: { rowKey: "holder_{holder}", unique: true },
    byFloor: { list: true, rowKey: "floor_{floor}" },
  },
  summaries: { perSite: { rowKey: "summary", count: "badges", sum: { floor: "floors" } } },
})
class Badge {
  @Column({ type: "String" }) site!: string;
  @Column({ type: "String" }) badge!: string;
  @Column({ type: "String" }) holder!: string;
  @Column({ type: "Int32" }) floor!: number;
}

/** A RowKey template without a literal prefix: entity keys are checked against the summary's at write time. */
@Entity({
  table: "SixTags",
  partitionKey: "{owner}",
  rowKey: "{tag}",
  indexes: { byColor: { table: "SixTagsByColor", partitionKey: "{color}", rowKey: "{owner}_{tag}" } },
  summaries: { tags: { rowKey: "all", count: "n" } },
})
class Tagged {
  @Column({ type: "String" }) owner!: string;
  @Column({ type: "String" }) tag!: string;
  @Column({ type: "String" }) color!: string;
}

const tagged = (owner: string, tag: string, color: string) =>
  Object.assign(new Tagged(), { owner, tag, color });

const FAST = { retries: 8, minDelayMs: 1, maxDelayMs: 20 } as const;

const employee = (department: string, employeeId: number, salary: number, lastName = `L${employeeId}`) =>
  Object.assign(new Employee(), {
    department,
    employeeId,
    salary,
    lastName,
    email: `e${employeeId}@contoso.com`,
  });

const badge = (site: string, id: string, holder: string, floor: number) =>
  Object.assign(new Badge(), { site, badge: id, holder, floor });

/** The summary recounted from the entities as read back. */
async function recount(db: TableContext, department: string) {
  const rows = await db.repository(Employee).find({ department }).toArray();
  return { employees: rows.length, totalSalary: rows.reduce((s, e) => s + e.salary, 0) };
}

async function expectClean(db: TableContext): Promise<void> {
  expect(await db.verifySummaries(Employee)).toEqual([]);
  expect(await db.verifyIndexes(Employee)).toEqual({ missing: [], stale: [], orphans: [] });
}

describe.each(stores)("summaries on indexed entities on %s", (_name, kind) => {
  it("insert, update, upsert, merge, patch and delete keep the summary exact and the copies in line", async () => {
    const { db } = await freshContext(kind, [Employee]);
    const repo = db.repository(Employee);
    await repo.insert(employee("Sales", 1, 100, "Jones"));
    await repo.insert(employee("Sales", 2, 200));
    await repo.insert(employee("HR", 3, 300));
    expect(await repo.summary("perDepartment", { department: "Sales" })).toEqual({
      employees: 2,
      totalSalary: 300,
    });
    const one = await repo.getOrThrow({ department: "Sales", employeeId: 1 });
    one.salary = 150;
    one.lastName = "Smith";
    await repo.update(one);
    await repo.upsert(employee("Sales", 2, 250));
    await repo.upsert(employee("Sales", 4, 40));
    await repo.patch({ department: "Sales", employeeId: 4 }, { salary: 45 });
    await repo.update(Object.assign(new Employee(), { department: "Sales", employeeId: 4, salary: 5 }), {
      mode: "merge",
      ifMatch: "*",
    });
    expect(await repo.summary("perDepartment", { department: "Sales" })).toEqual({
      employees: 3,
      totalSalary: 150 + 250 + 5,
    });
    expect(await repo.index("byLastName").find({ lastName: "Smith" }).toArray()).toHaveLength(1);
    expect(await repo.delete({ department: "Sales", employeeId: 2 })).toBe(true);
    expect(await repo.delete({ department: "Sales", employeeId: 2 })).toBe(false);
    expect(await repo.summary("perDepartment", { department: "Sales" })).toEqual(await recount(db, "Sales"));
    expect(await repo.summary("perDepartment", { department: "Sales" })).toEqual({
      employees: 2,
      totalSalary: 155,
    });
    expect(await repo.summary("perDepartment", { department: "HR" })).toEqual({
      employees: 1,
      totalSalary: 300,
    });
    await expectClean(db);
  });

  it("failed writes change neither the summary nor the copies", async () => {
    const { db } = await freshContext(kind, [Employee]);
    const repo = db.repository(Employee);
    await repo.insert(employee("Sales", 1, 100));
    await expect(repo.insert(employee("Sales", 1, 999))).rejects.toBeInstanceOf(EntityAlreadyExistsError);
    const stale = await repo.getOrThrow({ department: "Sales", employeeId: 1 });
    const fresh = await repo.getOrThrow({ department: "Sales", employeeId: 1 });
    fresh.salary = 110;
    await repo.update(fresh);
    stale.salary = 5;
    await expect(repo.update(stale)).rejects.toBeInstanceOf(ConcurrencyError);
    await expect(repo.update(employee("Sales", 9, 1), { ifMatch: "*" })).rejects.toBeInstanceOf(
      EntityNotFoundError,
    );
    await expect(repo.delete(stale)).rejects.toBeInstanceOf(ConcurrencyError);
    expect(await repo.summary("perDepartment", { department: "Sales" })).toEqual({
      employees: 1,
      totalSalary: 110,
    });
    await expectClean(db);
  });

  it("db.eventually moves an employee between departments: both summaries exact, copies moved", async () => {
    const { db } = await freshContext(kind, [Employee]);
    const repo = db.repository(Employee);
    await repo.insert(employee("Sales", 1, 100, "Jones"));
    await repo.insert(employee("Sales", 2, 50));
    const moving = await repo.getOrThrow({ department: "Sales", employeeId: 1 });
    await db.eventually((tx) => {
      tx.delete(Employee, moving);
      tx.insert(employee("HR", 1, 120, "Jones"));
    });
    expect(await repo.summary("perDepartment", { department: "Sales" })).toEqual({
      employees: 1,
      totalSalary: 50,
    });
    expect(await repo.summary("perDepartment", { department: "HR" })).toEqual({
      employees: 1,
      totalSalary: 120,
    });
    const jones = await repo.index("byLastName").find({ lastName: "Jones" }).toArray();
    expect(jones.map((e) => e.department)).toEqual(["HR"]);
    await expectClean(db);
  });

  it("bulk insert, upsert and delete keep the summary exact and the copies in line", async () => {
    const { db } = await freshContext(kind, [Employee], { retry: FAST });
    const repo = db.repository(Employee);
    const items = Array.from({ length: 40 }, (_, i) => employee(i % 2 ? "A" : "B", i, i * 10));
    expect(await repo.bulkInsert(items)).toMatchObject({ written: 40, failed: [] });
    const upserts = items.slice(0, 15).map((e) => employee(e.department, e.employeeId, e.salary + 1, "New"));
    expect(await repo.bulkUpsert(upserts)).toMatchObject({ written: 15, failed: [] });
    const gone = items.slice(30).map((e) => ({ department: e.department, employeeId: e.employeeId }));
    expect(await repo.bulkDelete(gone)).toMatchObject({ written: 10, failed: [] });
    const kept = new Map<number, Employee>();
    for (const e of items.slice(0, 30)) kept.set(e.employeeId, e);
    for (const e of upserts) kept.set(e.employeeId, e);
    for (const department of ["A", "B"]) {
      const mine = [...kept.values()].filter((e) => e.department === department);
      expect(await repo.summary("perDepartment", { department })).toEqual({
        employees: mine.length,
        totalSalary: mine.reduce((s, e) => s + e.salary, 0),
      });
    }
    expect(await repo.index("byLastName").find({ lastName: "New" }).toArray()).toHaveLength(15);
    await expectClean(db);
  });

  it("a unique and a list index in the same partition share the transaction with the summary", async () => {
    const { db } = await freshContext(kind, [Badge]);
    const repo = db.repository(Badge);
    await repo.insert(badge("HQ", "b1", "ann", 1));
    await repo.insert(badge("HQ", "b2", "bob", 1));
    await repo.insert(badge("HQ", "b3", "cy", 2));
    await expect(repo.insert(badge("HQ", "b4", "ann", 3))).rejects.toBeInstanceOf(UniqueConstraintError);
    await repo.upsert(badge("HQ", "b2", "bob", 4));
    await repo.delete({ site: "HQ", badge: "b1" });
    expect(await repo.summary("perSite", { site: "HQ" })).toEqual({ badges: 2, floors: 6 });
    expect(
      (await repo.index("byFloor").find({ site: "HQ", floor: 4 }).toArray()).map((b) => b.badge),
    ).toEqual(["b2"]);
    expect(await db.verifySummaries(Badge)).toEqual([]);
    expect(await db.verifyIndexes(Badge)).toEqual({ missing: [], stale: [], orphans: [] });
  });

  it("an entity whose RowKey would be the summary's is refused before any request", async () => {
    const { db, counter } = await freshContext(kind, [Tagged]);
    const tags = db.repository(Tagged);
    const error = await tags.insert(tagged("o", "all", "x")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    await expect(tags.delete({ owner: "o", tag: "all" })).rejects.toBeInstanceOf(ValidationError);
    expect(counter.calls.submitTransaction).toBe(0);
    expect(counter.calls.getEntity).toBe(0);
    await tags.insert(tagged("o", "a", "x"));
    expect(await tags.summary("tags", { owner: "o" })).toEqual({ n: 1 });
  });

  it("4 parallel writers × 20 random operations end with an exact summary and no index drift", async () => {
    const seed = testSeed(5);
    const { db, counter, prefix } = await freshContext(kind, [Employee], { retry: FAST });
    const random = seededRandom(seed);
    const plans = Array.from({ length: 4 }, () =>
      Array.from({ length: 20 }, () => ({
        department: random() < 0.7 ? "Hot" : "Cold",
        id: Math.floor(random() * 10),
        op: random(),
        salary: Math.floor(random() * 1000),
        lastName: `N${Math.floor(random() * 3)}`,
      })),
    );
    await Promise.all(
      plans.map(async (steps) => {
        // Each writer sees the store through its own context, as separate processes would (no shared cache).
        const own = new Context({ store: new CountingStore(counter), tablePrefix: prefix, retry: FAST });
        const repo = own.repository(Employee);
        for (const step of steps) {
          const key = { department: step.department, employeeId: step.id };
          if (step.op < 0.4)
            await repo.upsert(employee(step.department, step.id, step.salary, step.lastName));
          else if (step.op < 0.6) await repo.delete(key);
          else if (step.op < 0.8)
            await repo
              .update(Object.assign(new Employee(), { ...key, salary: step.salary }), {
                mode: "merge",
                ifMatch: "*",
              })
              .catch((e) => {
                if (!(e instanceof EntityNotFoundError)) throw e;
              });
          else
            await repo.insert(employee(step.department, step.id, step.salary, step.lastName)).catch((e) => {
              if (!(e instanceof EntityAlreadyExistsError)) throw e;
            });
        }
      }),
    );
    for (const department of ["Hot", "Cold"]) {
      expect(
        await db.repository(Employee).summary("perDepartment", { department }),
        `seed ${seed}, ${department}`,
      ).toEqual(await recount(db, department));
    }
    await expectClean(db);
  });
});
