/**
 * How an unsorted store answers order-dependent reads: it reads the whole range in pages of 1,000
 * (the cost the README states) and keeps only the best n while doing so, and its answer is the
 * key-order one for every seed of the store's order.
 */
import { describe, expect, it } from "vitest";
import { MemoryStore, TableContext } from "../../src/index.js";
import { uniquePrefix } from "../fixtures/context.js";
import { Employee, employee } from "../fixtures/models.js";
import { CountingStore } from "../support/counting-store.js";
import { COSMOS_ORDER_SEEDS } from "../support/unsorted-stores.js";

describe.each(COSMOS_ORDER_SEEDS)("key-order reads on the Cosmos-flavoured store (seed %i)", (seed) => {
  it("take(n) over 2,500 rows reads the range once, page by page, and returns the n smallest keys", async () => {
    const counter = new CountingStore(new MemoryStore({ flavor: "cosmos", seed }));
    const db = new TableContext({ store: counter, tablePrefix: uniquePrefix() });
    await db.ensureTables(Employee);
    // Ids inserted in a scrambled order (7 is coprime with 2,503, a prime, so no id repeats).
    const ids = Array.from({ length: 2500 }, (_, i) => ((i * 7) % 2503) + 1);
    await db.repository(Employee).bulkInsert(ids.map((id) => employee("Eng", id)));
    const smallest = [...ids].sort((a, b) => a - b);
    counter.reset();
    const taken = await db.repository(Employee).find({ department: "Eng" }).take(3).toArray();
    expect(taken.map((e) => e.employeeId)).toEqual(smallest.slice(0, 3));
    expect(counter.calls.queryPage).toBe(3);
    counter.reset();
    const all = await db.repository(Employee).find({ department: "Eng" }).toArray();
    expect(all.map((e) => e.employeeId)).toEqual(smallest);
    expect(counter.calls.queryPage).toBe(3);
  });
});
