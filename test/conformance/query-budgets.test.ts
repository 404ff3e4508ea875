import { describe, expect, it } from "vitest";
import {
  MemoryStore,
  QueryBudgetError,
  TableContext,
  type TableKitEvent,
  ValidationError,
} from "../../src/index.js";
import { stores } from "../fixtures/context.js";
import { Employee, employee } from "../fixtures/models.js";
import { CountingStore } from "../support/counting-store.js";
import { rejectionOf } from "../support/rejection.js";
import { ShortPageStore } from "../support/short-page-store.js";
import { uniquePrefix } from "../support/table-names.js";

const ROWS = 10;
const keyOf = (e: Employee) => `${e.department}/${e.employeeId}`;
const allKeys = Array.from({ length: ROWS }, (_, id) => `Eng/${id}`);

type QueryPageEvent = Extract<TableKitEvent, { type: "query-page" }>;

/** A context whose store answers one row per query request, seeded with ten employees in one partition. */
async function shortPages(kind: (typeof stores)[number][1]) {
  const counter = new CountingStore(new ShortPageStore(kind.create(), 1));
  const events: QueryPageEvent[] = [];
  const db = new TableContext({
    store: counter,
    tablePrefix: uniquePrefix(),
    onEvent: (event) => {
      if (event.type === "query-page") events.push(event);
    },
  });
  await db.ensureTables(Employee);
  const employees = db.repository(Employee);
  await db.transaction((tx) => {
    for (let id = 0; id < ROWS; id++) tx.insert(employee("Eng", id));
  });
  counter.reset();
  return { db, counter, events, employees, query: employees.find({ department: "Eng" }) };
}

describe.each(stores)("query budgets on %s", (_name, kind) => {
  it("page({ maxRequests }) stops after that many requests and its continuation reads on", async () => {
    const { counter, events, query } = await shortPages(kind);
    const first = await query.page({ size: ROWS, maxRequests: 3 });
    expect(counter.calls.queryPage).toBe(3);
    expect(first.items.map(keyOf)).toEqual(allKeys.slice(0, 3));
    expect(first.budgetExhausted).toBe(true);
    expect(first.continuation).toBeTypeOf("string");
    expect(events).toEqual([
      {
        type: "query-page",
        table: expect.stringMatching(/Employees$/),
        kind: "range",
        rows: 3,
        requests: 3,
        emptyPages: 0,
        budgetExhausted: true,
      },
    ]);

    const rest = await query.page({ size: ROWS, continuation: first.continuation });
    expect(rest.budgetExhausted).toBeUndefined();
    expect([...first.items, ...rest.items].map(keyOf)).toEqual(allKeys);
  });

  it("a page filled within its budget is not marked exhausted", async () => {
    const { query } = await shortPages(kind);
    const page = await query.page({ size: 3, maxRequests: 3 });
    expect(page.items.map(keyOf)).toEqual(allKeys.slice(0, 3));
    expect(page.budgetExhausted).toBeUndefined();
    expect(page.continuation).toBeTypeOf("string");
  });

  it("toArray({ maxRequests }) rejects with what it read and a continuation", async () => {
    const { counter, events, query } = await shortPages(kind);
    const error = await rejectionOf(query.toArray({ maxRequests: 4 }));
    expect(error).toBeInstanceOf(QueryBudgetError);
    const budget = error as QueryBudgetError;
    expect(counter.calls.queryPage).toBe(4);
    expect(budget.requests).toBe(4);
    expect((budget.items as Employee[]).map(keyOf)).toEqual(allKeys.slice(0, 4));
    expect(events.at(-1)).toMatchObject({ rows: 4, requests: 4, emptyPages: 0, budgetExhausted: true });

    const rest = await query.page({ size: ROWS, continuation: budget.continuation });
    expect([...(budget.items as Employee[]), ...rest.items].map(keyOf)).toEqual(allKeys);
  });

  it("toArray with a budget large enough returns everything and reports one event", async () => {
    const { counter, events, query } = await shortPages(kind);
    const rows = await query.toArray({ maxRequests: 2 * ROWS });
    expect(rows.map(keyOf)).toEqual(allKeys);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ rows: ROWS, requests: counter.calls.queryPage });
    expect(events[0]?.budgetExhausted).toBeUndefined();
  });

  it("an iteration stopped early reports what it cost", async () => {
    const { events, query } = await shortPages(kind);
    const seen: Employee[] = [];
    for await (const e of query) {
      seen.push(e);
      if (seen.length === 2) break;
    }
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: "query-page", rows: 2, requests: 2, emptyPages: 0 });
  });

  it.each([0, -1, 1.5, Number.NaN, "3"])("refuses maxRequests %s before any request", async (max) => {
    const { counter, query } = await shortPages(kind);
    for (const read of [
      () => query.page({ maxRequests: max as number }),
      () => query.toArray({ maxRequests: max as number }),
    ]) {
      const error = await rejectionOf(read());
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).rule).toBe("max-requests");
    }
    expect(counter.requests).toBe(0);
  });
});

// MemoryStore ends a page at each partition boundary, as the service may; Azurite never does, so
// only the reference store can serve a scan whose pages come back empty.
describe("a sparse scan on MemoryStore (pages cut at partitions)", () => {
  const PARTITIONS = 12;

  async function sparse() {
    const counter = new CountingStore(new MemoryStore({ pageBreaks: "partition" }));
    const events: QueryPageEvent[] = [];
    const db = new TableContext({
      store: counter,
      onEvent: (event) => {
        if (event.type === "query-page") events.push(event);
      },
    });
    await db.ensureTables(Employee);
    const employees = db.repository(Employee);
    for (let p = 0; p < PARTITIONS; p++)
      await employees.insert(employee(`D${String(p).padStart(2, "0")}`, p));
    counter.reset();
    // Only the last partition's row matches: every other page is empty.
    const last = PARTITIONS - 1;
    return { counter, events, query: employees.scan().where("employeeId", "eq", last), last };
  }

  it("maxRequests: 3 makes exactly 3 requests and reports 3 empty pages", async () => {
    const { counter, events, query } = await sparse();
    const page = await query.page({ maxRequests: 3 });
    expect(counter.calls.queryPage).toBe(3);
    expect(page.items).toEqual([]);
    expect(page.budgetExhausted).toBe(true);
    expect(page.continuation).toBeTypeOf("string");
    expect(events).toEqual([
      expect.objectContaining({
        kind: "table-scan",
        rows: 0,
        requests: 3,
        emptyPages: 3,
        budgetExhausted: true,
      }),
    ]);
  });

  it("following continuations with a budget per page finds the row, one request per partition", async () => {
    const { counter, query, last } = await sparse();
    const found: Employee[] = [];
    let continuation: string | undefined;
    let pages = 0;
    do {
      const page = await query.page({ maxRequests: 5, continuation });
      found.push(...page.items);
      continuation = page.continuation;
      pages++;
    } while (continuation !== undefined);
    expect(found.map((e) => e.employeeId)).toEqual([last]);
    expect(counter.calls.queryPage).toBe(PARTITIONS);
    expect(pages).toBe(Math.ceil(PARTITIONS / 5));
  });
});

describe.each(stores)("query budgets of a multi-type query on %s", (_name, kind) => {
  it("toArray({ maxRequests }) passes the budget through", async () => {
    const { db, counter } = await shortPages(kind);
    const error = await rejectionOf(
      db.query(Employee).find({ department: "Eng" }).toArray({ maxRequests: 2 }),
    );
    expect(error).toBeInstanceOf(QueryBudgetError);
    expect(counter.calls.queryPage).toBe(2);
  });
});
