/**
 * A narrated tour of tablekit. `npm start` runs it on the embedded MemoryStore (no server needed);
 * with TABLEKIT_CONNECTION_STRING set it runs against Azurite or Azure instead.
 */
import "reflect-metadata";
import { pathToFileURL } from "node:url";
import { AzureStore, MemoryStore, TableContext, type TableStore } from "../src/index.js";
import { Employee, Expense } from "./models.js";

const DEPARTMENTS = ["Engineering", "Marketing", "Sales"];
const LAST_NAMES = ["Jones", "Smith", "Garcia", "Chen", "Okafor"];

/** Runs the tour on a store, writing its narration through `say`. */
export async function runTour(store: TableStore, say: (line: string) => void = console.log): Promise<void> {
  // A fresh prefix keeps repeated runs against a shared Azurite apart.
  const db = new TableContext({ store, tablePrefix: `tour${Date.now().toString(36)}` });
  await db.ensureTables(Employee, Expense);
  const employees = db.repository(Employee);
  const expenses = db.repository(Expense);

  say(`tablekit tour on the ${store.name} store\n`);
  say("1. Entities map to compound keys, exactly as the Azure table design guide writes them:");
  const samples = [
    Object.assign(new Employee(), {
      department: "Sales",
      employeeId: 223,
      firstName: "Jane",
      lastName: "Jones",
      age: 34,
      email: "jonesj@contoso.com",
      hiredAt: new Date("2019-03-01T09:00:00Z"),
    }),
  ];
  const expense = Object.assign(new Expense(), {
    employeeId: 223,
    at: new Date("2024-05-01T12:30:00.000Z"),
    expenseId: "e1",
    amount: 42.5,
    note: "Taxi",
  });
  const rows = [
    ["Employee", `{department} / empid_{employeeId:6}`, employees.keyOf(samples[0] as Employee)],
    ["Expense", `emp_{employeeId:6} / {at:desc}_{expenseId}`, expenses.keyOf(expense)],
  ] as const;
  say(table(["entity", "templates", "PartitionKey", "RowKey"], rows.map(([n, t, k]) => [n, t, k.partitionKey, k.rowKey])));

  say("\n2. A transaction (one partition, atomic) hires a team:");
  await db.transaction((tx) => {
    for (let id = 1; id <= 5; id++) tx.insert(makeEmployee("Sales", id));
  });
  say("   5 employees inserted into Sales in one entity group transaction");

  say("\n3. Bulk of data: 1,500 employees in 3 departments, written as batches of 100 per partition");
  for (const department of DEPARTMENTS) {
    for (let start = 100; start < 600; start += 100) {
      await db.transaction((tx) => {
        for (let id = start; id < start + 100; id++) tx.upsert(makeEmployee(department, id));
      });
    }
  }
  await employees.upsert(samples[0] as Employee);

  say("\n4. Queries, from cheapest to most expensive (explain() tells which kind, without a request):");
  const queries = [
    ["point", employees.find({ department: "Sales", employeeId: 223 })],
    ["range", employees.find({ department: "Sales" }).between({ employeeId: 100 }, { employeeId: 104 })],
    ["partition scan", employees.find({ department: "Sales" }).where("age", "gt", 60)],
    ["table scan", employees.scan().where({ lastName: "Jones" }).take(3)],
  ] as const;
  for (const [label, query] of queries) {
    const plan = query.explain();
    const found = await query.toArray();
    say(`   ${label.padEnd(15)} kind=${plan.kind.padEnd(15)} ${found.length} result(s)   $filter=${plan.filter}`);
  }
  const jane = await employees.getOrThrow({ department: "Sales", employeeId: 223 });
  say(`   get → ${jane.firstName} ${jane.lastName} <${jane.email}>, hired ${jane.hiredAt.toISOString().slice(0, 10)}`);

  say("\n5. Paging with a continuation you can store (e.g. in a URL) and resume later:");
  let continuation: string | undefined;
  let page = 0;
  let total = 0;
  do {
    const result = await employees.scan().page({ size: 400, ...(continuation ? { continuation } : {}) });
    total += result.items.length;
    continuation = result.continuation;
    page += 1;
    say(`   page ${page}: ${result.items.length} employees${continuation ? `, continuation ${continuation.slice(0, 24)}…` : ", done"}`);
  } while (continuation);
  say(`   ${total} employees in ${page} pages`);

  say("\n6. The log tail: newest expenses first, because the RowKey is inverted ticks:");
  for (let i = 0; i < 6; i++) {
    await expenses.insert(
      Object.assign(new Expense(), {
        employeeId: 223,
        at: new Date(Date.UTC(2024, 4, 1 + i, 12)),
        expenseId: `e${i}`,
        amount: 10 + i,
        note: `day ${i + 1}`,
      }),
    );
  }
  for (const e of await expenses.find({ employeeId: 223 }).take(3).toArray()) {
    say(`   ${e.at.toISOString()}  ${e.amount.toFixed(2).padStart(6)}  ${e.note}  (RowKey ${expenses.keyOf(e).rowKey})`);
  }

  say("\n7. Optimistic concurrency: a stale copy cannot overwrite a newer one");
  const mine = await employees.getOrThrow({ department: "Sales", employeeId: 1 });
  const theirs = await employees.getOrThrow({ department: "Sales", employeeId: 1 });
  theirs.age += 1;
  await employees.update(theirs);
  mine.age = 18;
  const outcome = await employees.update(mine).then(
    () => "overwrote (unexpected)",
    (error: Error & { code?: string }) => `rejected with ${error.name} (${error.code})`,
  );
  say(`   stale update ${outcome}`);
  say("\nDone.");
}

function makeEmployee(department: string, employeeId: number): Employee {
  return Object.assign(new Employee(), {
    department,
    employeeId,
    firstName: `Emp${employeeId}`,
    lastName: LAST_NAMES[employeeId % LAST_NAMES.length] as string,
    age: 20 + ((employeeId * 7) % 45),
    email: `emp${employeeId}@${department.toLowerCase()}.contoso.com`,
    hiredAt: new Date(Date.UTC(2015 + (employeeId % 9), employeeId % 12, 1)),
  });
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
