import { describe, expect, it } from "vitest";
import { TableContext, ValidationError } from "../../src/index.js";
import { freshContext, stores } from "../fixtures/context.js";
import { Employee, employee } from "../fixtures/models.js";

const DEPARTMENTS = ["Eng", "Ops", "Sales"];
const PER_DEPARTMENT = 850;

async function seeded(kind: Parameters<typeof freshContext>[0]) {
  const context = await freshContext(kind, [Employee]);
  const employees = context.db.repository(Employee);
  for (const department of DEPARTMENTS) {
    for (let start = 0; start < PER_DEPARTMENT; start += 100) {
      await context.db.transaction((tx) => {
        for (let id = start; id < Math.min(start + 100, PER_DEPARTMENT); id++)
          tx.insert(employee(department, id));
      });
    }
  }
  return { ...context, employees };
}

const keyOf = (e: Employee) => `${e.department}/${e.employeeId}`;
const allKeys = DEPARTMENTS.flatMap((d) => Array.from({ length: PER_DEPARTMENT }, (_, id) => `${d}/${id}`));

describe.each(stores)("paging on %s", (_name, kind) => {
  it("iterates 2,550 entities across partitions in key order", async () => {
    const { employees, counter } = await seeded(kind);
    counter.reset();
    const seen: string[] = [];
    for await (const e of employees.scan()) seen.push(keyOf(e));
    expect(seen).toEqual(allKeys);
    // No page is ever larger than the service's 1,000.
    expect(counter.largestPage).toBeLessThanOrEqual(1000);
    expect(counter.calls.queryPage).toBeGreaterThanOrEqual(3);
  });

  it("resumes from a stored continuation in a new context", async () => {
    const { db, prefix } = await seeded(kind);
    const collected: string[] = [];
    const saved: Array<string | undefined> = [];
    let continuation: string | undefined;
    do {
      // A new context per page, as a web request resuming from a token stored in a cookie would have.
      const employees = new TableContext({ store: db.store, tablePrefix: prefix }).repository(Employee);
      const page = await employees.scan().page({ size: 700, ...(continuation ? { continuation } : {}) });
      expect(page.items.length).toBeLessThanOrEqual(700);
      collected.push(...page.items.map(keyOf));
      continuation =
        page.continuation === undefined ? undefined : JSON.parse(JSON.stringify(page.continuation));
      saved.push(continuation);
    } while (continuation !== undefined);
    expect(collected).toEqual(allKeys);
    expect(saved).toHaveLength(Math.ceil(allKeys.length / 700));
  });

  it("take across pages stops at exactly n, including across a resumed continuation", async () => {
    const { employees } = await seeded(kind);
    const query = employees.find({ department: "Ops" }).take(1500);
    const first = await query.page({ size: 1000 });
    expect(first.items).toHaveLength(850);
    expect(first.continuation).toBeUndefined();
    const limited = employees.scan().take(1200);
    const a = await limited.page({ size: 1000 });
    expect(a.items).toHaveLength(1000);
    const b = await limited.page({ size: 1000, continuation: a.continuation as string });
    expect(b.items).toHaveLength(200);
    expect(b.continuation).toBeUndefined();
    expect([...a.items, ...b.items].map(keyOf)).toEqual(allKeys.slice(0, 1200));
  });

  it("rejects a continuation from another query or a garbled one", async () => {
    const { employees } = await seeded(kind);
    const page = await employees.find({ department: "Eng" }).page({ size: 10 });
    await expect(
      employees.find({ department: "Ops" }).page({ continuation: page.continuation as string }),
    ).rejects.toBeInstanceOf(ValidationError);
    await expect(
      employees.find({ department: "Eng" }).page({ continuation: "garbage" }),
    ).rejects.toBeInstanceOf(ValidationError);
  });
});
