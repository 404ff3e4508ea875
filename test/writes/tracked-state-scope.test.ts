/**
 * What tablekit tracks about an instance (its ETag, its index copies) is true of one store and
 * table prefix only. An instance read through one context and written through another context on
 * another store or prefix must not carry the first one's ETag or copies over: the same key there is
 * another entity, with other versions and other copies. Contexts on the same store and prefix share it.
 */
import { describe, expect, it } from "vitest";
import {
  Column,
  ConcurrencyError,
  Entity,
  etagOf,
  MemoryStore,
  TableContext,
  ValidationError,
} from "../../src/index.js";
import { Employee, employee } from "../fixtures/models.js";
import { rejectionOf } from "./harness.js";

@Entity({
  table: "ScopedTags",
  partitionKey: "{group}",
  rowKey: "s_{name}",
  indexes: {
    byTag: { rowKey: "tag_{tag}" },
    byColor: { table: "ScopedTagsByColor", partitionKey: "{color}", rowKey: "{group}_{name}" },
  },
})
class ScopedTag {
  @Column({ type: "String" }) group!: string;
  @Column({ type: "String" }) name!: string;
  @Column({ type: "String" }) tag!: string;
  @Column({ type: "String" }) color!: string;
}

function scopedTag(tag: string, color: string): ScopedTag {
  return Object.assign(new ScopedTag(), { group: "g", name: "n", tag, color });
}

async function context(store: MemoryStore, tablePrefix?: string): Promise<TableContext> {
  const db = new TableContext({ store, ...(tablePrefix ? { tablePrefix } : {}) });
  await db.ensureTables(Employee, ScopedTag);
  return db;
}

const KEY = { department: "Sales", employeeId: 1 };

describe("tracked ETags and copies are scoped to a store and table prefix", () => {
  it.each([
    ["another store", async () => [await context(new MemoryStore()), await context(new MemoryStore())]],
    [
      "another prefix on the same store",
      async () => {
        const store = new MemoryStore();
        return [await context(store, "a"), await context(store, "b")];
      },
    ],
  ] as const)("an ETag read through one context is no condition in %s", async (_label, make) => {
    const [a, b] = (await make()) as TableContext[];
    await a!.repository(Employee).insert(employee("Sales", 1, { age: 30 }));
    await b!.repository(Employee).insert(employee("Sales", 1, { age: 50 }));
    const fromA = await a!.repository(Employee).getOrThrow(KEY);
    fromA.age = 31;
    // B never saw this instance: it has no version of it to be conditional on.
    const error = await rejectionOf(b!.repository(Employee).update(fromA));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ rule: "etag-required" });
    expect((await b!.repository(Employee).getOrThrow(KEY)).age).toBe(50);
    // A delete through B is unconditional (no ETag of B's), not conditional on A's version.
    await expect(b!.repository(Employee).delete(fromA)).resolves.toBe(true);
    // A still holds its own version.
    await expect(a!.repository(Employee).update(fromA)).resolves.toBe(fromA);
  });

  it("etagOf gives the latest context's ETag, and each context keeps using its own", async () => {
    const [a, b] = [await context(new MemoryStore()), await context(new MemoryStore())];
    await a.repository(Employee).insert(employee("Sales", 1, { age: 30 }));
    const entity = await a.repository(Employee).getOrThrow(KEY);
    const inA = etagOf(entity);
    await b.repository(Employee).insert(entity);
    const inB = (await b.repository(Employee).getOrThrow(KEY)) && etagOf(entity);
    const storedB = await b.store.getEntity(b.repository(Employee).table, "Sales", "empid_000001");
    expect(inB).toBe(storedB?.etag);
    entity.age = 32;
    // A's update is conditional on A's version (the one it read), not on B's.
    await expect(a.repository(Employee).update(entity)).resolves.toBe(entity);
    const storedA = await a.store.getEntity(a.repository(Employee).table, "Sales", "empid_000001");
    expect(storedA?.age).toBe(32);
    expect(etagOf(entity)).toBe(storedA?.etag);
    expect(etagOf(entity)).not.toBe(inA);
    // And B's is still B's: someone else's change in B is detected.
    const theirs = await b.repository(Employee).getOrThrow(KEY);
    theirs.age = 99;
    await b.repository(Employee).update(theirs);
    expect(await rejectionOf(b.repository(Employee).update(entity))).toBeInstanceOf(ConcurrencyError);
  });

  it("contexts on the same store and prefix share what they track", async () => {
    const store = new MemoryStore();
    const [a, b] = [await context(store), await context(store)];
    await a.repository(Employee).insert(employee("Sales", 1, { age: 30 }));
    const entity = await a.repository(Employee).getOrThrow(KEY);
    entity.age = 33;
    await expect(b.repository(Employee).update(entity)).resolves.toBe(entity);
  });

  it("index copies tracked in one store are not taken for another store's", async () => {
    const [a, b] = [await context(new MemoryStore()), await context(new MemoryStore())];
    await a.repository(ScopedTag).insert(scopedTag("t1", "red"));
    await b.repository(ScopedTag).insert(scopedTag("t2", "blue"));
    const fromA = await a.repository(ScopedTag).getOrThrow({ group: "g", name: "n" });
    fromA.tag = "t3";
    fromA.color = "green";
    // Written to B: B's copies (t2, blue) must go, whatever A's instance says it had (t1, red).
    await b.repository(ScopedTag).upsert(fromA);
    expect(await b.verifyIndexes(ScopedTag)).toEqual({ missing: [], stale: [], orphans: [] });
    expect(await b.repository(ScopedTag).index("byTag").get({ group: "g", tag: "t2" })).toBeUndefined();
    expect(await b.repository(ScopedTag).index("byColor").find({ color: "blue" }).toArray()).toEqual([]);
    expect(await a.verifyIndexes(ScopedTag)).toEqual({ missing: [], stale: [], orphans: [] });
  });
});
