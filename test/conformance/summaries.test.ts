/**
 * Summaries (the denormalization pattern's aggregate row): a count and sums per partition, kept in
 * the same entity group transaction as every write, on every store. Expected values are recounted
 * here from what the test wrote, never copied from the summary itself.
 */
import { describe, expect, it } from "vitest";
import {
  Column,
  ConcurrencyError,
  Entity,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  etagOf,
  SchemaError,
  TableContext,
  ValidationError,
} from "../../src/index.js";
import { freshContext, stores } from "../fixtures/context.js";
import { CountingStore } from "../support/counting-store.js";
import { readAll } from "../support/read-all.js";
import { seededRandom, testSeed } from "../support/seeded-random.js";

@Entity({
  table: "SumEmployees",
  partitionKey: "{department}",
  rowKey: "empid_{employeeId:6}",
  summaries: {
    perDepartment: {
      rowKey: "summary",
      count: "employees",
      sum: { salary: "totalSalary", bonus: "totalBonus", rating: "totalRating" },
    },
  },
})
class Employee {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "Int32" }) salary!: number;
  @Column({ type: "Int64" }) bonus?: bigint;
  @Column({ type: "Double" }) rating?: number;
  @Column({ type: "String" }) name?: string;
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

const FAST = { retries: 8, minDelayMs: 1, maxDelayMs: 20 } as const;

const employee = (department: string, employeeId: number, salary: number, bonus?: bigint, rating?: number) =>
  Object.assign(new Employee(), {
    department,
    employeeId,
    salary,
    ...(bonus === undefined ? {} : { bonus }),
    ...(rating === undefined ? {} : { rating }),
  });

describe.each(stores)("summaries on %s", (_name, kind) => {
  it("insert, update, upsert, patch and delete keep count and sums exact", async () => {
    const { db } = await freshContext(kind, [Employee]);
    const repo = db.repository(Employee);
    expect(await repo.summary("perDepartment", { department: "Sales" })).toEqual({
      employees: 0,
      totalSalary: 0,
      totalBonus: 0n,
      totalRating: 0,
    });
    await repo.insert(employee("Sales", 1, 100, 5n, 1.5));
    await repo.insert(employee("Sales", 2, 200));
    await repo.insert(employee("HR", 3, 300, 7n));
    expect(await repo.summary("perDepartment", { department: "Sales" })).toEqual({
      employees: 2,
      totalSalary: 300,
      totalBonus: 5n,
      totalRating: 1.5,
    });
    const one = await repo.getOrThrow({ department: "Sales", employeeId: 1 });
    one.salary = 150;
    one.bonus = undefined;
    await repo.update(one);
    await repo.upsert(employee("Sales", 2, 250, 10n, 2));
    await repo.upsert(employee("Sales", 4, 40));
    await repo.patch({ department: "Sales", employeeId: 4 }, { salary: 45 });
    await repo.update(employee("Sales", 4, 0, 1n), { mode: "merge", ifMatch: "*" });
    expect(await repo.summary("perDepartment", { department: "Sales" })).toEqual({
      employees: 3,
      totalSalary: 150 + 250 + 0,
      totalBonus: 10n + 1n,
      totalRating: 1.5 + 2,
    });
    expect(await repo.delete({ department: "Sales", employeeId: 2 })).toBe(true);
    expect(await repo.delete({ department: "Sales", employeeId: 2 })).toBe(false);
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
    expect(await db.verifySummaries(Employee)).toEqual([]);
  });

  it("summary rows never appear in find, scan or get, and a failed write changes no summary", async () => {
    const { db } = await freshContext(kind, [Employee, Tag]);
    const repo = db.repository(Employee);
    await repo.insert(employee("Sales", 1, 100));
    expect((await repo.find({ department: "Sales" }).toArray()).map((e) => e.employeeId)).toEqual([1]);
    expect((await repo.scan().toArray()).map((e) => e.employeeId)).toEqual([1]);
    const tags = db.repository(Tag);
    await tags.insert(Object.assign(new Tag(), { owner: "o", tag: "a" }));
    await tags.insert(Object.assign(new Tag(), { owner: "o", tag: "b" }));
    expect((await tags.find({ owner: "o" }).toArray()).map((t) => t.tag)).toEqual(["a", "b"]);
    expect(await tags.get({ owner: "o", tag: "all" })).toBeUndefined();
    expect(await tags.find({ owner: "o" }).select("tag").toArray()).toHaveLength(2);

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
    expect(await repo.summary("perDepartment", { department: "Sales" })).toMatchObject({
      employees: 1,
      totalSalary: 110,
    });
    expect(await db.verifySummaries(Employee)).toEqual([]);
    expect(await db.verifySummaries(Tag)).toEqual([]);
    expect(await tags.summary("tags", { owner: "o" })).toEqual({ n: 2 });
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

  it("db.eventually moves an employee between partitions with both summaries exact", async () => {
    const { db } = await freshContext(kind, [Employee]);
    const repo = db.repository(Employee);
    await repo.insert(employee("Sales", 1, 100, 2n));
    await repo.insert(employee("Sales", 2, 50));
    const moving = await repo.getOrThrow({ department: "Sales", employeeId: 1 });
    await db.eventually((tx) => {
      tx.delete(Employee, moving);
      tx.insert(employee("HR", 1, 120, 2n));
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
    expect(await db.verifySummaries(Employee)).toEqual([]);
  });

  it("an entity whose RowKey is the summary's is refused before any request", async () => {
    const { db, counter } = await freshContext(kind, [Tag]);
    const tags = db.repository(Tag);
    const error = await tags.insert(Object.assign(new Tag(), { owner: "o", tag: "all" })).catch((e) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toContain("summary tags");
    await expect(tags.delete({ owner: "o", tag: "all" })).rejects.toBeInstanceOf(ValidationError);
    await expect(
      tags.bulkInsert([Object.assign(new Tag(), { owner: "o", tag: "all" })]),
    ).rejects.toBeInstanceOf(ValidationError);
    await expect(repoSummaryUnknown(db.repository(Employee))).rejects.toBeInstanceOf(ValidationError);
    await expect(
      db.transaction((tx) => tx.insert(Object.assign(new Tag(), { owner: "o", tag: "all" }))),
    ).rejects.toBeInstanceOf(ValidationError);
    expect(counter.requests).toBe(0);
  });

  it("db.transaction updates the summary row in the same transaction, counted in its 100 operations", async () => {
    const { db, counter } = await freshContext(kind, [Employee]);
    const employees = db.repository(Employee);
    await employees.insert(employee("Sales", 1, 100));
    await db.transaction((tx) => {
      tx.insert(employee("Sales", 2, 20));
      tx.upsert(employee("Sales", 1, 50));
      tx.insert(employee("Sales", 3, 3));
    });
    expect(await employees.summary("perDepartment", { department: "Sales" })).toMatchObject({
      employees: 3,
      totalSalary: 73,
    });
    await db.transaction((tx) => tx.delete(Employee, { department: "Sales", employeeId: 2 }));
    expect(await employees.summary("perDepartment", { department: "Sales" })).toMatchObject({
      employees: 2,
      totalSalary: 53,
    });
    expect(await db.verifySummaries(Employee)).toEqual([]);
    // 100 entities and the summary row are 101 operations: refused before any request.
    counter.reset();
    const full = db.transaction((tx) => {
      for (let i = 10; i < 110; i++) tx.insert(employee("Sales", i, 1));
    });
    await expect(full).rejects.toMatchObject({ rule: "transaction-operations" });
    expect(counter.requests).toBe(0);
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

  it("bulk insert, upsert and delete keep the summaries exact, 99 entities per transaction", async () => {
    const { db, counter } = await freshContext(kind, [Employee]);
    const repo = db.repository(Employee);
    const items = Array.from({ length: 250 }, (_, i) => employee(i % 2 ? "A" : "B", i, i, BigInt(i), i / 4));
    const inserted = await repo.bulkInsert(items);
    expect(inserted).toMatchObject({ written: 250, failed: [] });
    // 125 per partition: batches of 99 + 26, each with the summary row.
    expect(counter.calls.submitTransaction).toBe(4);
    const upserts = items.slice(0, 100).map((e) => employee(e.department, e.employeeId, e.salary * 2));
    expect(await repo.bulkUpsert(upserts)).toMatchObject({ written: 100, failed: [] });
    const gone = items.slice(200).map((e) => ({ department: e.department, employeeId: e.employeeId }));
    expect(await repo.bulkDelete([...gone, { department: "A", employeeId: 9999 }])).toMatchObject({
      written: 51,
      failed: [],
    });
    const kept = new Map<number, Employee>();
    for (const e of items.slice(0, 200)) kept.set(e.employeeId, e);
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
    expect(await db.verifySummaries(Employee)).toEqual([]);
  });

  it("16 parallel writers × 50 random operations (half on one hot partition) end with exact summaries", async () => {
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
          else
            await repo.insert(employee(step.department, step.id, step.salary)).catch((e) => {
              if (!(e instanceof EntityAlreadyExistsError)) throw e;
            });
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
});

function repoSummaryUnknown(repo: { summary(name: string, partial: object): Promise<unknown> }) {
  return (async () => repo.summary("nope", { department: "x" }))();
}
