import { describe, expect, it } from "vitest";
import { MemoryStore, StoreError, TableContext, ValidationError } from "../../src/index.js";
import { DEFAULT_MAX_CONCURRENT_REQUESTS } from "../../src/repository/pipeline/request-slots.js";
import { stores } from "../fixtures/context.js";
import { Employee, employee } from "../fixtures/models.js";
import { GatedStore } from "../support/gated-store.js";
import { requestIdentity } from "../support/store-wrapper.js";
import { uniquePrefix } from "../support/table-names.js";

const rowKey = (id: number) => `empid_${String(id).padStart(6, "0")}`;

async function gatedContext(kind: (typeof stores)[number][1], max: number, sleep?: () => Promise<void>) {
  const gate = new GatedStore(kind.create());
  const db = new TableContext({
    store: gate,
    tablePrefix: uniquePrefix(),
    maxConcurrentRequests: max,
    retry: { retries: 2 },
    ...(sleep ? { sleep } : {}),
  });
  gate.holding = false;
  await db.ensureTables(Employee);
  gate.arrived.length = 0;
  gate.maxInFlight = 0;
  gate.holding = true;
  return { gate, db, employees: db.repository(Employee) };
}

describe("maxConcurrentRequests validation", () => {
  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, "2"])(
    "refuses %s with a ValidationError before any request",
    (max) => {
      const gate = new GatedStore(new MemoryStore());
      expect(() => new TableContext({ store: gate, maxConcurrentRequests: max as number })).toThrow(
        ValidationError,
      );
      expect(gate.arrived).toEqual([]);
    },
  );
});

describe("maxConcurrentRequests default", () => {
  it("is 100: the 101st concurrent request waits for a slot", async () => {
    expect(DEFAULT_MAX_CONCURRENT_REQUESTS).toBe(100);
    const gate = new GatedStore(new MemoryStore());
    const db = new TableContext({ store: gate, tablePrefix: uniquePrefix() });
    gate.holding = false;
    await db.ensureTables(Employee);
    gate.holding = true;
    gate.maxInFlight = 0;
    const employees = db.repository(Employee);
    // Counted before the writes: a write that finds a free slot reaches the store in the same tick.
    const before = gate.arrived.length;
    const writes = Array.from({ length: 150 }, (_, id) => employees.upsert(employee("Eng", id)));
    await gate.arrivals(before + 100);
    gate.openAll();
    await Promise.all(writes);
    expect(gate.maxInFlight).toBe(100);
  });
});

describe.each(stores)("maxConcurrentRequests on %s", (_name, kind) => {
  it("keeps at most the cap in flight and grants slots in arrival order", async () => {
    const { gate, employees } = await gatedContext(kind, 2);
    const ids = [0, 1, 2, 3, 4, 5, 6];
    const writes = ids.map((id) => employees.upsert(employee("Eng", id)));
    for (let released = 0; released < ids.length; released++) {
      // Two slots: the (released + 2)th request can only arrive after `released` requests finished.
      await gate.arrivals(Math.min(released + 2, ids.length));
      gate.releaseNext();
    }
    await Promise.all(writes);
    expect(gate.maxInFlight).toBe(2);
    expect(gate.arrived.map((r) => r.identity)).toEqual(ids.map((id) => requestIdentity("Eng", rowKey(id))));
  });

  it("caps bulk writes and queries of the same context together", async () => {
    const { gate, employees } = await gatedContext(kind, 3);
    const bulk = employees.bulkInsert(
      Array.from({ length: 250 }, (_, id) => employee(`D${id % 5}`, id)),
      { concurrency: 8 },
    );
    const reads = [1, 2, 3].map((id) => employees.get({ department: "D0", employeeId: id }));
    await gate.arrivals(3);
    expect(gate.inFlight).toBe(3);
    gate.openAll();
    const result = await bulk;
    await Promise.all(reads);
    expect(result.failed).toEqual([]);
    expect(gate.maxInFlight).toBe(3);
    expect(await employees.scan().toArray()).toHaveLength(250);
  });

  it("holds no slot while a retry sleeps", async () => {
    let wake: (() => void) | undefined;
    const slept = new Promise<void>((resolve) => {
      wake = resolve;
    });
    let sleeping: (() => void) | undefined;
    const asleep = new Promise<void>((resolve) => {
      sleeping = resolve;
    });
    const { gate, employees } = await gatedContext(kind, 1, () => {
      sleeping?.();
      return slept;
    });
    gate.failOnce.set(
      requestIdentity("Eng", rowKey(1)),
      new StoreError("injected: 503 ServerBusy", { statusCode: 503, serviceCode: "ServerBusy" }),
    );
    gate.holding = false;
    const first = employees.upsert(employee("Eng", 1));
    await asleep;
    // The only slot is free while the first write sleeps before its retry: a second write completes.
    await employees.upsert(employee("Eng", 2));
    wake?.();
    await first;
    expect(gate.maxInFlight).toBe(1);
    expect(gate.arrived.map((r) => r.identity)).toEqual(
      [1, 2, 1].map((id) => requestIdentity("Eng", rowKey(id))),
    );
  });
});
