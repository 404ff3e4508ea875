import "reflect-metadata";
import { Column, Entity } from "../src/index.js";

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
