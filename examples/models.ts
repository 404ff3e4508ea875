import { pathToFileURL } from "node:url";
import { Column, Entity } from "tablekit";

/**
 * The design guide's employee: one partition per department, RowKey `empid_000223`, a copy per
 * e-mail address in the same partition (kept atomic), and a copy per last name in another table
 * (kept eventually consistent, repairable).
 */
@Entity({
  table: "TourEmployees",
  partitionKey: "{department}",
  rowKey: "empid_{employeeId:6}",
  indexes: {
    byEmail: { rowKey: "email_{email}" },
    byLastName: {
      table: "TourEmployeesByName",
      partitionKey: "{lastName}",
      rowKey: "{department}_{employeeId:6}",
    },
  },
})
export class Employee {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "String" }) firstName!: string;
  @Column({ type: "String" }) lastName!: string;
  @Column({ type: "Int32" }) age!: number;
  @Column({ type: "String" }) email!: string;
  @Column({ type: "DateTime" }) hiredAt!: Date;
}

/** Expenses, newest first: the log-tail pattern with inverted ticks and a tie-breaker. */
@Entity({ table: "TourExpenses", partitionKey: "emp_{employeeId:6}", rowKey: "{at:desc}_{expenseId}" })
export class Expense {
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "String" }) expenseId!: string;
  @Column({ type: "Double" }) amount!: number;
  @Column({ type: "String" }) note!: string;
}

// Run alone (`npx tsx examples/models.ts`), it prints the keys each model gives an entity.
if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { MemoryStore, TableContext } = await import("tablekit");
  const db = new TableContext({ store: new MemoryStore() });
  const employees = db.repository(Employee);
  const expenses = db.repository(Expense);
  const employee = { department: "Sales", employeeId: 223 };
  const expense = { employeeId: 223, at: new Date("2026-11-26T12:00:00Z"), expenseId: "e1" };
  console.log(`Employee ${JSON.stringify(employee)} -> ${JSON.stringify(employees.keyOf(employee))}`);
  console.log(`Expense  ${JSON.stringify(expense)} -> ${JSON.stringify(expenses.keyOf(expense))}`);
}
