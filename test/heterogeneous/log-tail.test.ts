import { describe, expect, it } from "vitest";
import { EntityAlreadyExistsError, ValidationError } from "../../src/index.js";
import { freshContext, stores } from "../fixtures/context.js";
import { Employee } from "../fixtures/models.js";
import { Activity, Revision, Tick } from "./models.js";

const BASE = Date.UTC(2024, 4, 1, 12);

const activity = (user: string, at: number, id: string, seq: number) =>
  Object.assign(new Activity(), { user, at: new Date(at), id, seq });

describe.each(stores)("log tail on %s", (_name, kind) => {
  it("latest(partition, n) returns the n newest, newest first, in one request", async () => {
    const { db, counter } = await freshContext(kind, [Activity]);
    const log = db.repository(Activity);
    // Written in shuffled order, one minute apart; another user's rows in another partition.
    const order = Array.from({ length: 40 }, (_, i) => (i * 17) % 40);
    await log.bulkInsert(order.map((i) => activity("ada", BASE + i * 60_000, `a${i}`, i)));
    await log.bulkInsert([0, 1, 2].map((i) => activity("bob", BASE + 99 * 60_000 + i, `b${i}`, i)));
    counter.reset();

    const query = log.latest({ user: "ada" }, 5);
    expect(query.explain()).toMatchObject({ kind: "range" });
    const newest = await query.toArray();
    expect(newest.map((a) => a.seq)).toEqual([39, 38, 37, 36, 35]);
    expect(newest.every((a) => a instanceof Activity && a.user === "ada")).toBe(true);
    expect(counter.requests).toBe(1);
    expect(counter.calls.queryPage).toBe(1);
    expect(counter.largestPage).toBe(5);

    counter.reset();
    expect((await log.latest({ user: "ada" }, 1).first())?.seq).toBe(39);
    expect(counter.requests).toBe(1);
    // Asking for more than there is returns them all.
    expect((await log.latest({ user: "bob" }, 10).toArray()).map((a) => a.id)).toEqual(["b2", "b1", "b0"]);
  });

  it("n up to 1,000 is still one request", async () => {
    const { db, counter } = await freshContext(kind, [Activity]);
    const log = db.repository(Activity);
    await log.bulkInsert(Array.from({ length: 1100 }, (_, i) => activity("ada", BASE + i, `a${i}`, i)));
    counter.reset();
    const newest = await log.latest({ user: "ada" }, 1000).toArray();
    expect(newest).toHaveLength(1000);
    expect(newest[0]?.seq).toBe(1099);
    expect(newest[999]?.seq).toBe(100);
    expect(counter.requests).toBe(1);
  });

  it("a tie-breaker after the descending placeholder keeps same-millisecond entities distinct", async () => {
    const { db } = await freshContext(kind, [Activity]);
    const log = db.repository(Activity);
    const now = BASE + 123;
    await log.insert(activity("ada", now - 1, "older", 0));
    await log.insert(activity("ada", now, "x", 1));
    await log.insert(activity("ada", now, "y", 2));
    const latest = await log.latest({ user: "ada" }, 3).toArray();
    // Same millisecond: both kept, ordered by the tie-breaker; then the older one.
    expect(latest.map((a) => [a.id, a.at.getTime()])).toEqual([
      ["x", now],
      ["y", now],
      ["older", now - 1],
    ]);
    const keys = (await db.store.queryPage(log.table, { filter: "PartitionKey eq 'ada'" })).items.map(
      (row) => row.rowKey,
    );
    expect(keys).toHaveLength(3);
    expect(keys[0]).toMatch(/^\d{19}_x$/);
    expect(keys[1]).toBe(keys[0]?.replace(/_x$/, "_y"));
  });

  it("without a tie-breaker, a second entity of the same millisecond fails instead of overwriting", async () => {
    const { db } = await freshContext(kind, [Tick]);
    const ticks = db.repository(Tick);
    const at = new Date(BASE + 7);
    await ticks.insert(Object.assign(new Tick(), { stream: "s", at, value: 1 }));
    const second = ticks.insert(Object.assign(new Tick(), { stream: "s", at, value: 2 }));
    await expect(second).rejects.toBeInstanceOf(EntityAlreadyExistsError);
    const kept = await ticks.latest({ stream: "s" }, 10).toArray();
    expect(kept.map((t) => t.value)).toEqual([1]);
  });

  it("descending integers behind a literal prefix are a log tail too", async () => {
    const { db, counter } = await freshContext(kind, [Revision]);
    const revisions = db.repository(Revision);
    for (const revision of [3, 10, 1, 7, 2])
      await revisions.insert(Object.assign(new Revision(), { doc: "d", revision, text: `r${revision}` }));
    counter.reset();
    expect((await revisions.latest({ doc: "d" }, 2).toArray()).map((r) => r.revision)).toEqual([10, 7]);
    expect(counter.requests).toBe(1);
  });

  it("latest needs a descending RowKey and a positive count", async () => {
    const { db, counter } = await freshContext(kind, [Employee, Activity]);
    const employees = db.repository(Employee);
    expect(() => employees.latest({ department: "Sales" }, 5)).toThrow(ValidationError);
    expect(() => employees.latest({ department: "Sales" }, 5)).toThrow(
      /starts with a descending placeholder.*'empid_\{employeeId:6\}' starts with \{employeeId:6\}.*tie-breaker/,
    );
    const log = db.repository(Activity);
    expect(() => log.latest({ user: "ada" }, 0)).toThrow(ValidationError);
    expect(() => log.latest({ user: "ada" }, 1.5)).toThrow(/positive integer/);
    expect(() => log.latest({} as never, 3)).toThrow(/partition-key field/);
    expect(counter.requests).toBe(0);
  });
});
