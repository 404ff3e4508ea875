/**
 * Ambiguous outcomes: a write whose first attempt was applied but whose answer was lost is retried,
 * and the retry meets the write's own effect (409 on insert, 412 on a conditional update, a failed
 * batch). That is a success when the stored entity is exactly what was written, and the conflict
 * it looks like when another writer changed the entity in between.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  ConcurrencyError,
  EntityAlreadyExistsError,
  etagOf,
  TableContext,
  TransactionError,
} from "../../src/index.js";
import { AllTypes, Employee, employee } from "../fixtures/models.js";
import type { FaultEvent } from "../support/faulty-store.js";
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
