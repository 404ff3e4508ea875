/**
 * The round-two writes settle lost answers by the shared rules (`lost-answers.ts`): a dynamic insert
 * or conditional update whose answer was lost after it applied succeeds, and a patch with `ifMatch`
 * likewise; transient faults on reads (`getMany`, dynamic `get`) are retried. Faults are forced
 * with `faultNext` (no luck involved), on MemoryStore behind a `FaultyStore`.
 */
import { describe, expect, it } from "vitest";
import { type DynamicRow, etagOf, MemoryStore, TableContext } from "../../src/index.js";
import { Employee, employee } from "../fixtures/models.js";
import { FaultyStore } from "../support/faulty-store.js";
import { uniquePrefix } from "../support/table-names.js";
import { FAST_RETRY } from "./harness.js";

async function faultyContext(): Promise<{ db: TableContext; faulty: FaultyStore }> {
  const faulty = new FaultyStore(new MemoryStore());
  const db = new TableContext({ store: faulty, tablePrefix: uniquePrefix(), retry: FAST_RETRY });
  await db.ensureTables(Employee);
  return { db, faulty };
}

describe("round-two reads and writes under faults", () => {
  it("a dynamic insert and conditional update whose answers were lost succeed", async () => {
    const { db, faulty } = await faultyContext();
    const rows = db.dynamic("Rows");
    await rows.ensureTable();
    const row: DynamicRow = { partitionKey: "p", rowKey: "r", n: 1 };
    faulty.plan.faultNext({ method: "insert", kind: "lost" });
    await rows.insert(row);
    expect(etagOf(row)).toBeDefined();
    faulty.plan.faultNext({ method: "update", kind: "lost" });
    await rows.update(Object.assign(row, { n: 2 }));
    faulty.plan.faultNext({ method: "getEntity", kind: "internal" });
    const read = await rows.get("p", "r");
    expect(read).toEqual({ partitionKey: "p", rowKey: "r", n: 2 });
    expect(etagOf(read as DynamicRow)).toBe(etagOf(row));
    expect(faulty.plan.faults.lost).toBe(2);
  });

  it("a patch with ifMatch whose answer was lost succeeds; getMany retries its reads", async () => {
    const { db, faulty } = await faultyContext();
    const employees = db.repository(Employee);
    const written = await employees.insert(employee("Sales", 1));
    faulty.plan.faultNext({ method: "update", kind: "lost" });
    await employees.patch({ department: "Sales", employeeId: 1 }, { age: 99 }, { ifMatch: etagOf(written) });
    faulty.plan.faultNext({ method: "getEntity", kind: "timeout", count: 2 });
    const [found, absent] = await employees.getMany([
      { department: "Sales", employeeId: 1 },
      { department: "Sales", employeeId: 2 },
    ]);
    expect(found?.age).toBe(99);
    expect(absent).toBeUndefined();
    expect(faulty.plan.faults.lost).toBe(1);
    expect(faulty.plan.faults.timeout).toBe(2);
  });
});
