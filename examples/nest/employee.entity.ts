import { Column, Entity } from "tablekit";

/** An employee: one partition per department, RowKey `emp_000007`, a unique e-mail index. */
@Entity({
  table: "NestEmployees",
  partitionKey: "{department}",
  rowKey: "emp_{employeeId:6}",
  indexes: { byEmail: { rowKey: "email_{email}", unique: true } },
})
export class Employee {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "String" }) name!: string;
  @Column({ type: "String" }) email!: string;
}
