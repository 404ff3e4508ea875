import { Column, Entity } from "../../src/index.js";

/** The design guide's employee, plus an optional column, a getter and a method (neither is a column). */
@Entity({ table: "Employees", partitionKey: "{department}", rowKey: "empid_{employeeId:6}" })
export class Employee {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "String" }) firstName!: string;
  @Column({ type: "String" }) lastName!: string;
  @Column({ type: "Int32" }) age!: number;
  @Column({ type: "String" }) email!: string;
  @Column({ type: "String" }) nickname?: string;
  @Column({ type: "Int64" }) salaryCents?: bigint;
  @Column({ type: "DateTime" }) hired?: Date;

  get displayName(): string {
    return `${this.firstName} ${this.lastName}`;
  }

  greet(): string {
    return `Hello, ${this.firstName}`;
  }
}

/** A second class sharing the Employees table and its partition template. */
@Entity({ table: "Employees", partitionKey: "{department}", rowKey: "dept" })
export class Department {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "String" }) manager!: string;
  @Column({ type: "Int32" }) headcount!: number;
}
