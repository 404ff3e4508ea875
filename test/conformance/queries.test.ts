import { describe, expect, it } from "vitest";
import { odata, ValidationError } from "../../src/index.js";
import { freshContext, stores } from "../fixtures/context.js";
import { Employee, Expense, employee } from "../fixtures/models.js";

async function seeded(kind: Parameters<typeof freshContext>[0]) {
  const context = await freshContext(kind, [Employee]);
  const employees = context.db.repository(Employee);
  for (const id of [1, 2, 10, 99, 100, 150, 199, 200, 1000]) await employees.insert(employee("Sales", id));
  await employees.insert(employee("Support", 150));
  // Rows in the same partition that are not employees: another RowKey space, and another type.
  await context.db.store.upsert(
    employees.table,
    { partitionKey: "Sales", rowKey: "email_x@contoso.com", age: 1 },
    "replace",
  );
  await context.db.store.upsert(
    employees.table,
    { partitionKey: "Sales", rowKey: "empid_555555", EntityType: "Department@1", age: 1 },
    "replace",
  );
  return { ...context, employees };
}

const ids = (items: Employee[]) => items.map((e) => e.employeeId);

describe.each(stores)("queries on %s", (_name, kind) => {
  it("find over a partition returns only this entity's rows, in key order", async () => {
    const { employees } = await seeded(kind);
    const query = employees.find({ department: "Sales" });
    expect(query.explain()).toEqual({
      kind: "range",
      table: employees.table,
      filter: "PartitionKey eq 'Sales' and RowKey ge 'empid_' and RowKey lt 'empid`'",
    });
    expect(ids(await query.toArray())).toEqual([1, 2, 10, 99, 100, 150, 199, 200, 1000]);
  });

  it("find with every key field is a point query", async () => {
    const { employees } = await seeded(kind);
    const query = employees.find({ department: "Sales", employeeId: 150 });
    expect(query.explain().kind).toBe("point");
    expect(ids(await query.toArray())).toEqual([150]);
    expect(await employees.find({ department: "Sales", employeeId: 151 }).first()).toBeUndefined();
  });

  it("between is inclusive on both ends and runs as a range query", async () => {
    const { employees } = await seeded(kind);
    const query = employees.find({ department: "Sales" }).between({ employeeId: 100 }, { employeeId: 199 });
    expect(query.explain().kind).toBe("range");
    expect(ids(await query.toArray())).toEqual([100, 150, 199]);
  });

  it("where adds filters (a partition scan) and equality shorthand", async () => {
    const { employees } = await seeded(kind);
    const older = employees.find({ department: "Sales" }).where("age", "gt", 50);
    expect(older.explain().kind).toBe("partition-scan");
    const expected = [1, 2, 10, 99, 100, 150, 199, 200, 1000].filter((id) => 20 + (id % 40) > 50);
    expect(ids(await older.toArray())).toEqual(expected);
    const named = await employees.find({ department: "Sales" }).where({ lastName: "Last3" }).toArray();
    expect(ids(named)).toEqual([10, 150, 199].filter((id) => id % 7 === 3));
  });

  it("scan must be explicit, and filters across partitions", async () => {
    const { employees } = await seeded(kind);
    expect(() => employees.find({} as never)).toThrow(ValidationError);
    const query = employees.scan().where("employeeId", "eq", 150);
    expect(query.explain().kind).toBe("table-scan");
    const rows = await query.toArray();
    expect(rows.map((e) => `${e.department}/${e.employeeId}`)).toEqual(["Sales/150", "Support/150"]);
  });

  it("select projects, take limits, first returns one", async () => {
    const { employees } = await seeded(kind);
    const rows = await employees.find({ department: "Sales" }).select("email").take(3).toArray();
    // Key fields are present at run time although the type shows only the selected ones.
    expect(rows.map((e: Partial<Employee>) => [e.employeeId, e.email, e.firstName])).toEqual([
      [1, "e1@contoso.com", undefined],
      [2, "e2@contoso.com", undefined],
      [10, "e10@contoso.com", undefined],
    ]);
    expect((await employees.find({ department: "Sales" }).first())?.employeeId).toBe(1);
  });

  it("filter takes raw OData built with the odata template", async () => {
    const { employees } = await seeded(kind);
    const rows = await employees
      .find({ department: "Sales" })
      .filter(odata`age ge ${59} or employeeId eq ${2}`)
      .toArray();
    expect(ids(rows)).toEqual([2, 199]);
  });

  it("user text never changes a query's meaning", async () => {
    const { db } = await freshContext(kind, [Employee]);
    const employees = db.repository(Employee);
    const names = ["O'Brien", "x' or 'a' eq 'a", "' or RowKey ne '", "Zoë 😀", "a'b''c", "plain"];
    for (const [i, lastName] of names.entries())
      await employees.insert(employee("Sales", i + 1, { lastName }));
    for (const [i, lastName] of names.entries()) {
      const byWhere = await employees.find({ department: "Sales" }).where({ lastName }).toArray();
      expect(ids(byWhere)).toEqual([i + 1]);
      const byFilter = await employees.scan().filter(odata`lastName eq ${lastName}`).toArray();
      expect(ids(byFilter)).toEqual([i + 1]);
    }
    expect(await employees.find({ department: "Sales" }).where({ lastName: "x" }).toArray()).toEqual([]);
  });

  it("newest first with inverted ticks (the log-tail pattern)", async () => {
    const { db } = await freshContext(kind, [Expense]);
    const expenses = db.repository(Expense);
    const base = Date.UTC(2024, 0, 1);
    for (let i = 0; i < 20; i++) {
      const at = new Date(base + ((i * 7919) % 20) * 60_000);
      await expenses.insert(Object.assign(new Expense(), { employeeId: 223, at, id: `x${i}`, amount: i }));
    }
    const latest = await expenses.find({ employeeId: 223 }).take(5).toArray();
    const times = latest.map((e) => e.at.getTime());
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(times[0]).toBe(base + 19 * 60_000);
    const row = (await db.store.queryPage(expenses.table, { top: 1 })).items[0];
    expect(row?.rowKey).toMatch(/^\d{19}_x\d+$/);
  });
});
