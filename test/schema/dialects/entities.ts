// Entity definitions valid under both decorator dialects. decorator-dialects.test.ts compiles this
// file with TypeScript (legacy and standard), with esbuild (standard, as tsx does) and lets vitest
// load it as it is (legacy, per the root tsconfig), then compares the models and stored rows.
import { Column, Entity } from "../../../src/index.js";

export class Address {
  street = "";
  city = "";
}

@Entity({
  table: "Employees",
  partitionKey: "{department}",
  rowKey: "empid_{employeeId:6}",
  indexes: {
    byEmail: { rowKey: "email_{email}" },
    byLastName: {
      table: "EmployeesByName",
      partitionKey: "{lastName}",
      rowKey: "{department}_{employeeId:6}",
    },
  },
})
export class Employee {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "String", name: "FirstName" }) firstName!: string;
  @Column({ type: "String" }) lastName!: string;
  @Column({ type: "String" }) email!: string;
  @Column({ type: "Double" }) salary!: number;
  @Column({ type: "Int64" }) badge!: bigint;
  @Column({ type: "Boolean" }) active!: boolean;
  @Column({ type: "DateTime" }) hired!: Date;
  @Column({ type: "Guid" }) uid!: string;
  @Column({ type: "Binary" }) photo!: Uint8Array;
  @Column({ type: "Json", jsonClass: Address }) address!: Address;
  @Column({ type: "Int32" }) age?: number;
  // Not a column: never stored.
  scratch = "not stored";
}

/** An undecorated base class: its columns belong to every entity class extending it. */
export class Audited {
  @Column({ type: "DateTime" }) createdAt!: Date;
  @Column({ type: "String" }) createdBy!: string;
}

@Entity({ table: "Notes", partitionKey: "{topic}", rowKey: "{id}" })
export class Note extends Audited {
  @Column({ type: "String" }) topic!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "String" }) text!: string;
}

/** A decorated base class with a decorated subclass sharing its table under another discriminator. */
@Entity({ table: "Vehicles", partitionKey: "{fleet}", rowKey: "{plate}", type: "Vehicle" })
export class Vehicle {
  @Column({ type: "String" }) fleet!: string;
  @Column({ type: "String" }) plate!: string;
  @Column({ type: "Int32" }) seats!: number;
}

@Entity({ table: "Vehicles", partitionKey: "{fleet}", rowKey: "{plate}", type: "Truck" })
export class Truck extends Vehicle {
  @Column({ type: "Double" }) payload!: number;
  // Redeclared in the subclass: stored under another name.
  @Column({ type: "Int32", name: "Cabin" }) override seats!: number;
}
