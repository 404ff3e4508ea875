/**
 * Summaries (the denormalization pattern's aggregate row): a count and sums per partition, kept in
 * the same entity group transaction as every write, on every store. The shared cases run on two
 * variants of the employee: plain, and indexed as API.md's Employee (a same-partition copy
 * `byEmail`, an other-table copy `byLastName`): there the summary row rides in the entity's own
 * transaction with its same-partition copies, the other table's copies go through the intent log,
 * and every case also ends with `verifyIndexes` clean. Expected values are recounted here from what
 * the test wrote or from the rows read back, never copied from the summary itself.
 */
import { describe, expect, it } from "vitest";
import {
  Column,
  ConcurrencyError,
  TableContext as Context,
  Entity,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  etagOf,
  SchemaError,
  TableContext,
  TransactionError,
  UniqueConstraintError,
  ValidationError,
} from "../../src/index.js";
import { freshContext, stores } from "../fixtures/context.js";
import { CountingStore } from "../support/counting-store.js";
import { readAll } from "../support/read-all.js";
import { seededRandom, testSeed } from "../support/seeded-random.js";

/** The department summary both Employee variants keep. */
const perDepartment = {
  rowKey: "summary",
  count: "employees",
  sum: { salary: "totalSalary", bonus: "totalBonus", rating: "totalRating" },
} as const;

@Entity({
  table: "SumEmployees",
  partitionKey: "{department}",
  rowKey: "empid_{employeeId:6}",
  summaries: { perDepartment },
})
class Employee {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "Int32" }) salary!: number;
  @Column({ type: "Int64" }) bonus?: bigint;
  @Column({ type: "Double" }) rating?: number;
  @Column({ type: "String" }) name?: string;
  /** Stored by the indexed variant only (IndexedEmployee); always undefined here. */
  lastName?: string;
}

/** API.md's Employee: the same columns and summary, with a same-partition and an other-table index. */
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
  summaries: { perDepartment },
})
class IndexedEmployee {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "Int32" }) salary!: number;
  @Column({ type: "Int64" }) bonus?: bigint;
  @Column({ type: "Double" }) rating?: number;
  @Column({ type: "String" }) name?: string;
  @Column({ type: "String" }) lastName!: string;
  @Column({ type: "String" }) email!: string;
}

/** A RowKey template without a literal prefix: entity keys are checked against the summary's at write time. */
@Entity({
  table: "SumTags",
  partitionKey: "{owner}",
  rowKey: "{tag}",
  summaries: { tags: { rowKey: "all", count: "n" } },
})
class Tag {
  @Column({ type: "String" }) owner!: string;
  @Column({ type: "String" }) tag!: string;
  /** Stored by the indexed variant only (IndexedTag). */
  color?: string;
}

/** The same with an index in another table. */
@Entity({
  table: "SixTags",
  partitionKey: "{owner}",
  rowKey: "{tag}",
  indexes: { byColor: { table: "SixTagsByColor", partitionKey: "{color}", rowKey: "{owner}_{tag}" } },
  summaries: { tags: { rowKey: "all", count: "n" } },
})
class IndexedTag {
  @Column({ type: "String" }) owner!: string;
  @Column({ type: "String" }) tag!: string;
  @Column({ type: "String" }) color!: string;
}

/** Shares Employee's table and partitions: its summary row must not be Employee's. */
@Entity({
  table: "SumEmployees",
  partitionKey: "{department}",
  rowKey: "room_{room}",
  summaries: { rooms: { rowKey: "summary", count: "rooms" } },
})
class Room {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "String" }) room!: string;
}

@Entity({
  table: "SumEmployees",
  partitionKey: "{department}",
  rowKey: "desk_{desk}",
  summaries: { desks: { rowKey: "deskSummary", count: "desks" } },
})
class Desk {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "String" }) desk!: string;
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

const FAST = { retries: 8, minDelayMs: 1, maxDelayMs: 20 } as const;

const employee = (department: string, employeeId: number, salary: number, bonus?: bigint, rating?: number) =>
  Object.assign(new Employee(), {
    department,
    employeeId,
    salary,
    ...(bonus === undefined ? {} : { bonus }),
    ...(rating === undefined ? {} : { rating }),
  });

const indexedEmployee = (
  department: string,
  employeeId: number,
  salary: number,
  bonus?: bigint,
  rating?: number,
  lastName = `L${employeeId}`,
) =>
  Object.assign(new IndexedEmployee(), {
    ...employee(department, employeeId, salary, bonus, rating),
    lastName,
    email: `e${employeeId}@contoso.com`,
  });

const badge = (site: string, id: string, holder: string, floor: number) =>
  Object.assign(new Badge(), { site, badge: id, holder, floor });

/**
 * The variants the shared cases run on. `Staff`/`staff` build the employee (the indexed one with a
 * last name, `L<id>` unless given, and an email); `Tags`/`tag` the prefix-less RowKey entity.
 */
const VARIANTS = [
  {
    variant: "plain",
    indexed: false,
    Staff: Employee,
    staff: (d: string, id: number, salary: number, bonus?: bigint, rating?: number, _lastName?: string) =>
      employee(d, id, salary, bonus, rating),
    Tags: Tag,
    tag: (owner: string, tag: string) => Object.assign(new Tag(), { owner, tag }),
  },
  {
    variant: "indexed",
    indexed: true,
    Staff: IndexedEmployee as unknown as typeof Employee,
    staff: (d: string, id: number, salary: number, bonus?: bigint, rating?: number, lastName?: string) =>
      indexedEmployee(d, id, salary, bonus, rating, lastName) as unknown as Employee,
    Tags: IndexedTag as unknown as typeof Tag,
    tag: (owner: string, tag: string) =>
      Object.assign(new IndexedTag(), { owner, tag, color: "x" }) as unknown as Tag,
  },
] as const;

/** The summary recounted from the entities as read back. */
async function recount(
  db: TableContext,
  Staff: typeof Employee | typeof IndexedEmployee,
  department: string,
) {
  const rows = await db
    .repository(Staff as typeof Employee)
    .find({ department })
    .toArray();
  return {
    employees: rows.length,
    totalSalary: rows.reduce((s, e) => s + e.salary, 0),
    totalBonus: rows.reduce((s, e) => s + (e.bonus ?? 0n), 0n),
    totalRating: rows.reduce((s, e) => s + (e.rating ?? 0), 0),
  };
}

/** Both checks clean: `verifySummaries` (a recount) and `verifyIndexes`. */
async function expectClean(db: TableContext, Staff: typeof Employee | typeof IndexedEmployee): Promise<void> {
  expect(await db.verifySummaries(Staff)).toEqual([]);
  expect(await db.verifyIndexes(Staff)).toEqual({ missing: [], stale: [], orphans: [] });
}

describe.each(stores)("summaries on %s", (_name, kind) => {
  describe.each(VARIANTS)("$variant entities", ({ indexed, Staff, staff, Tags, tag }) => {
    it("insert, update, upsert, merge, patch and delete keep count and sums exact (and the copies in line)", async () => {
      const { db } = await freshContext(kind, [Staff]);
      const repo = db.repository(Staff);
      expect(await repo.summary("perDepartment", { department: "Sales" })).toEqual({
        employees: 0,
        totalSalary: 0,
        totalBonus: 0n,
        totalRating: 0,
      });
      await repo.insert(staff("Sales", 1, 100, 5n, 1.5, "Jones"));
      await repo.insert(staff("Sales", 2, 200));
      await repo.insert(staff("HR", 3, 300, 7n));
      expect(await repo.summary("perDepartment", { department: "Sales" })).toEqual({
        employees: 2,
        totalSalary: 300,
        totalBonus: 5n,
        totalRating: 1.5,
      });
      const one = await repo.getOrThrow({ department: "Sales", employeeId: 1 });
      one.salary = 150;
      one.bonus = undefined;
      if (indexed) one.lastName = "Smith";
      await repo.update(one);
      await repo.upsert(staff("Sales", 2, 250, 10n, 2));
      await repo.upsert(staff("Sales", 4, 40));
      await repo.patch({ department: "Sales", employeeId: 4 }, { salary: 45 });
      await repo.update(
        Object.assign(new Staff(), { department: "Sales", employeeId: 4, salary: 0, bonus: 1n }),
        {
          mode: "merge",
          ifMatch: "*",
        },
      );
      expect(await repo.summary("perDepartment", { department: "Sales" })).toEqual({
        employees: 3,
        totalSalary: 150 + 250 + 0,
        totalBonus: 10n + 1n,
        totalRating: 1.5 + 2,
      });
      if (indexed) {
        expect(await repo.index("byLastName").find({ lastName: "Smith" }).toArray()).toHaveLength(1);
      }
      expect(await repo.delete({ department: "Sales", employeeId: 2 })).toBe(true);
      expect(await repo.delete({ department: "Sales", employeeId: 2 })).toBe(false);
      expect(await repo.summary("perDepartment", { department: "Sales" })).toEqual(
        await recount(db, Staff, "Sales"),
      );
      expect(await repo.summary("perDepartment", { department: "Sales" })).toEqual({
        employees: 2,
        totalSalary: 150,
        totalBonus: 1n,
        totalRating: 1.5,
      });
      expect(await repo.summary("perDepartment", { department: "HR" })).toMatchObject({
        employees: 1,
        totalSalary: 300,
        totalBonus: 7n,
      });
      await expectClean(db, Staff);
    });

    it("summary rows never appear in find, scan or get, and failed writes change neither the summary nor the copies", async () => {
      const { db } = await freshContext(kind, [Staff, Tags]);
      const repo = db.repository(Staff);
      await repo.insert(staff("Sales", 1, 100));
      expect((await repo.find({ department: "Sales" }).toArray()).map((e) => e.employeeId)).toEqual([1]);
      expect((await repo.scan().toArray()).map((e) => e.employeeId)).toEqual([1]);
      const tags = db.repository(Tags);
      await tags.insert(tag("o", "a"));
      await tags.insert(tag("o", "b"));
      expect((await tags.find({ owner: "o" }).toArray()).map((t) => t.tag)).toEqual(["a", "b"]);
      expect(await tags.get({ owner: "o", tag: "all" })).toBeUndefined();
      expect(await tags.find({ owner: "o" }).select("tag").toArray()).toHaveLength(2);

      await expect(repo.insert(staff("Sales", 1, 999))).rejects.toBeInstanceOf(EntityAlreadyExistsError);
      const stale = await repo.getOrThrow({ department: "Sales", employeeId: 1 });
      const fresh = await repo.getOrThrow({ department: "Sales", employeeId: 1 });
      fresh.salary = 110;
      await repo.update(fresh);
      stale.salary = 5;
      await expect(repo.update(stale)).rejects.toBeInstanceOf(ConcurrencyError);
      await expect(repo.update(staff("Sales", 9, 1), { ifMatch: "*" })).rejects.toBeInstanceOf(
        EntityNotFoundError,
      );
      await expect(repo.delete(stale)).rejects.toBeInstanceOf(ConcurrencyError);
      expect(await repo.summary("perDepartment", { department: "Sales" })).toMatchObject({
        employees: 1,
        totalSalary: 110,
      });
      await expectClean(db, Staff);
      expect(await db.verifySummaries(Tags)).toEqual([]);
      expect(await tags.summary("tags", { owner: "o" })).toEqual({ n: 2 });
    });

    it("db.eventually moves an employee between partitions with both summaries exact (and its copies moved)", async () => {
      const { db } = await freshContext(kind, [Staff]);
      const repo = db.repository(Staff);
      await repo.insert(staff("Sales", 1, 100, 2n, undefined, "Jones"));
      await repo.insert(staff("Sales", 2, 50));
      const moving = await repo.getOrThrow({ department: "Sales", employeeId: 1 });
      await db.eventually((tx) => {
        tx.delete(Staff, moving);
        tx.insert(staff("HR", 1, 120, 2n, undefined, "Jones"));
      });
      expect(await repo.summary("perDepartment", { department: "Sales" })).toMatchObject({
        employees: 1,
        totalSalary: 50,
        totalBonus: 0n,
      });
      expect(await repo.summary("perDepartment", { department: "HR" })).toMatchObject({
        employees: 1,
        totalSalary: 120,
        totalBonus: 2n,
      });
      if (indexed) {
        const jones = await repo.index("byLastName").find({ lastName: "Jones" }).toArray();
        expect(jones.map((e) => e.department)).toEqual(["HR"]);
      }
      await expectClean(db, Staff);
    });

    it("an entity whose RowKey is the summary's is refused before any request", async () => {
      const { db, counter } = await freshContext(kind, [Tags]);
      const tags = db.repository(Tags);
      const error = await tags.insert(tag("o", "all")).catch((e) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).message).toContain("summary tags");
      await expect(tags.delete({ owner: "o", tag: "all" })).rejects.toBeInstanceOf(ValidationError);
      await expect(tags.bulkInsert([tag("o", "all")])).rejects.toBeInstanceOf(ValidationError);
      await expect(repoSummaryUnknown(db.repository(Employee))).rejects.toBeInstanceOf(ValidationError);
      await expect(db.transaction((tx) => tx.insert(tag("o", "all")))).rejects.toBeInstanceOf(
        ValidationError,
      );
      expect(counter.requests).toBe(0);
      expect(counter.calls.submitTransaction).toBe(0);
      expect(counter.calls.getEntity).toBe(0);
      await tags.insert(tag("o", "a"));
      expect(await tags.summary("tags", { owner: "o" })).toEqual({ n: 1 });
    });

    it("db.transaction updates the summary row in the same transaction, counted in its 100 operations", async () => {
      const { db, counter } = await freshContext(kind, [Staff]);
      const repo = db.repository(Staff);
      await repo.insert(staff("Sales", 1, 100));
      await db.transaction((tx) => {
        tx.insert(staff("Sales", 2, 20));
        tx.upsert(staff("Sales", 1, 50));
        tx.insert(staff("Sales", 3, 3));
      });
      expect(await repo.summary("perDepartment", { department: "Sales" })).toMatchObject({
        employees: 3,
        totalSalary: 73,
      });
      await db.transaction((tx) => tx.delete(Staff, { department: "Sales", employeeId: 2 }));
      expect(await repo.summary("perDepartment", { department: "Sales" })).toMatchObject({
        employees: 2,
        totalSalary: 53,
      });
      await expectClean(db, Staff);
      // 100 entities and the summary row are 101 operations: refused before any request.
      counter.reset();
      const full = db.transaction((tx) => {
        for (let i = 10; i < 110; i++) tx.insert(staff("Sales", i, 1));
      });
      await expect(full).rejects.toMatchObject({ rule: "transaction-operations" });
      expect(counter.requests).toBe(0);
    });

    it("bulk insert, upsert and delete keep the summaries exact (plain: 99 entities per transaction; indexed: copies in line)", async () => {
      const { db, counter } = await freshContext(kind, [Staff], { retry: FAST });
      const repo = db.repository(Staff);
      // Indexed entities are written one transaction each (each moves its own copies): fewer of them.
      const [count, upserted, keptCount] = indexed ? [40, 15, 30] : [250, 100, 200];
      const items = Array.from({ length: count }, (_, i) =>
        staff(i % 2 ? "A" : "B", i, i * (indexed ? 10 : 1), BigInt(i), i / 4),
      );
      const inserted = await repo.bulkInsert(items);
      expect(inserted).toMatchObject({ written: count, failed: [] });
      // 125 per partition: batches of 99 + 26, each with the summary row.
      if (!indexed) expect(counter.calls.submitTransaction).toBe(4);
      const upserts = items
        .slice(0, upserted)
        .map((e) =>
          staff(
            e.department,
            e.employeeId,
            indexed ? e.salary + 1 : e.salary * 2,
            undefined,
            undefined,
            "New",
          ),
        );
      expect(await repo.bulkUpsert(upserts)).toMatchObject({ written: upserted, failed: [] });
      const gone = items
        .slice(keptCount)
        .map((e) => ({ department: e.department, employeeId: e.employeeId }));
      expect(await repo.bulkDelete([...gone, { department: "A", employeeId: 9999 }])).toMatchObject({
        written: count - keptCount + 1,
        failed: [],
      });
      const kept = new Map<number, Employee>();
      for (const e of items.slice(0, keptCount)) kept.set(e.employeeId, e);
      for (const e of upserts) kept.set(e.employeeId, e);
      for (const department of ["A", "B"]) {
        const mine = [...kept.values()].filter((e) => e.department === department);
        expect(await repo.summary("perDepartment", { department })).toEqual({
          employees: mine.length,
          totalSalary: mine.reduce((s, e) => s + e.salary, 0),
          totalBonus: mine.reduce((s, e) => s + (e.bonus ?? 0n), 0n),
          totalRating: expect.closeTo(
            mine.reduce((s, e) => s + (e.rating ?? 0), 0),
            9,
          ),
        });
      }
      if (indexed) {
        expect(await repo.index("byLastName").find({ lastName: "New" }).toArray()).toHaveLength(upserted);
      }
      await expectClean(db, Staff);
    });
  });

  it("types sharing a table keep their own summary rows; one on another's row is a SchemaError", async () => {
    const { db } = await freshContext(kind, [Employee]);
    await db.repository(Employee).insert(employee("Sales", 1, 100));
    const desks = db.repository(Desk);
    await desks.insert(Object.assign(new Desk(), { department: "Sales", desk: "d1" }));
    expect(await desks.summary("desks", { department: "Sales" })).toEqual({ desks: 1 });
    const error = await db
      .repository(Room)
      .insert(Object.assign(new Room(), { department: "Sales", room: "r1" }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaError);
    expect(await db.repository(Room).find({ department: "Sales" }).toArray()).toEqual([]);
    expect((await db.query(Employee, Desk).find({ department: "Sales" }).toArray()).length).toBe(2);
    expect(await db.verifySummaries(Employee)).toEqual([]);
    expect(await db.verifySummaries(Desk)).toEqual([]);
  });

  it("an insert costs one request once the summary row is known, two when cold", async () => {
    const { db, counter, prefix } = await freshContext(kind, [Employee]);
    const repo = db.repository(Employee);
    await repo.insert(employee("Sales", 1, 1));
    expect(counter.requests).toBe(2);
    counter.reset();
    await repo.insert(employee("Sales", 2, 1));
    expect(counter.requests).toBe(1);
    expect(counter.calls.submitTransaction).toBe(1);
    // A writer elsewhere (another store object: another process's view) makes the known ETag stale:
    // the next insert loses one round on the summary row (412), reads it again and commits.
    const elsewhere = new TableContext({ store: new CountingStore(counter), tablePrefix: prefix });
    await elsewhere.repository(Employee).insert(employee("Sales", 3, 1));
    counter.reset();
    const fourth = employee("Sales", 4, 1);
    await repo.insert(fourth);
    expect(counter.calls.submitTransaction).toBe(2);
    expect(counter.calls.getEntity).toBe(1);
    expect(etagOf(fourth)).toBeDefined();
    expect(await repo.summary("perDepartment", { department: "Sales" })).toMatchObject({ employees: 4 });
  });

  it("plain: 16 parallel writers × 50 random operations (half on one hot partition, a tenth of them transactions) end with exact summaries", async () => {
    const seed = testSeed(7);
    const { db, counter, prefix } = await freshContext(kind, [Employee], { retry: FAST });
    const random = seededRandom(seed);
    const plans = Array.from({ length: 16 }, () =>
      Array.from({ length: 50 }, () => ({
        department: random() < 0.5 ? "Hot" : `P${Math.floor(random() * 4)}`,
        id: Math.floor(random() * 40),
        op: random(),
        salary: Math.floor(random() * 1000),
      })),
    );
    await Promise.all(
      plans.map(async (steps) => {
        // Each writer sees the store through its own object, as separate processes would (no shared cache).
        const own = new TableContext({ store: new CountingStore(counter), tablePrefix: prefix, retry: FAST });
        const repo = own.repository(Employee);
        for (const step of steps) {
          const key = { department: step.department, employeeId: step.id };
          if (step.op < 0.4) await repo.upsert(employee(step.department, step.id, step.salary));
          else if (step.op < 0.6) await repo.delete(key);
          else if (step.op < 0.8) await repo.patch(key, { salary: step.salary });
          else if (step.op < 0.9)
            await repo.insert(employee(step.department, step.id, step.salary)).catch((e) => {
              if (!(e instanceof EntityAlreadyExistsError)) throw e;
            });
          else {
            // A transaction of two writes and a delete in one partition: its summary row rides in it,
            // under its ETag, and another writer's change of that row in between is this writer's to absorb.
            const other = (step.id + 1 + (step.salary % 39)) % 40;
            await own
              .transaction((tx) => {
                tx.upsert(employee(step.department, step.id, step.salary));
                tx.upsert(employee(step.department, other, step.salary + 1));
                tx.delete(Employee, {
                  department: step.department,
                  employeeId: (other + 1) % 40 === step.id ? (other + 2) % 40 : (other + 1) % 40,
                });
              })
              .catch((e) => {
                // The service refuses a batch whose delete finds no entity (404 at that operation).
                if (!(e instanceof TransactionError && e.index === 2 && e.statusCode === 404)) throw e;
              });
          }
        }
      }),
    );
    for (const department of ["Hot", "P0", "P1", "P2", "P3"]) {
      const rows = await db.repository(Employee).find({ department }).toArray();
      expect(
        await db.repository(Employee).summary("perDepartment", { department }),
        `seed ${seed}, ${department}`,
      ).toEqual({
        employees: rows.length,
        totalSalary: rows.reduce((s, e) => s + e.salary, 0),
        totalBonus: 0n,
        totalRating: 0,
      });
    }
    expect(await db.verifySummaries(Employee)).toEqual([]);
  });

  it("verifySummaries reports drift written around the repository, and only that", async () => {
    const { db, prefix, counter } = await freshContext(kind, [Employee]);
    const kindStore = (_: unknown) => counter;
    const repo = db.repository(Employee);
    await repo.insert(employee("Sales", 1, 100, 1n));
    await repo.insert(employee("HR", 2, 200));
    const raw = db.dynamic("SumEmployees");
    // Another client adds an employee row without the summary, and one partition has no summary row at all.
    await raw.upsert({ partitionKey: "Sales", rowKey: "empid_000002", EntityType: "Employee@1", salary: 50 });
    await raw.upsert({ partitionKey: "Ops", rowKey: "empid_000003", salary: 7 });
    const drift = await db.verifySummaries(Employee);
    expect(drift).toEqual([
      {
        summary: "perDepartment",
        partitionKey: "Ops",
        rowKey: "summary",
        stored: { employees: 0, totalSalary: 0, totalBonus: 0n, totalRating: 0 },
        actual: { employees: 1, totalSalary: 7, totalBonus: 0n, totalRating: 0 },
      },
      {
        summary: "perDepartment",
        partitionKey: "Sales",
        rowKey: "summary",
        stored: { employees: 1, totalSalary: 100, totalBonus: 1n, totalRating: 0 },
        actual: { employees: 2, totalSalary: 150, totalBonus: 1n, totalRating: 0 },
      },
    ]);
    // repairSummaries rewrites exactly the drifting rows from a recount; afterwards writes go on from there.
    expect(await db.repairSummaries(Employee)).toEqual(drift);
    expect(await db.verifySummaries(Employee)).toEqual([]);
    expect(await db.repairSummaries(Employee)).toEqual([]);
    await repo.insert(employee("Ops", 4, 3));
    expect(await repo.summary("perDepartment", { department: "Ops" })).toMatchObject({
      employees: 2,
      totalSalary: 10,
    });
    expect(await db.verifySummaries(Employee)).toEqual([]);
    // The summary row is a row of the table like any other, with the values readable by other clients.
    const stored = (await readAll(kindStore(db), `${prefix}SumEmployees`)).filter(
      (r) => r.rowKey === "summary",
    );
    expect(stored.map((r) => r.partitionKey).sort()).toEqual(["HR", "Ops", "Sales"]);
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

  it("indexed: 4 parallel writers × 20 random operations (merges, moving copies and transactions) end with an exact summary and no index drift", async () => {
    const seed = testSeed(5);
    const { db, counter, prefix } = await freshContext(kind, [IndexedEmployee], { retry: FAST });
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
        const repo = own.repository(IndexedEmployee);
        for (const step of steps) {
          const key = { department: step.department, employeeId: step.id };
          if (step.op < 0.4)
            await repo.upsert(
              indexedEmployee(step.department, step.id, step.salary, undefined, undefined, step.lastName),
            );
          else if (step.op < 0.6) await repo.delete(key);
          else if (step.op < 0.8)
            await repo
              .update(Object.assign(new IndexedEmployee(), { ...key, salary: step.salary }), {
                mode: "merge",
                ifMatch: "*",
              })
              .catch((e) => {
                if (!(e instanceof EntityNotFoundError)) throw e;
              });
          else if (step.op < 0.9)
            await repo
              .insert(
                indexedEmployee(step.department, step.id, step.salary, undefined, undefined, step.lastName),
              )
              .catch((e) => {
                if (!(e instanceof EntityAlreadyExistsError)) throw e;
              });
          // Two upserts in one transaction: copies move and the summary row rides along; a race on
          // the version they were planned from is planned again, as for a single upsert.
          else
            await own.transaction((tx) => {
              tx.upsert(
                indexedEmployee(step.department, step.id, step.salary, undefined, undefined, step.lastName),
              );
              tx.upsert(
                indexedEmployee(
                  step.department,
                  (step.id + 1) % 10,
                  step.salary + 1,
                  undefined,
                  undefined,
                  step.lastName,
                ),
              );
            });
        }
      }),
    );
    for (const department of ["Hot", "Cold"]) {
      expect(
        await db.repository(IndexedEmployee).summary("perDepartment", { department }),
        `seed ${seed}, ${department}`,
      ).toEqual(await recount(db, IndexedEmployee, department));
    }
    await expectClean(db, IndexedEmployee);
  });
});

function repoSummaryUnknown(repo: { summary(name: string, partial: object): Promise<unknown> }) {
  return (async () => repo.summary("nope", { department: "x" }))();
}
