/**
 * Ambiguous outcomes of writes to entities WITH secondary indexes (the plain cases are in
 * ambiguous-outcomes.test.ts). An indexed write is an entity group transaction (the entity and its
 * same-partition copies) between intent-log and remote-copy requests; when the transaction's answer
 * is lost and the retry fails, the stored state decides, by the same rules as for plain writes:
 * exactly ours is a success, anything else is an unknown outcome that `mutate` must never re-apply.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  Column,
  ConcurrencyError,
  Entity,
  EntityAlreadyExistsError,
  etagOf,
  TableContext,
  TransactionError,
} from "../../src/index.js";
import {
  type FaultyStores,
  faultyContext,
  faultyStores,
  readTable,
  rejectionOf,
  storeNames,
} from "./harness.js";

/**
 * A counter with every kind of copy the write path handles differently: `byTag` in the entity's
 * own partition (rides in its transaction, unique), `byCount` in another table (kept through the
 * intent log). `log` lists the ids of the changes applied, so a double application shows.
 */
@Entity({
  table: "IxCounters",
  partitionKey: "{group}",
  rowKey: "c_{name}",
  indexes: {
    byTag: { rowKey: "tag_{tag}", unique: true },
    byCount: { table: "IxCountersByCount", partitionKey: "n_{count:6}", rowKey: "{group}_{name}" },
  },
})
class IxCounter {
  @Column({ type: "String" }) group!: string;
  @Column({ type: "String" }) name!: string;
  @Column({ type: "Int32" }) count!: number;
  @Column({ type: "String" }) tag!: string;
  @Column({ type: "String" }) log!: string;
}

/** The same with its only index in its own partition: such entities can join a transaction. */
@Entity({
  table: "IxLocals",
  partitionKey: "{group}",
  rowKey: "c_{name}",
  indexes: { byTag: { rowKey: "tag_{tag}", unique: true } },
})
class IxLocal {
  @Column({ type: "String" }) group!: string;
  @Column({ type: "String" }) name!: string;
  @Column({ type: "Int32" }) count!: number;
  @Column({ type: "String" }) tag!: string;
}

function ixLocal(name: string, count: number, tag = `t-${name}-${count}`): IxLocal {
  return Object.assign(new IxLocal(), { group: "g", name, count, tag });
}

function ixCounter(name: string, count: number, tag = `t-${name}-${count}`): IxCounter {
  return Object.assign(new IxCounter(), { group: "g", name, count, tag, log: "" });
}

const KEY = { group: "g", name: "c" };

/** Applies change `id` once: appended to the log, the count and the tag follow. */
function apply(id: string): (current: IxCounter) => void {
  return (current) => {
    current.log = current.log ? `${current.log},${id}` : id;
    current.count = current.log.split(",").length;
    current.tag = `t-${id}`;
  };
}

describe.each(storeNames)("ambiguous outcomes of indexed writes on %s", (name) => {
  let stores: FaultyStores;
  afterEach(() => stores?.close());

  /** A context over the faulty store, and another writer on the same tables that bypasses the faults. */
  async function contexts() {
    const { db, counter, other } = await contextPair();
    return { db, counter, repository: db.repository(IxCounter), other: other.repository(IxCounter) };
  }

  async function contextPair() {
    stores = await faultyStores(name);
    const { db, counter, prefix } = await faultyContext(stores, [IxCounter, IxLocal]);
    const other = new TableContext({ store: stores.direct, tablePrefix: prefix });
    return { db, counter, repository: db.repository(IxCounter), other };
  }

  /** The copies stored for the counter (every table), read without faults. */
  async function copiesOf(db: TableContext) {
    const repository = db.repository(IxCounter);
    const byCount = (await readTable(stores.direct, `${repository.table}ByCount`))
      .map((row) => row.partitionKey)
      .sort();
    const own = await readTable(stores.direct, repository.table);
    const tags = own.filter((row) => row.rowKey.startsWith("tag_")).map((row) => row.rowKey);
    return { byCount, tags, entities: own.filter((row) => row.rowKey.startsWith("c_")) };
  }

  it("insert: applied but lost resolves, entity and copies stored once, ETag tracked", async () => {
    const { db, repository, counter } = await contexts();
    stores.plan.faultNext({ method: "submitTransaction", kind: "lost" });
    const entity = ixCounter("c", 1);
    await expect(repository.insert(entity)).resolves.toBe(entity);
    expect(counter.calls.submitTransaction).toBe(2);
    const { entities, tags, byCount } = await copiesOf(db);
    expect(entities).toHaveLength(1);
    expect(etagOf(entity)).toBe(entities[0]?.etag);
    expect(tags).toEqual(["tag_t-c-1"]);
    expect(byCount).toEqual(["n_000001"]);
  });

  it("insert: applied, lost, then overwritten by another writer rejects; mutate's create reports outcomeUnknown", async () => {
    const { repository, other } = await contexts();
    stores.plan.faultNext({
      method: "submitTransaction",
      kind: "lost",
      onFault: async () => void (await other.upsert(ixCounter("c", 7, "theirs"))),
    });
    expect(await rejectionOf(repository.insert(ixCounter("c", 1)))).toBeInstanceOf(EntityAlreadyExistsError);

    // The same through mutate(create): re-applying on top of the other writer's version could count twice.
    stores.plan.faultNext({
      method: "submitTransaction",
      kind: "lost",
      onFault: async () =>
        void (await other.upsert(Object.assign(ixCounter("d", 5, "theirs-d"), { log: "x" }))),
    });
    const error = await rejectionOf(
      repository.mutate({ group: "g", name: "d" }, apply("a"), { create: () => ixCounter("d", 0) }),
    );
    expect(error).toBeInstanceOf(ConcurrencyError);
    expect(error).toMatchObject({ outcomeUnknown: true });
    expect((await other.getOrThrow({ group: "g", name: "d" })).log).toBe("x");
  });

  it("conditional update: applied but lost resolves (the 412 is its own doing)", async () => {
    const { db, repository } = await contexts();
    await repository.insert(ixCounter("c", 1));
    const mine = await repository.getOrThrow(KEY);
    const before = etagOf(mine);
    Object.assign(mine, { count: 2, tag: "t2" });
    stores.plan.faultNext({ method: "submitTransaction", kind: "lost" });
    await expect(repository.update(mine)).resolves.toBe(mine);
    const { entities, tags, byCount } = await copiesOf(db);
    expect(entities[0]).toMatchObject({ count: 2, tag: "t2" });
    expect(etagOf(mine)).toBe(entities[0]?.etag);
    expect(etagOf(mine)).not.toBe(before);
    expect(tags).toEqual(["tag_t2"]);
    expect(byCount).toEqual(["n_000002"]);
  });

  it("conditional update: applied, lost, then changed by another writer is an unknown outcome", async () => {
    const { repository, other } = await contexts();
    await repository.insert(ixCounter("c", 1));
    const mine = await repository.getOrThrow(KEY);
    Object.assign(mine, { count: 2, tag: "t2" });
    stores.plan.faultNext({
      method: "submitTransaction",
      kind: "lost",
      onFault: async () => {
        const theirs = await other.getOrThrow(KEY);
        theirs.tag = "theirs";
        await other.update(theirs);
      },
    });
    const error = await rejectionOf(repository.update(mine));
    expect(error).toBeInstanceOf(ConcurrencyError);
    expect(error).toMatchObject({ outcomeUnknown: true });
    expect(await repository.get(KEY)).toMatchObject({ count: 2, tag: "theirs" });
  });

  it("upsert: applied but lost (even when overwritten meanwhile) ends with our state", async () => {
    const { db, repository, other } = await contexts();
    await repository.insert(ixCounter("c", 1));
    stores.plan.faultNext({ method: "submitTransaction", kind: "lost" });
    await repository.upsert(ixCounter("c", 2, "t2"));
    stores.plan.faultNext({
      method: "submitTransaction",
      kind: "lost",
      onFault: async () => void (await other.upsert(ixCounter("c", 9, "theirs"))),
    });
    const entity = ixCounter("c", 3, "t3");
    await repository.upsert(entity);
    const { entities, tags } = await copiesOf(db);
    expect(entities[0]).toMatchObject({ count: 3, tag: "t3" });
    expect(etagOf(entity)).toBe(entities[0]?.etag);
    expect(tags).toEqual(["tag_t3"]);
  });

  it("delete: applied but lost resolves true, the entity and its copies are gone", async () => {
    const { db, repository } = await contexts();
    const entity = await repository.insert(ixCounter("c", 1));
    stores.plan.faultNext({ method: "submitTransaction", kind: "lost" });
    await expect(repository.delete(entity)).resolves.toBe(true);
    const { entities, tags, byCount } = await copiesOf(db);
    expect({ entities, tags, byCount }).toEqual({ entities: [], tags: [], byCount: [] });
  });

  it("transaction: applied but lost resolves; overwritten meanwhile rejects", async () => {
    const { db, other } = await contextPair();
    const locals = db.repository(IxLocal);
    const theirs = other.repository(IxLocal);
    const a = ixLocal("a", 1);
    stores.plan.faultNext({ method: "submitTransaction", kind: "lost" });
    const result = await db.transaction((tx) => {
      tx.insert(a);
      tx.insert(ixLocal("b", 1));
    });
    expect(result.etags[0]).toBe(etagOf(a));
    expect((await locals.find({ group: "g" }).toArray()).map((e) => e.name)).toEqual(["a", "b"]);
    const tags = (await readTable(stores.direct, locals.table)).filter((row) =>
      row.rowKey.startsWith("tag_"),
    );
    expect(tags.map((row) => row.rowKey)).toEqual(["tag_t-a-1", "tag_t-b-1"]);

    stores.plan.faultNext({
      method: "submitTransaction",
      kind: "lost",
      onFault: async () => void (await theirs.upsert(ixLocal("e", 9, "theirs-e"))),
    });
    const error = await rejectionOf(
      db.transaction((tx) => {
        tx.insert(ixLocal("e", 1));
        tx.insert(ixLocal("f", 1));
      }),
    );
    expect(error).toBeInstanceOf(TransactionError);
    expect(error).toMatchObject({ outcomeUnknown: true });
    expect(await locals.get({ group: "g", name: "e" })).toMatchObject({ count: 9 });
  });

  it("mutate: a lost answer and a concurrent writer never apply one change twice", async () => {
    const { repository, other } = await contexts();
    await repository.insert(ixCounter("c", 0));
    stores.plan.faultNext({
      method: "submitTransaction",
      kind: "lost",
      // Our change "a" is stored but we do not know it; another writer applies "b" on top.
      onFault: async () => void (await other.mutate(KEY, apply("b"))),
    });
    const error = await rejectionOf(repository.mutate(KEY, apply("a"), { attempts: 5 }));
    expect(error).toBeInstanceOf(ConcurrencyError);
    expect(error).toMatchObject({ outcomeUnknown: true });
    expect((await repository.getOrThrow(KEY)).log).toBe("a,b");
  });

  it("mutate: a lost answer without a concurrent writer succeeds once", async () => {
    const { repository } = await contexts();
    await repository.insert(ixCounter("c", 0));
    stores.plan.faultNext({ method: "submitTransaction", kind: "lost" });
    const written = await repository.mutate(KEY, apply("a"));
    expect(written?.log).toBe("a");
    expect((await repository.getOrThrow(KEY)).log).toBe("a");
  });
});
