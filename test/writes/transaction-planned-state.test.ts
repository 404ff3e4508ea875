/**
 * `db.transaction` plans an entity's summary delta and copies from the row it reads first. When
 * another writer changes that row before the commit, the transaction must not apply to a row it did
 * not plan for: the entity action is conditional on the state read (an absent entity included), the
 * service refuses it, and the transaction is planned again from what is stored now. Here the other
 * writer's insert is made to land exactly between the reads and the commit (deterministic: the store
 * wrapper runs it just before the transaction is sent).
 */
import { describe, expect, it } from "vitest";
import { Column, Entity, MemoryStore, TableContext } from "../../src/index.js";
import { type StoreRequest, StoreWrapper } from "../support/store-wrapper.js";

@Entity({
  table: "RaceStaff",
  partitionKey: "{team}",
  rowKey: "{id:4}",
  summaries: { perTeam: { rowKey: "summary", count: "members", sum: { pay: "payroll" } } },
})
class Staff {
  @Column({ type: "String" }) team!: string;
  @Column({ type: "Int32" }) id!: number;
  @Column({ type: "Int32" }) pay!: number;
}

@Entity({
  table: "RaceTagged",
  partitionKey: "{team}",
  rowKey: "id_{id:4}",
  indexes: { byTag: { rowKey: "tag_{tag}_{id:4}" } },
  summaries: { perTeam: { rowKey: "summary", count: "members", sum: { pay: "payroll" } } },
})
class Tagged {
  @Column({ type: "String" }) team!: string;
  @Column({ type: "Int32" }) id!: number;
  @Column({ type: "Int32" }) pay!: number;
  @Column({ type: "String" }) tag!: string;
}

/** Runs `between` once, just before the first transaction is sent (after every read it was planned from). */
class InterleavingStore extends StoreWrapper {
  #pending: (() => Promise<unknown>) | undefined;
  arm(between: () => Promise<unknown>): void {
    this.#pending = between;
  }
  protected override async around<T>(request: StoreRequest, send: () => Promise<T>): Promise<T> {
    const between = this.#pending;
    if (between && request.method === "submitTransaction") {
      this.#pending = undefined;
      await between();
    }
    return send();
  }
}

async function setUp<T extends object>(entity: new () => T) {
  const memory = new MemoryStore();
  const store = new InterleavingStore(memory);
  const db = new TableContext({ store });
  const other = new TableContext({ store: memory });
  await db.ensureTables(entity);
  return { db, other, store };
}

const staff = (id: number, pay: number) => Object.assign(new Staff(), { team: "a", id, pay });
const tagged = (id: number, pay: number, tag: string) =>
  Object.assign(new Tagged(), { team: "a", id, pay, tag });

describe("db.transaction when the entity changes between its read and the commit", () => {
  it("a delete planned from an absent entity deletes the one that appeared, and the summary counts it out", async () => {
    const { db, other, store } = await setUp(Staff);
    await db.repository(Staff).insert(staff(1, 10));
    store.arm(() => other.repository(Staff).insert(staff(7, 70)));
    await db.transaction((tx) => tx.upsert(staff(2, 20)).delete(Staff, { team: "a", id: 7 }));
    const rows = await db.repository(Staff).find({ team: "a" }).toArray();
    expect(rows.map((row) => row.id)).toEqual([1, 2]);
    expect(await db.repository(Staff).summary("perTeam", { team: "a" })).toEqual({ members: 2, payroll: 30 });
  });

  it("an update with '*' planned from an absent entity updates the one that appeared, with its delta", async () => {
    const { db, other, store } = await setUp(Staff);
    store.arm(() => other.repository(Staff).insert(staff(7, 70)));
    await db.transaction((tx) => tx.update(staff(7, 75), { ifMatch: "*" }));
    expect(await db.repository(Staff).summary("perTeam", { team: "a" })).toEqual({ members: 1, payroll: 75 });
  });

  it("a delete of an entity that stays absent is the service's 404, and nothing is written", async () => {
    const { db } = await setUp(Staff);
    await expect(
      db.transaction((tx) => tx.upsert(staff(2, 20)).delete(Staff, { team: "a", id: 7 })),
    ).rejects.toMatchObject({ index: 1, statusCode: 404 });
    expect(await db.repository(Staff).find({ team: "a" }).toArray()).toEqual([]);
  });

  it("an indexed delete planned from an absent entity removes the appeared entity's copy too", async () => {
    const { db, other, store } = await setUp(Tagged);
    store.arm(() => other.repository(Tagged).insert(tagged(7, 70, "x")));
    await db.transaction((tx) => tx.delete(Tagged, { team: "a", id: 7 }));
    expect(await db.repository(Tagged).index("byTag").find({ team: "a" }).toArray()).toEqual([]);
    expect(await db.verifyIndexes(Tagged)).toEqual({ missing: [], stale: [], orphans: [] });
    expect(await db.repository(Tagged).summary("perTeam", { team: "a" })).toEqual({ members: 0, payroll: 0 });
  });
});
