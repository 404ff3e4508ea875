/**
 * A narrated tour of tablekit. `npm start` runs it on the embedded MemoryStore (no server needed);
 * with TABLEKIT_CONNECTION_STRING set it runs against Azurite or Azure instead.
 */
import { pathToFileURL } from "node:url";
import {
  AzureStore,
  type BulkProgress,
  MemoryStore,
  type Repository,
  TableContext,
  type TableStore,
} from "tablekit";
import { Employee, Expense } from "./models.js";

const DEPARTMENTS = ["Engineering", "Marketing", "Sales"];
const LAST_NAMES = ["Jones", "Smith", "Garcia", "Chen", "Okafor"];
const EXPENSES_PER_EMPLOYEE = 30;

/** Runs the tour on a store, writing its narration through `say`. */
export async function runTour(store: TableStore, say: (line: string) => void = console.log): Promise<void> {
  // A fresh prefix keeps repeated runs against a shared Azurite apart.
  const db = new TableContext({ store, tablePrefix: `tour${Date.now().toString(36)}` });
  await db.ensureTables(Employee, Expense);
  const employees = db.repository(Employee);
  const expenses = db.repository(Expense);

  say(`tablekit tour on the ${store.name} store\n`);
  say("1. Entities map to compound keys, exactly as the Azure table design guide writes them:");
  const jane = makeEmployee(employees, "Sales", 223, {
    firstName: "Jane",
    lastName: "Jones",
    email: "jonesj@contoso.com",
  });
  const sample = makeExpense(expenses, 223, new Date("2024-05-01T12:30:00.000Z"), "e1", 42.5, "Taxi");
  const keyRows = [
    ["Employee", "{department} / empid_{employeeId:6}", employees.keyOf(jane)],
    ["Expense", "emp_{employeeId:6} / {at:desc}_{expenseId}", expenses.keyOf(sample)],
  ] as const;
  say(
    table(
      ["entity", "templates", "PartitionKey", "RowKey"],
      keyRows.map(([n, t, k]) => [n, t, k.partitionKey, k.rowKey]),
    ),
  );

  say("\n2. Employees with two secondary indexes (e-mail: same partition, atomic; last name: another table)");
  // Employee ids are unique across departments (1000-1299), as expenses are partitioned by employee.
  const staff = DEPARTMENTS.flatMap((department, d) =>
    Array.from({ length: 100 }, (_, i) => makeEmployee(employees, department, 1000 + d * 100 + i)),
  );
  const hired = await employees.bulkInsert([jane, ...staff], { concurrency: 8 });
  say(`   ${hired.written} employees written with their index copies (${hired.failed.length} failed)`);
  const found = await employees.index("byEmail").get({ department: "Sales", email: "jonesj@contoso.com" });
  say(
    `   by e-mail   : ${found?.firstName} ${found?.lastName} (employee ${found?.employeeId})   kind=${employees.index("byEmail").explainGet({ department: "Sales", email: "x" }).kind}`,
  );
  const joneses = employees.index("byLastName").find({ lastName: "Jones" });
  const jonesList = await joneses.toArray();
  say(
    `   by last name: ${jonesList.length} people named Jones across departments   kind=${joneses.explain().kind}`,
  );
  say("   the physical rows behind them:");
  const emailRows = await store.queryPage(employees.table, {
    filter: "PartitionKey eq 'Sales' and RowKey ge 'email_jonesj' and RowKey lt 'email_jonesk'",
  });
  const selfRow = await store.getEntity(employees.table, "Sales", "empid_000223");
  const nameRows = await store.queryPage(`${employees.table}ByName`, {
    filter: "PartitionKey eq 'Jones'",
    top: 3,
  });
  for (const [where, row] of [
    [employees.table, selfRow],
    [employees.table, emailRows.items[0]],
    ...nameRows.items.map((r) => [`${employees.table}ByName`, r] as const),
  ] as const) {
    if (row) say(`     ${where.padEnd(32)} PartitionKey=${row.partitionKey.padEnd(12)} RowKey=${row.rowKey}`);
  }

  say(
    `\n3. Bulk import: ${(staff.length * EXPENSES_PER_EMPLOYEE).toLocaleString("en")} expenses, batched per partition, 8 batches in flight`,
  );
  const start = Date.now();
  const imported = await expenses.bulkUpsert(generateExpenses(expenses, staff), {
    concurrency: 8,
    onProgress: progressBar(staff.length * EXPENSES_PER_EMPLOYEE, say),
  });
  say(
    `   written ${imported.written.toLocaleString("en")} in ${imported.batches} transactions ` +
      `(${imported.retries} retries, ${imported.failed.length} failed batches) in ${Date.now() - start} ms`,
  );

  say("\n4. A transaction: one partition, all or nothing");
  await db.transaction((tx) => {
    for (let i = 0; i < 6; i++)
      tx.insert(
        makeExpense(expenses, 223, new Date(Date.UTC(2024, 4, 1 + i, 12)), `e${i}`, 10 + i, `day ${i + 1}`),
      );
  });
  say("   6 expenses of employee 223 inserted in one entity group transaction");

  say("\n5. Queries, from cheapest to most expensive (explain() tells which kind, without a request):");
  const queries = [
    ["point", employees.find({ department: "Sales", employeeId: 223 })],
    ["range", employees.find({ department: "Sales" }).between({ employeeId: 1200 }, { employeeId: 1204 })],
    ["partition scan", employees.find({ department: "Sales" }).where("age", "gt", 60)],
    ["table scan", employees.scan().where({ lastName: "Jones" }).take(3)],
  ] as const;
  for (const [label, query] of queries) {
    const plan = query.explain();
    const results = await query.toArray();
    say(
      `   ${label.padEnd(15)} kind=${plan.kind.padEnd(15)} ${results.length} result(s)   $filter=${plan.filter}`,
    );
  }

  say("\n6. Paging with a continuation you can store (e.g. in a URL) and resume later:");
  let continuation: string | undefined;
  let page = 0;
  let total = 0;
  do {
    const result = await employees.scan().page({ size: 120, ...(continuation ? { continuation } : {}) });
    total += result.items.length;
    continuation = result.continuation;
    page += 1;
    say(
      `   page ${page}: ${result.items.length} employees${continuation ? `, continuation ${continuation.slice(0, 24)}…` : ", done"}`,
    );
  } while (continuation);
  say(`   ${total} employees in ${page} pages`);

  say("\n7. The log tail: newest expenses first, because the RowKey is inverted ticks:");
  for (const e of await expenses.find({ employeeId: 223 }).take(3).toArray()) {
    say(
      `   ${e.at.toISOString()}  ${e.amount.toFixed(2).padStart(6)}  ${e.note}  (RowKey ${expenses.keyOf(e).rowKey})`,
    );
  }

  say(
    "\n8. Optimistic concurrency: a stale copy cannot overwrite a newer one; mutate() re-reads and re-applies",
  );
  const mine = await employees.getOrThrow({ department: "Sales", employeeId: 1200 });
  const theirs = await employees.getOrThrow({ department: "Sales", employeeId: 1200 });
  theirs.age += 1;
  await employees.update(theirs);
  mine.age = 18;
  const outcome = await employees.update(mine).then(
    () => "overwrote (unexpected)",
    (error: Error & { code?: string }) => `rejected with ${error.name} (${error.code})`,
  );
  say(`   stale update ${outcome}`);
  await Promise.all(
    Array.from({ length: 10 }, () =>
      employees.mutate(
        { department: "Sales", employeeId: 1200 },
        (e) => {
          e.age += 1;
        },
        { attempts: 50 },
      ),
    ),
  );
  say(
    `   10 concurrent mutate() calls: age ${theirs.age} → ${(await employees.getOrThrow({ department: "Sales", employeeId: 1200 })).age}`,
  );
  say("\nDone.");
}

/** `create` builds the instance from exactly the class's columns: a misspelt field does not compile. */
function makeEmployee(
  employees: Repository<Employee>,
  department: string,
  employeeId: number,
  values: Partial<Employee> = {},
): Employee {
  return employees.create({
    department,
    employeeId,
    firstName: `Emp${employeeId}`,
    lastName: LAST_NAMES[employeeId % LAST_NAMES.length] as string,
    age: 20 + ((employeeId * 7) % 45),
    email: `emp${employeeId}@${department.toLowerCase()}.contoso.com`,
    hiredAt: new Date(Date.UTC(2015 + (employeeId % 9), employeeId % 12, 1)),
    ...values,
  });
}

function makeExpense(
  expenses: Repository<Expense>,
  employeeId: number,
  at: Date,
  expenseId: string,
  amount: number,
  note: string,
): Expense {
  return expenses.create({ employeeId, at, expenseId, amount, note });
}

/** Expenses streamed from a generator: the bulk writer never needs them all in memory. */
function* generateExpenses(expenses: Repository<Expense>, staff: readonly Employee[]): Generator<Expense> {
  const base = Date.UTC(2023, 0, 1);
  for (let n = 0; n < EXPENSES_PER_EMPLOYEE; n++) {
    for (const e of staff) {
      yield makeExpense(
        expenses,
        e.employeeId,
        new Date(base + n * 86_400_000 + e.employeeId),
        `x${n}`,
        5 + ((n * e.employeeId) % 200),
        "travel",
      );
    }
  }
}

/** A progress bar in 10% steps (one line per step, so it reads well in logs too). */
function progressBar(total: number, say: (line: string) => void): (progress: BulkProgress) => void {
  let shown = -1;
  return ({ done, batches, failed }) => {
    const step = Math.floor((done / total) * 10);
    if (step === shown) return;
    shown = step;
    say(
      `   [${"#".repeat(step).padEnd(10, ".")}] ${String(step * 10).padStart(3)}%  ${done.toLocaleString("en")} written, ${batches} batches, ${failed} failed`,
    );
  };
}

function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) => `   ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ")}`;
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

/** The store the tour runs on: Azure/Azurite when TABLEKIT_CONNECTION_STRING is set, else in-process. */
export function tourStore(): TableStore {
  const cs = process.env.TABLEKIT_CONNECTION_STRING;
  return cs ? AzureStore.fromConnectionString(cs) : new MemoryStore();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  runTour(tourStore()).catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
