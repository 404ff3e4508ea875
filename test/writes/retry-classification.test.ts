/**
 * Which failures are retried, counted in requests on both stores: final answers (400, 403, 404,
 * 409, 412, 413) are attempted exactly once; transient ones (503, 500, 408, resets, lost answers)
 * retries + 1 times, after which the last failure surfaces as a StoreError with its status.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  ConcurrencyError,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  StoreError,
  TableContext,
  TransactionError,
  ValidationError,
} from "../../src/index.js";
import { Employee, employee } from "../fixtures/models.js";
import type { StoreMethod } from "../support/counting-store.js";
import type { FaultKind } from "../support/faulty-store.js";
import {
  type FaultyStores,
  faultyContext,
  faultyStores,
  freshPrefix,
  rejectionOf,
  storeNames,
} from "./harness.js";

const RETRIES = 3;

describe.each(storeNames)("retry classification on %s", (name) => {
  let stores: FaultyStores;
  afterEach(() => stores?.close());

  async function setUp() {
    stores = await faultyStores(name);
    const sleeps: number[] = [];
    const context = await faultyContext(stores, [Employee], {
      retry: { retries: RETRIES, minDelayMs: 1, maxDelayMs: 20 },
      sleep: async (ms) => void sleeps.push(ms),
    });
    return { ...context, sleeps, employees: context.db.repository(Employee) };
  }

  /** The HTTP requests (Azurite) or port calls (MemoryStore) the fault layer saw for `method`. */
  const seen = (method: StoreMethod) => stores.plan.requestsByMethod[method];

  describe("final answers are attempted exactly once", () => {
    it("404: update of a missing entity", async () => {
      const { employees, counter, sleeps } = await setUp();
      const error = await rejectionOf(employees.update(employee("Sales", 1), { ifMatch: "*" }));
      expect(error).toBeInstanceOf(EntityNotFoundError);
      expect(counter.calls.update).toBe(1);
      expect(seen("update")).toBe(1);
      expect(counter.requests).toBe(1);
      expect(sleeps).toEqual([]);
    });

    it("409: insert of an existing key", async () => {
      const { employees, counter } = await setUp();
      await employees.insert(employee("Sales", 1));
      counter.reset();
      stores.plan.resetCounts();
      expect(await rejectionOf(employees.insert(employee("Sales", 1, { age: 99 })))).toBeInstanceOf(
        EntityAlreadyExistsError,
      );
      expect(counter.requests).toBe(1);
      expect(seen("insert")).toBe(1);
    });

    it("412: update with a stale ETag", async () => {
      const { employees, counter } = await setUp();
      await employees.insert(employee("Sales", 1));
      const stale = await employees.getOrThrow({ department: "Sales", employeeId: 1 });
      await employees.upsert(employee("Sales", 1, { age: 50 }));
      counter.reset();
      stores.plan.resetCounts();
      expect(await rejectionOf(employees.update(stale))).toBeInstanceOf(ConcurrencyError);
      expect(counter.requests).toBe(1);
      expect(seen("update")).toBe(1);
    });

    it("409 inside a transaction", async () => {
      const { db, employees, counter } = await setUp();
      await employees.insert(employee("Sales", 2));
      counter.reset();
      const error = await rejectionOf(
        db.transaction((tx) => {
          tx.insert(employee("Sales", 1));
          tx.insert(employee("Sales", 2));
        }),
      );
      expect(error).toMatchObject({ constructor: TransactionError, statusCode: 409, index: 1 });
      expect(counter.requests).toBe(1);
    });

    it("400 from the service: a filter it cannot parse", async () => {
      const { employees, counter } = await setUp();
      const error = await rejectionOf(
        employees.find({ department: "Sales" }).filter("age gt gt 3").toArray(),
      );
      expect(error).toBeInstanceOf(StoreError);
      expect(error).toMatchObject({ statusCode: 400 });
      expect(counter.calls.queryPage).toBe(1);
      expect(seen("queryPage")).toBe(1);
    });

    it("a table name over the service's limit (the prefix makes it too long) is never retried", async () => {
      stores = await faultyStores(name);
      const sleeps: number[] = [];
      const db = new TableContext({
        store: stores.store,
        tablePrefix: `p${freshPrefix()}${"x".repeat(60)}`,
        retry: { retries: RETRIES },
        sleep: async (ms) => void sleeps.push(ms),
      });
      const error = await rejectionOf(db.ensureTables(Employee));
      // Caught before sending (ValidationError), or answered 400 by the service: either way, one try at most.
      if (error instanceof StoreError) {
        expect(error.statusCode).toBe(400);
        expect(seen("createTable")).toBe(1);
      } else {
        expect(error).toBeInstanceOf(ValidationError);
        expect(seen("createTable")).toBe(0);
      }
      expect(sleeps).toEqual([]);
    });

    it.each([
      ["badRequest", 400],
      ["forbidden", 403],
      ["tooLarge", 413],
    ] as const)("%s (%i) on a single write and on a batch", async (kind, status) => {
      const { db, employees, counter, sleeps } = await setUp();
      stores.plan.faultNext({ method: "upsert", kind });
      const single = await rejectionOf(employees.upsert(employee("Sales", 1)));
      expect(single).toBeInstanceOf(StoreError);
      expect(single).toMatchObject({ statusCode: status });
      stores.plan.faultNext({ method: "submitTransaction", kind });
      const batch = await rejectionOf(db.transaction((tx) => void tx.upsert(employee("Sales", 2))));
      expect(batch).toMatchObject({ constructor: TransactionError, statusCode: status });
      expect(counter.calls).toMatchObject({ upsert: 1, submitTransaction: 1 });
      expect(seen("upsert") + seen("submitTransaction")).toBe(2);
      expect(sleeps).toEqual([]);
    });
  });

  describe(`transient faults are attempted retries + 1 = ${RETRIES + 1} times, then surface`, () => {
    const cases: Array<[FaultKind, number | undefined, string]> = [
      ["busy", 503, "ServerBusy"],
      ["busyRetryAfter", 503, "ServerBusy"],
      ["internal", 500, "InternalError"],
      ["timeout", 408, ""],
      ["reset", undefined, "ECONNRESET"],
      ["lost", undefined, "ECONNRESET"],
    ];

    it.each(cases)("%s on a single upsert", async (kind, status, code) => {
      const { employees, counter, sleeps } = await setUp();
      stores.plan.faultNext({ method: "upsert", kind, count: RETRIES + 1 });
      const error = await rejectionOf(employees.upsert(employee("Sales", 1)));
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).statusCode).toBe(status);
      if (code) expect((error as StoreError).serviceCode).toBe(code);
      expect(counter.calls.upsert).toBe(RETRIES + 1);
      expect(seen("upsert")).toBe(RETRIES + 1);
      expect(sleeps).toHaveLength(RETRIES);
      // Only the lost attempts reached the store.
      expect(Boolean(await stores.direct.getEntity(employees.table, "Sales", "empid_000001"))).toBe(
        kind === "lost",
      );
    });

    it.each(cases)("%s on a transaction", async (kind, status) => {
      const { db, counter } = await setUp();
      stores.plan.faultNext({ method: "submitTransaction", kind, count: RETRIES + 1 });
      const error = await rejectionOf(
        db.transaction((tx) => {
          tx.insert(employee("Sales", 1));
          tx.insert(employee("Sales", 2));
        }),
      );
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).statusCode).toBe(status);
      expect(counter.calls.submitTransaction).toBe(RETRIES + 1);
      expect(seen("submitTransaction")).toBe(RETRIES + 1);
    });

    it.each(cases)(`%s for the first ${RETRIES} attempts only: the write succeeds`, async (kind) => {
      const { employees, counter } = await setUp();
      stores.plan.faultNext({ method: "insert", kind, count: RETRIES });
      await employees.insert(employee("Sales", 1, { age: 33 }));
      expect(counter.calls.insert).toBe(RETRIES + 1);
      expect((await employees.getOrThrow({ department: "Sales", employeeId: 1 })).age).toBe(33);
    });
  });
});
