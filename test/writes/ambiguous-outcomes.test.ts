/**
 * Ambiguous outcomes: a write whose first attempt was applied but whose answer was lost is retried,
 * and the retry meets the write's own effect (409 on insert, 412 on a conditional update, a failed
 * batch). That is a success when the stored entity is exactly what was written, and the conflict
 * it looks like when another writer changed the entity in between. The counter cases at the end
 * run on entities without and WITH secondary indexes.
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
import { AllTypes, Employee, employee } from "../fixtures/models.js";
import type { FaultEvent } from "../support/faulty-store.js";
import type { StoreMethod } from "../support/store-wrapper.js";
import {
  type FaultyStores,
  faultyContext,
  faultyStores,
  readTable,
  rejectionOf,
  storeNames,
} from "./harness.js";
import { Reading, reading } from "./models.js";

function allTypes(id: string, variant: number): AllTypes {
  return Object.assign(new AllTypes(), {
    group: "g",
    id,
    text: `text ${variant} ünïcödé`,
    int32: -17 * variant,
    int64: 9_007_199_254_740_993n * BigInt(variant),
    double: 5,
    flag: variant % 2 === 0,
    at: new Date(Date.UTC(2024, 1, 29, 12, 34, 56, 789 + variant)),
    guid: `0f8fad5b-d9cb-469f-a165-70867728950${variant % 10}`,
    bytes: Uint8Array.from([0, 1, 2, 254, 255, variant]),
    json: { variant, nested: ["a", { b: null }] },
  });
}

/** Binary values as plain arrays: Azure reads them back as Buffer, a Uint8Array subclass. */
function plain(entity: AllTypes | undefined): Record<string, unknown> | undefined {
  return entity && { ...entity, bytes: entity.bytes && [...entity.bytes] };
}

describe.each(storeNames)("ambiguous outcomes on %s", (name) => {
  let stores: FaultyStores;
  afterEach(() => stores?.close());

  /** A context over the faulty store, and another writer on the same tables that bypasses the faults. */
  async function contexts(entities: Parameters<TableContext["ensureTables"]>) {
    stores = await faultyStores(name);
    const { db, counter, prefix } = await faultyContext(stores, entities);
    const other = new TableContext({ store: stores.direct, tablePrefix: prefix });
    return { db, counter, other };
  }

  describe("insert", () => {
    it("whose first attempt was applied but lost resolves, and the entity is stored once", async () => {
      const { db, counter } = await contexts([AllTypes]);
      const repository = db.repository(AllTypes);
      stores.plan.faultNext({ method: "insert", kind: "lost" });
      const entity = allTypes("1", 3);
      await expect(repository.insert(entity)).resolves.toBe(entity);
      expect(stores.plan.faults.lost).toBe(1);
      expect(counter.calls.insert).toBe(2);
      const rows = await readTable(stores.direct, repository.table);
      expect(rows).toHaveLength(1);
      expect(etagOf(entity)).toBe(rows[0]?.etag);
      expect(plain(await repository.get({ group: "g", id: "1" }))).toEqual(plain(allTypes("1", 3)));
    });

    it("rejects with EntityAlreadyExistsError when another writer changed the entity in between", async () => {
      const { db, other } = await contexts([AllTypes]);
      const repository = db.repository(AllTypes);
      const foreign = allTypes("1", 4);
      stores.plan.faultNext({
        method: "insert",
        kind: "lost",
        onFault: async () => {
          await other.repository(AllTypes).upsert(foreign);
        },
      });
      const error = await rejectionOf(repository.insert(allTypes("1", 3)));
      expect(error).toBeInstanceOf(EntityAlreadyExistsError);
      expect(plain(await repository.get({ group: "g", id: "1" }))).toEqual(plain(allTypes("1", 4)));
    });

    it("rejects when another writer changed a single property, even to a value of another type", async () => {
      const { db } = await contexts([Employee]);
      const employees = db.repository(Employee);
      const table = employees.table;
      stores.plan.faultNext({
        method: "insert",
        kind: "lost",
        onFault: async () => {
          await stores.direct.upsert(
            table,
            { partitionKey: "Sales", rowKey: "empid_000001", age: 31 },
            "merge",
          );
        },
      });
      await expect(employees.insert(employee("Sales", 1, { age: 30 }))).rejects.toBeInstanceOf(
        EntityAlreadyExistsError,
      );
      // A property added by the other writer is a change too.
      stores.plan.faultNext({
        method: "insert",
        kind: "lost",
        onFault: async () => {
          await stores.direct.upsert(
            table,
            { partitionKey: "Sales", rowKey: "empid_000002", extra: "x" },
            "merge",
          );
        },
      });
      await expect(employees.insert(employee("Sales", 2))).rejects.toBeInstanceOf(EntityAlreadyExistsError);
    });

    it("a 409 without any earlier lost attempt is a plain conflict, checked by no read", async () => {
      const { db, counter } = await contexts([Employee]);
      const employees = db.repository(Employee);
      await employees.insert(employee("Sales", 1));
      counter.reset();
      // Same values: only an earlier attempt that may have applied makes a 409 ambiguous.
      await expect(employees.insert(employee("Sales", 1))).rejects.toBeInstanceOf(EntityAlreadyExistsError);
      expect(counter.calls).toMatchObject({ insert: 1, getEntity: 0 });
    });
  });

  describe("conditional update", () => {
    it("whose first attempt was applied but lost resolves (the 412 is its own doing)", async () => {
      const { db, counter } = await contexts([Employee]);
      const employees = db.repository(Employee);
      await employees.insert(employee("Sales", 9, { age: 40 }));
      const mine = await employees.getOrThrow({ department: "Sales", employeeId: 9 });
      const before = etagOf(mine);
      mine.age = 41;
      counter.reset();
      stores.plan.faultNext({ method: "update", kind: "lost" });
      await expect(employees.update(mine)).resolves.toBe(mine);
      expect(counter.calls.update).toBe(2);
      const stored = await stores.direct.getEntity(employees.table, "Sales", "empid_000009");
      expect(stored?.age).toBe(41);
      expect(etagOf(mine)).toBe(stored?.etag);
      expect(etagOf(mine)).not.toBe(before);
    });

    it("in merge mode too", async () => {
      const { db } = await contexts([Employee]);
      const employees = db.repository(Employee);
      await employees.insert(employee("Sales", 9, { age: 40, firstName: "Ann" }));
      const mine = await employees.getOrThrow({ department: "Sales", employeeId: 9 });
      const patch = Object.assign(new Employee(), { department: "Sales", employeeId: 9, age: 42 });
      stores.plan.faultNext({ method: "update", kind: "lost" });
      await employees.update(patch, { mode: "merge", ifMatch: etagOf(mine) as string });
      expect(await employees.get({ department: "Sales", employeeId: 9 })).toMatchObject({
        age: 42,
        firstName: "Ann",
      });
    });

    it("rejects with ConcurrencyError when another writer changed the entity in between", async () => {
      const { db, other } = await contexts([Employee]);
      const employees = db.repository(Employee);
      await employees.insert(employee("Sales", 9, { age: 40 }));
      const mine = await employees.getOrThrow({ department: "Sales", employeeId: 9 });
      mine.age = 41;
      stores.plan.faultNext({
        method: "update",
        kind: "lost",
        onFault: async () => {
          const theirs = await other.repository(Employee).getOrThrow({ department: "Sales", employeeId: 9 });
          theirs.lastName = "Theirs";
          await other.repository(Employee).update(theirs);
        },
      });
      expect(await rejectionOf(employees.update(mine))).toBeInstanceOf(ConcurrencyError);
      expect(await employees.get({ department: "Sales", employeeId: 9 })).toMatchObject({
        age: 41,
        lastName: "Theirs",
      });
    });
  });

  describe("transaction", () => {
    async function setUp() {
      const context = await contexts([Employee]);
      const employees = context.db.repository(Employee);
      await employees.insert(employee("Sales", 1, { age: 30 }));
      await employees.insert(employee("Sales", 2));
      const tracked = await employees.getOrThrow({ department: "Sales", employeeId: 1 });
      tracked.age = 31;
      const inserts = [employee("Sales", 3), employee("Sales", 4, { age: 44 })];
      const run = () =>
        context.db.transaction((tx) => {
          for (const entity of inserts) tx.insert(entity);
          tx.update(tracked);
          tx.delete(Employee, { department: "Sales", employeeId: 2 });
        });
      context.counter.reset();
      return { ...context, employees, run, inserts, tracked };
    }

    it("applied but lost, then retried, resolves and everything is written once", async () => {
      const { employees, run, counter, inserts, tracked } = await setUp();
      stores.plan.faultNext({ method: "submitTransaction", kind: "lost" });
      const result = await run();
      expect(counter.calls.submitTransaction).toBe(2);
      const rows = await employees.find({ department: "Sales" }).toArray();
      expect(rows.map((e) => [e.employeeId, e.age])).toEqual([
        [1, 31],
        [3, inserts[0]!.age],
        [4, 44],
      ]);
      const stored = await readTable(stores.direct, employees.table);
      expect(stored).toHaveLength(3);
      const storedEtag = new Map(stored.map((row) => [row.rowKey, row.etag]));
      const expected = ["empid_000003", "empid_000004", "empid_000001"].map((rowKey) =>
        storedEtag.get(rowKey),
      );
      expect(result.etags.slice(0, 3)).toEqual(expected);
      expect([etagOf(inserts[0]!), etagOf(inserts[1]!), etagOf(tracked)]).toEqual(expected);
    });

    it("rejects with TransactionError when another writer changed one of its entities in between", async () => {
      const { employees, run, other } = await setUp();
      stores.plan.faultNext({
        method: "submitTransaction",
        kind: "lost",
        onFault: async () => {
          await other.repository(Employee).upsert(employee("Sales", 4, { age: 99 }));
        },
      });
      const error = await rejectionOf(run());
      expect(error).toBeInstanceOf(TransactionError);
      expect(error).toMatchObject({ outcomeUnknown: true });
      expect((error as TransactionError).statusCode).toBe(409);
      expect((await employees.getOrThrow({ department: "Sales", employeeId: 4 })).age).toBe(99);
    });

    it("rejects when another writer re-created an entity it deleted", async () => {
      const { employees, run, other } = await setUp();
      stores.plan.faultNext({
        method: "submitTransaction",
        kind: "lost",
        onFault: async () => {
          await other.repository(Employee).insert(employee("Sales", 2, { age: 22 }));
        },
      });
      expect(await rejectionOf(run())).toBeInstanceOf(TransactionError);
      expect((await employees.getOrThrow({ department: "Sales", employeeId: 2 })).age).toBe(22);
    });

    it("a transient fault while checking a lost batch's outcome does not resend the batch", async () => {
      const { db, counter } = await contexts([Reading]);
      const readings = db.repository(Reading);
      const batch = Array.from({ length: 100 }, (_, seq) => reading(1, seq, 1));
      const faulted: FaultEvent[] = [];
      stores.plan.faultNext({ method: "submitTransaction", kind: "lost" });
      stores.plan.faultNext({
        method: "getEntity",
        kind: "busy",
        count: 3,
        onFault: (event) => void faulted.push(event),
      });
      const result = await readings.bulkInsert(batch);
      expect(result).toMatchObject({ written: 100, failed: [] });
      expect(faulted).toHaveLength(3);
      expect(counter.calls.submitTransaction).toBe(2);
      expect(await readTable(stores.direct, readings.table)).toHaveLength(100);
    });
  });

  describe("bulk", () => {
    it("bulkInsert and bulkDelete batches applied but lost are not failures", async () => {
      const { db, counter } = await contexts([Reading]);
      const readings = db.repository(Reading);
      const items = Array.from({ length: 250 }, (_, i) => reading(i % 2, Math.floor(i / 2), 1));
      stores.plan.faultNext({ method: "submitTransaction", kind: "lost", count: 2 });
      const inserted = await readings.bulkInsert(items, { concurrency: 1 });
      expect(inserted).toMatchObject({ written: 250, failed: [] });
      expect(inserted.retries).toBe(2);
      expect(await readTable(stores.direct, readings.table)).toHaveLength(250);
      counter.reset();
      stores.plan.faultNext({ method: "submitTransaction", kind: "lost", count: 2 });
      const deleted = await readings.bulkDelete(items, { concurrency: 1 });
      expect(deleted.failed).toEqual([]);
      expect(deleted.written).toBe(250);
      expect(await readTable(stores.direct, readings.table)).toHaveLength(0);
    });
  });

  describe("delete", () => {
    it("applied but lost resolves true and the entity is gone", async () => {
      const { db, counter } = await contexts([Employee]);
      const employees = db.repository(Employee);
      await employees.insert(employee("Sales", 5));
      counter.reset();
      stores.plan.faultNext({ method: "delete", kind: "lost" });
      await expect(employees.delete({ department: "Sales", employeeId: 5 })).resolves.toBe(true);
      expect(counter.calls.delete).toBe(2);
      expect(await stores.direct.getEntity(employees.table, "Sales", "empid_000005")).toBeUndefined();
    });

    // 503 ServerBusy is answered without processing the request, so it does not make the retry's
    // 404 ambiguous: deleting an entity that never existed still resolves false. (After a reset or a
    // lost answer the outcome is truly unknown, and delete answers true.)
    it("of an absent entity after a 503 resolves false", async () => {
      const { db, counter } = await contexts([Employee]);
      stores.plan.faultNext({ method: "delete", kind: "busy" });
      await expect(db.repository(Employee).delete({ department: "Sales", employeeId: 6 })).resolves.toBe(
        false,
      );
      expect(counter.calls.delete).toBe(2);
    });
  });
});

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

/** The counter without indexes: each write is one request of its own kind (insert, update, upsert, delete). */
@Entity({ table: "PlCounters", partitionKey: "{group}", rowKey: "c_{name}" })
class PlCounter {
  @Column({ type: "String" }) group!: string;
  @Column({ type: "String" }) name!: string;
  @Column({ type: "Int32" }) count!: number;
  @Column({ type: "String" }) tag!: string;
  @Column({ type: "String" }) log!: string;
}

@Entity({ table: "PlLocals", partitionKey: "{group}", rowKey: "c_{name}" })
class PlLocal {
  @Column({ type: "String" }) group!: string;
  @Column({ type: "String" }) name!: string;
  @Column({ type: "Int32" }) count!: number;
  @Column({ type: "String" }) tag!: string;
}

type Op = "insert" | "update" | "upsert" | "delete";

/**
 * The counter writes run on both variants: without indexes each write is one request of its kind,
 * with them one entity group transaction (the entity and its same-partition copies) between
 * intent-log and remote-copy requests. The same rules decide both: exactly ours is a success,
 * anything else is an unknown outcome that `mutate` must never re-apply.
 */
const COUNTER_VARIANTS = [
  {
    variant: "plain",
    indexed: false,
    Counter: PlCounter as unknown as typeof IxCounter,
    Local: PlLocal as unknown as typeof IxLocal,
    method: (op: Op): StoreMethod => op,
  },
  {
    variant: "indexed",
    indexed: true,
    Counter: IxCounter,
    Local: IxLocal,
    method: (_op: Op): StoreMethod => "submitTransaction",
  },
] as const;

const KEY = { group: "g", name: "c" };

/** Applies change `id` once: appended to the log, the count and the tag follow. */
function apply(id: string): (current: IxCounter) => void {
  return (current) => {
    current.log = current.log ? `${current.log},${id}` : id;
    current.count = current.log.split(",").length;
    current.tag = `t-${id}`;
  };
}

describe.each(storeNames)("ambiguous outcomes of counter writes on %s", (name) => {
  let stores: FaultyStores;
  afterEach(() => stores?.close());

  describe.each(COUNTER_VARIANTS)("$variant entities", ({ indexed, Counter, Local, method }) => {
    const ixCounter = (name: string, count: number, tag = `t-${name}-${count}`): IxCounter =>
      Object.assign(new Counter(), { group: "g", name, count, tag, log: "" });
    const ixLocal = (name: string, count: number, tag = `t-${name}-${count}`): IxLocal =>
      Object.assign(new Local(), { group: "g", name, count, tag });

    /** A context over the faulty store, and another writer on the same tables that bypasses the faults. */
    async function contexts() {
      const { db, counter, other } = await contextPair();
      return { db, counter, repository: db.repository(Counter), other: other.repository(Counter) };
    }

    async function contextPair() {
      stores = await faultyStores(name);
      const { db, counter, prefix } = await faultyContext(stores, [Counter, Local]);
      const other = new TableContext({ store: stores.direct, tablePrefix: prefix });
      return { db, counter, repository: db.repository(Counter), other };
    }

    /** The copies stored for the counter (every table), read without faults. */
    async function copiesOf(db: TableContext) {
      const repository = db.repository(Counter);
      const byCount = indexed
        ? (await readTable(stores.direct, `${repository.table}ByCount`)).map((row) => row.partitionKey).sort()
        : [];
      const own = await readTable(stores.direct, repository.table);
      const tags = own.filter((row) => row.rowKey.startsWith("tag_")).map((row) => row.rowKey);
      return { byCount, tags, entities: own.filter((row) => row.rowKey.startsWith("c_")) };
    }

    it("insert: applied but lost resolves, entity and copies stored once, ETag tracked", async () => {
      const { db, repository, counter } = await contexts();
      stores.plan.faultNext({ method: method("insert"), kind: "lost" });
      const entity = ixCounter("c", 1);
      await expect(repository.insert(entity)).resolves.toBe(entity);
      expect(counter.calls[method("insert")]).toBe(2);
      const { entities, tags, byCount } = await copiesOf(db);
      expect(entities).toHaveLength(1);
      expect(etagOf(entity)).toBe(entities[0]?.etag);
      expect(tags).toEqual(indexed ? ["tag_t-c-1"] : []);
      expect(byCount).toEqual(indexed ? ["n_000001"] : []);
    });

    it("insert: applied, lost, then overwritten by another writer rejects; mutate's create reports outcomeUnknown", async () => {
      const { repository, other } = await contexts();
      stores.plan.faultNext({
        method: method("insert"),
        kind: "lost",
        onFault: async () => void (await other.upsert(ixCounter("c", 7, "theirs"))),
      });
      expect(await rejectionOf(repository.insert(ixCounter("c", 1)))).toBeInstanceOf(
        EntityAlreadyExistsError,
      );

      // The same through mutate(create): re-applying on top of the other writer's version could count twice.
      stores.plan.faultNext({
        method: method("insert"),
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
      stores.plan.faultNext({ method: method("update"), kind: "lost" });
      await expect(repository.update(mine)).resolves.toBe(mine);
      const { entities, tags, byCount } = await copiesOf(db);
      expect(entities[0]).toMatchObject({ count: 2, tag: "t2" });
      expect(etagOf(mine)).toBe(entities[0]?.etag);
      expect(etagOf(mine)).not.toBe(before);
      expect(tags).toEqual(indexed ? ["tag_t2"] : []);
      expect(byCount).toEqual(indexed ? ["n_000002"] : []);
    });

    it("conditional update: applied, lost, then changed by another writer is an unknown outcome", async () => {
      const { repository, other } = await contexts();
      await repository.insert(ixCounter("c", 1));
      const mine = await repository.getOrThrow(KEY);
      Object.assign(mine, { count: 2, tag: "t2" });
      stores.plan.faultNext({
        method: method("update"),
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
      stores.plan.faultNext({ method: method("upsert"), kind: "lost" });
      await repository.upsert(ixCounter("c", 2, "t2"));
      stores.plan.faultNext({
        method: method("upsert"),
        kind: "lost",
        onFault: async () => void (await other.upsert(ixCounter("c", 9, "theirs"))),
      });
      const entity = ixCounter("c", 3, "t3");
      await repository.upsert(entity);
      const { entities, tags } = await copiesOf(db);
      expect(entities[0]).toMatchObject({ count: 3, tag: "t3" });
      expect(etagOf(entity)).toBe(entities[0]?.etag);
      expect(tags).toEqual(indexed ? ["tag_t3"] : []);
    });

    it("delete: applied but lost resolves true, the entity and its copies are gone", async () => {
      const { db, repository } = await contexts();
      const entity = await repository.insert(ixCounter("c", 1));
      stores.plan.faultNext({ method: method("delete"), kind: "lost" });
      await expect(repository.delete(entity)).resolves.toBe(true);
      const { entities, tags, byCount } = await copiesOf(db);
      expect({ entities, tags, byCount }).toEqual({ entities: [], tags: [], byCount: [] });
    });

    it("transaction: applied but lost resolves; overwritten meanwhile rejects", async () => {
      const { db, other } = await contextPair();
      const locals = db.repository(Local);
      const theirs = other.repository(Local);
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
      expect(tags.map((row) => row.rowKey)).toEqual(indexed ? ["tag_t-a-1", "tag_t-b-1"] : []);

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
        method: method("update"),
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
      stores.plan.faultNext({ method: method("update"), kind: "lost" });
      const written = await repository.mutate(KEY, apply("a"));
      expect(written?.log).toBe("a");
      expect((await repository.getOrThrow(KEY)).log).toBe("a");
    });
  });
});
