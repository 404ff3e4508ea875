import { describe, expect, it } from "vitest";
import { odata, TransactionError, ValidationError } from "../../src/index.js";
import { freshContext, stores } from "../fixtures/context.js";
import { Department, department, Note, note, StaffEmployee, staff } from "./models.js";

type Kind = Parameters<typeof freshContext>[0];

/** Sales: a department, three employees and two notes, written in one transaction; Support: one of each. */
async function seeded(kind: Kind) {
  const context = await freshContext(kind, [Department, StaffEmployee, Note]);
  const { db } = context;
  await db.transaction((tx) => {
    tx.insert(department("Sales"));
    for (const id of [3, 1, 2]) tx.insert(staff("Sales", id));
    tx.insert(note("Sales", "n1"));
    tx.insert(note("Sales", "zz"));
  });
  await db.transaction((tx) => {
    tx.insert(department("Support"));
    tx.insert(staff("Support", 1));
    tx.insert(note("Support", "n1"));
  });
  context.counter.reset();
  return {
    ...context,
    departments: db.repository(Department),
    employees: db.repository(StaffEmployee),
    notes: db.repository(Note),
  };
}

/** Each result as `Class:key`, to check both the class and the order. */
function describeRows(rows: readonly object[]): string[] {
  return rows.map((row) => {
    if (row instanceof Department) return `Department:${row.department}`;
    if (row instanceof StaffEmployee) return `Employee:${row.employeeId}`;
    if (row instanceof Note) return `Note:${row.noteId}`;
    return `?:${JSON.stringify(row)}`;
  });
}

/** RowKey order of Sales: "dept" < "empid_…" < "n1" < "zz". */
const SALES = ["Department:Sales", "Employee:1", "Employee:2", "Employee:3", "Note:n1", "Note:zz"];

describe.each(stores)("heterogeneous entity types on %s", (_name, kind) => {
  it("one transaction writes a department and its employees atomically (one request)", async () => {
    const { db, counter } = await freshContext(kind, [Department, StaffEmployee]);
    const result = await db.transaction((tx) => {
      tx.insert(department("Sales"));
      tx.insert(staff("Sales", 1));
      tx.insert(staff("Sales", 2));
    });
    expect(result.etags).toHaveLength(3);
    expect(counter.calls.submitTransaction).toBe(1);
    expect(counter.requests).toBe(1);

    const table = db.repository(Department).table;
    const raw = await db.store.queryPage(table, { filter: "PartitionKey eq 'Sales'" });
    expect(raw.items.map((row) => [row.rowKey, row.EntityType])).toEqual([
      ["dept", "Department@1"],
      ["empid_000001", "Employee@1"],
      ["empid_000002", "Employee@1"],
    ]);

    // All or nothing: the second operation fails (the key exists), so the department is not changed.
    const failed = db.transaction((tx) => {
      tx.upsert(department("Sales", { budget: 1 }));
      tx.insert(staff("Sales", 2));
    });
    await expect(failed).rejects.toBeInstanceOf(TransactionError);
    await expect(failed).rejects.toMatchObject({ index: 1 });
    expect((await db.repository(Department).get({ department: "Sales" }))?.budget).toBe(1000.5);
  });

  it("db.query(...).find returns every type of the partition, resolved to its class, in key order", async () => {
    const { db, counter } = await seeded(kind);
    const query = db.query(Department, StaffEmployee, Note).find({ department: "Sales" });
    const rows = await query.toArray();
    expect(describeRows(rows)).toEqual(SALES);
    expect(counter.calls.queryPage).toBe(1);

    const first = rows[0] as Department;
    expect(first).toBeInstanceOf(Department);
    expect(first).toMatchObject({
      department: "Sales",
      name: "Sales department",
      manager: "Jones",
      budget: 1000.5,
    });
    const employee = rows[1] as StaffEmployee;
    expect(employee).toBeInstanceOf(StaffEmployee);
    expect(employee).toMatchObject({ department: "Sales", employeeId: 1, name: "Person 1", age: 21 });
    expect(Object.keys(employee).sort()).toEqual(["age", "department", "employeeId", "name"]);
  });

  it("a subset of the types skips the others; unknown types, untyped rows and index copies are skipped", async () => {
    const { db, departments } = await seeded(kind);
    const table = departments.table;
    await db.store.upsert(
      table,
      { partitionKey: "Sales", rowKey: "aaa", EntityType: "Invoice@1" },
      "replace",
    );
    await db.store.upsert(table, { partitionKey: "Sales", rowKey: "bbb", name: "no type" }, "replace");
    await db.store.upsert(
      table,
      {
        partitionKey: "Sales",
        rowKey: "email_x",
        EntityType: "Employee@1",
        _tkIndex: "byEmail",
        employeeId: 9,
      },
      "replace",
    );
    const both = await db.query(Department, StaffEmployee).find({ department: "Sales" }).toArray();
    expect(describeRows(both)).toEqual(["Department:Sales", "Employee:1", "Employee:2", "Employee:3"]);
    const all = await db.query(StaffEmployee, Note, Department).find({ department: "Sales" }).toArray();
    expect(describeRows(all)).toEqual(SALES);
  });

  it("each repository returns only its own type, from find, get and scan", async () => {
    const { departments, employees, notes } = await seeded(kind);
    expect(describeRows(await departments.find({ department: "Sales" }).toArray())).toEqual([
      "Department:Sales",
    ]);
    expect(describeRows(await employees.find({ department: "Sales" }).toArray())).toEqual([
      "Employee:1",
      "Employee:2",
      "Employee:3",
    ]);
    // Note's RowKey has no literal prefix, so its range is the whole partition: EntityType does the work.
    expect(notes.find({ department: "Sales" }).explain().filter).toBe("PartitionKey eq 'Sales'");
    expect(describeRows(await notes.find({ department: "Sales" }).toArray())).toEqual(["Note:n1", "Note:zz"]);
    // A point read on another type's row is not this repository's entity.
    expect(await notes.get({ department: "Sales", noteId: "dept" })).toBeUndefined();
    expect(await notes.get({ department: "Sales", noteId: "empid_000001" })).toBeUndefined();

    expect(describeRows(await departments.scan().toArray())).toEqual([
      "Department:Sales",
      "Department:Support",
    ]);
    expect(describeRows(await employees.scan().toArray())).toEqual([
      "Employee:1",
      "Employee:2",
      "Employee:3",
      "Employee:1",
    ]);
    const scannedNotes = await notes.scan().toArray();
    expect(scannedNotes.map((n) => `${n.department}/${n.noteId}`)).toEqual([
      "Sales/n1",
      "Sales/zz",
      "Support/n1",
    ]);
  });

  it("explain, take, first, page and async iteration", async () => {
    const { db, counter } = await seeded(kind);
    const source = db.query(Department, StaffEmployee, Note);
    const query = source.find({ department: "Sales" });
    expect(query.explain()).toEqual({
      kind: "range",
      table: source.table,
      filter: "PartitionKey eq 'Sales'",
    });
    expect(source.scan().explain()).toEqual({ kind: "table-scan", table: source.table, filter: "" });

    expect(describeRows(await query.take(2).toArray())).toEqual(SALES.slice(0, 2));
    counter.reset();
    const first = await query.first();
    expect(first).toBeInstanceOf(Department);
    expect(counter.requests).toBe(1);

    const seen: string[] = [];
    let continuation: string | undefined;
    let pages = 0;
    do {
      const page = await query.page({ size: 4, ...(continuation ? { continuation } : {}) });
      seen.push(...describeRows(page.items));
      continuation = page.continuation;
      pages++;
    } while (continuation !== undefined);
    expect(seen).toEqual(SALES);
    expect(pages).toBe(2);

    const iterated: object[] = [];
    for await (const row of query) iterated.push(row);
    expect(describeRows(iterated)).toEqual(SALES);

    const scanned = await source.scan().toArray();
    expect(describeRows(scanned)).toEqual([...SALES, "Department:Support", "Employee:1", "Note:n1"]);
  });

  it("where on common columns, filter for anything else, select on common columns", async () => {
    const { db } = await seeded(kind);
    const source = db.query(Department, StaffEmployee);
    const named = await source.find({ department: "Sales" }).where("name", "ge", "Person 2").toArray();
    expect(describeRows(named)).toEqual(["Department:Sales", "Employee:2", "Employee:3"]);
    expect(source.find({ department: "Sales" }).where({ name: "Person 2" }).explain()).toMatchObject({
      kind: "partition-scan",
      filter: "PartitionKey eq 'Sales' and (name eq 'Person 2')",
    });
    // `budget` belongs to Department only: where() refuses it, filter() says it in OData.
    expect(() =>
      // @ts-expect-error budget is not a column of every class
      source.find({ department: "Sales" }).where("budget", "gt", 5),
    ).toThrow(ValidationError);
    const rich = await source
      .find({ department: "Sales" })
      .filter(odata`budget gt ${999.5} or age eq ${22}`)
      .toArray();
    expect(describeRows(rich)).toEqual(["Department:Sales", "Employee:2"]);

    const projected = await source.find({ department: "Sales" }).select("name").toArray();
    expect(projected.map((row) => ({ ...row }))).toEqual([
      { department: "Sales", name: "Sales department" },
      { department: "Sales", employeeId: 1, name: "Person 1" },
      { department: "Sales", employeeId: 2, name: "Person 2" },
      { department: "Sales", employeeId: 3, name: "Person 3" },
    ]);
  });

  it("find takes the partition-key fields, all of them and only them", async () => {
    const { db } = await seeded(kind);
    const source = db.query(Department, StaffEmployee);
    expect(() => source.find({} as never)).toThrow(/needs every partition-key field/);
    expect(() => source.find({ department: "Sales", name: "x" })).toThrow(/partition-key fields only/);
    try {
      source.find({ department: "Sales", name: "x" });
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).field).toBe("name");
    }
  });
});
