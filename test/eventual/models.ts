// Imported from their modules (not the package index) so these load without the Azure SDK.
import { Column, Entity } from "../../src/schema/decorators.js";

/** The guide's current employee: one partition per department. */
@Entity({ table: "EvCurrent", type: "EvCurrent", partitionKey: "{department}", rowKey: "{employeeId:6}" })
export class CurrentEmployee {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "String" }) name!: string;
  @Column({ type: "Double" }) salary!: number;
  @Column({ type: "Int64" }) badge!: bigint;
  @Column({ type: "DateTime" }) hired!: Date;
}

/** The archive: another table, partitioned by the year the employee left. */
@Entity({
  table: "EvArchive",
  type: "EvArchive",
  partitionKey: "{year}",
  rowKey: "{department}_{employeeId:6}",
})
export class ArchivedEmployee {
  @Column({ type: "Int32" }) year!: number;
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "String" }) name!: string;
  @Column({ type: "Double" }) salary!: number;
}

/** A current employee whose values follow from its key. */
export function current(department: string, employeeId: number, version = 1): CurrentEmployee {
  return Object.assign(new CurrentEmployee(), {
    department,
    employeeId,
    name: `N${employeeId}v${version}`,
    salary: 1000.5 + employeeId + version,
    badge: 10n ** 15n + BigInt(employeeId),
    hired: new Date(Date.UTC(2020, 0, 1 + employeeId)),
  });
}

/** The archive row of a current employee. */
export function archived(e: CurrentEmployee, year = 2026): ArchivedEmployee {
  return Object.assign(new ArchivedEmployee(), {
    year,
    department: e.department,
    employeeId: e.employeeId,
    name: e.name,
    salary: e.salary,
  });
}

/** A departure record with a same-partition summary (count and payroll per year). */
@Entity({
  table: "EvDepartures",
  type: "EvDeparture",
  partitionKey: "{year}",
  rowKey: "d_{employeeId:6}",
  summaries: { perYear: { rowKey: "summary", count: "departures", sum: { salary: "payroll" } } },
})
export class Departure {
  @Column({ type: "Int32" }) year!: number;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "Double" }) salary!: number;
}

/** The departure record of a current employee. */
export function departure(e: CurrentEmployee, year = 2026): Departure {
  return Object.assign(new Departure(), { year, employeeId: e.employeeId, salary: e.salary });
}
