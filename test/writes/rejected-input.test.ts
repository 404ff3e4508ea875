/**
 * Rejected transaction and bulk input sends nothing: each violation is a ValidationError naming
 * the rule (and the operation), and neither the port (CountingStore) nor, on Azurite, the HTTP
 * proxy sees a single request.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type TableContext, ValidationError } from "../../src/index.js";
import { Employee, employee } from "../fixtures/models.js";
import type { CountingStore } from "../support/counting-store.js";
import { type FaultyStores, faultyContext, faultyStores, rejectionOf, storeNames } from "./harness.js";
import { Note, Reading, reading } from "./models.js";

function expectRule(error: unknown, rule: string, mentions?: RegExp): void {
  expect(error).toBeInstanceOf(ValidationError);
  expect((error as ValidationError).rule).toBe(rule);
  if (mentions) expect((error as ValidationError).message).toMatch(mentions);
}

describe.each(storeNames)("rejected input sends no request on %s", (name) => {
  let stores: FaultyStores;
  let db: TableContext;
  let counter: CountingStore;
  afterEach(() => stores?.close());

  async function setUp() {
    stores = await faultyStores(name);
    ({ db, counter } = await faultyContext(stores, [Employee, Note, Reading]));
  }

  function expectNoRequest(): void {
    expect(counter.requests).toBe(0);
    expect(stores.plan.requests).toBe(0);
  }

  describe("transactions", () => {
    it("empty", async () => {
      await setUp();
      expectRule(await rejectionOf(db.transaction(() => {})), "transaction-empty");
      expectNoRequest();
    });

    it("101 operations, naming the first one over the limit", async () => {
      await setUp();
      const error = await rejectionOf(
        db.transaction((tx) => {
          for (let i = 0; i < 101; i++) tx.insert(employee("Sales", i));
        }),
      );
      expectRule(error, "transaction-operations", /\b100\b/);
      expect((error as Error).message).toMatch(/101/);
      expectNoRequest();
    });

    it("100 operations is fine", async () => {
      await setUp();
      await db.transaction((tx) => {
        for (let i = 0; i < 100; i++) tx.insert(employee("Sales", i));
      });
      expect(counter.requests).toBe(1);
    });

    it("a payload over 4 MiB (each entity within its own limits)", async () => {
      await setUp();
      const error = await rejectionOf(
        db.transaction((tx) => {
          // 100 × 30,000 two-byte characters ≈ 6 MB of UTF-8.
          for (let i = 0; i < 100; i++)
            tx.insert(Object.assign(new Note(), { owner: "A", id: `n${i}`, body: "é".repeat(30_000) }));
        }),
      );
      expectRule(error, "transaction-payload", /4 MiB/);
      expectNoRequest();
    });

    it("mixed partitions, naming the operation", async () => {
      await setUp();
      const error = await rejectionOf(
        db.transaction((tx) => {
          tx.insert(employee("Sales", 1));
          tx.upsert(employee("Sales", 2));
          tx.insert(employee("Marketing", 3));
        }),
      );
      expectRule(error, "transaction-partition", /operation 2\b.*Marketing/);
      expectNoRequest();
    });

    it("the same entity twice, naming both operations", async () => {
      await setUp();
      const error = await rejectionOf(
        db.transaction((tx) => {
          tx.insert(employee("Sales", 1));
          tx.insert(employee("Sales", 2));
          tx.delete(Employee, { department: "Sales", employeeId: 1 });
        }),
      );
      expectRule(error, "transaction-duplicate", /operation 2\b.*operation 0\b/);
      expectNoRequest();
    });

    it("two tables", async () => {
      await setUp();
      const error = await rejectionOf(
        db.transaction((tx) => {
          tx.insert(Object.assign(new Note(), { owner: "Sales", id: "1" }));
          tx.insert(employee("Sales", 1));
        }),
      );
      expectRule(error, "transaction-table");
      expectNoRequest();
    });

    it("an operation with an invalid key", async () => {
      await setUp();
      const error = await rejectionOf(
        db.transaction((tx) => {
          tx.insert(employee("Sales", 1));
          tx.insert(employee("Sales/East", 2));
        }),
      );
      expectRule(error, "key-characters");
      expectNoRequest();
    });
  });

  describe("bulk writes", () => {
    it("an item with an invalid key", async () => {
      await setUp();
      const readings = db.repository(Reading);
      const items = [Object.assign(reading(1, 1, 1), { sensor: "s#1" }), reading(1, 2, 1), reading(2, 1, 1)];
      expectRule(await rejectionOf(readings.bulkUpsert(items)), "key-characters");
      expectRule(await rejectionOf(readings.bulkInsert(items)), "key-characters");
      expectRule(
        await rejectionOf(
          readings.bulkDelete([
            { sensor: "s?", seq: 1 },
            { sensor: "s1", seq: 1 },
          ]),
        ),
        "key-characters",
      );
      expectRule(
        await rejectionOf(db.repository(Employee).bulkInsert([employee("Sales", -1)])),
        "key-negative",
      );
      expectNoRequest();
    });

    it("an item with a key field missing, from an async source", async () => {
      await setUp();
      async function* source() {
        yield Object.assign(new Reading(), { sensor: "s001", round: 1 });
        yield reading(1, 2, 1);
      }
      expectRule(await rejectionOf(db.repository(Reading).bulkUpsert(source())), "key-field-missing");
      expectNoRequest();
    });

    it("an item with a string over the service's limit", async () => {
      await setUp();
      const notes = [
        Object.assign(new Note(), { owner: "A", id: "long", body: "é".repeat(40_000) }),
        Object.assign(new Note(), { owner: "A", id: "fine", body: "x".repeat(31_000) }),
      ];
      expectRule(await rejectionOf(db.repository(Note).bulkUpsert(notes)), "string-size");
      expectNoRequest();
    });

    it("bad options", async () => {
      await setUp();
      const readings = db.repository(Reading);
      const items = [reading(1, 1, 1)];
      expectRule(await rejectionOf(readings.bulkUpsert(items, { concurrency: 0 })), "positive-integer");
      expectRule(await rejectionOf(readings.bulkUpsert(items, { maxBufferedUnits: -5 })), "positive-integer");
      let thrown: unknown;
      try {
        await readings.bulkUpsert(items, { mode: "patch" as never });
      } catch (error) {
        thrown = error;
      }
      expectRule(thrown, "mode");
      expectNoRequest();
    });

    // Found at HEAD eae5eae: bulkUpsert was not async and checked `mode` first, so a bad mode was thrown
    // synchronously from a method returning a promise (`bulkUpsert(…).catch(…)` missed it).
    it("a bad mode is a rejection like every other bad option", async () => {
      await setUp();
      const readings = db.repository(Reading);
      let promise: Promise<unknown> | undefined;
      expect(() => {
        promise = readings.bulkUpsert([reading(1, 1, 1)], { mode: "patch" as never });
      }).not.toThrow();
      expectRule(await rejectionOf(promise!), "mode");
    });

    it("nothing to write sends nothing", async () => {
      await setUp();
      expect(await db.repository(Reading).bulkUpsert([])).toEqual({
        written: 0,
        batches: 0,
        retries: 0,
        failed: [],
      });
      expectNoRequest();
    });

    // An array is checked whole before the first request (a stream can only be checked as it is
    // read: items before a bad one are sent, as the bulk writer documents).
    it("an invalid item after valid ones of an array sends nothing", async () => {
      await setUp();
      const readings = db.repository(Reading);
      const items = [reading(1, 1, 1), reading(1, 2, 1), Object.assign(reading(1, 3, 1), { sensor: "s/1" })];
      expectRule(await rejectionOf(readings.bulkUpsert(items)), "key-characters");
      expectNoRequest();
    });
  });
});
