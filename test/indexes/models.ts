// Imported from its module (not the package index) so the crash writer starts without the Azure SDK.
import { Column, Entity } from "../../src/schema/decorators.js";
import type { EntityOptions } from "../../src/schema/entity-options.js";

/** The options of `RxEmployee` (shared with `RxEmployeeV2`, the same entity one version later). */
export const RX_OPTIONS = {
  table: "RxEmployees",
  type: "RxEmployee",
  partitionKey: "{department}",
  rowKey: "empid_{employeeId:6}",
  indexes: {
    byEmail: { rowKey: "email_{email}" },
    byLastName: {
      table: "RxEmployeesByName",
      partitionKey: "{lastName}",
      rowKey: "{department}_{employeeId:6}",
    },
    byAge: {
      table: "RxEmployeesByAge",
      partitionKey: "age_{age:3}",
      rowKey: "{department}_{employeeId:6}",
      project: ["firstName"],
    },
    byBadge: {
      partitionKey: "badges",
      rowKey: "badge_{badge}",
      when: (e: { badge?: string | null }) => e.badge !== undefined && e.badge !== null,
    },
  },
} satisfies EntityOptions;

/**
 * The conformance suite's indexed employee, with every kind of copy:
 * - `byEmail`: same partition, unique (rides in the entity's EGT);
 * - `byLastName`: another table (kept through the intent log);
 * - `byAge`: another table, projected (carries `firstName` plus the key fields only);
 * - `byBadge`: the same table but another partition, sparse (only employees with a badge).
 */
@Entity(RX_OPTIONS)
export class RxEmployee {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "String" }) firstName!: string;
  @Column({ type: "String" }) lastName!: string;
  @Column({ type: "Int32" }) age!: number;
  @Column({ type: "String" }) email!: string;
  @Column({ type: "String" }) badge?: string;
  /** Bumped by every write of the crash test, so a reader can tell which write it sees. */
  @Column({ type: "Int32" }) version!: number;
}

/** An employee whose every indexed value follows from its key and `version`. */
export function rxEmployee(department: string, employeeId: number, version: number): RxEmployee {
  const e = Object.assign(new RxEmployee(), {
    department,
    employeeId,
    firstName: `F${version % 4}`,
    lastName: `L${version % 5}`,
    age: 20 + (version % 30),
    email: `e${employeeId}v${version}@x.com`,
    version,
  });
  // Every third version has no badge: the sparse copy comes and goes.
  if (version % 3 !== 0) e.badge = `B${employeeId}v${version}`;
  return e;
}

/** The fields a check compares. */
export function valuesOf(e: RxEmployee): Record<string, unknown> {
  return {
    department: e.department,
    employeeId: e.employeeId,
    firstName: e.firstName,
    lastName: e.lastName,
    age: e.age,
    email: e.email,
    badge: e.badge ?? undefined,
    version: e.version,
  };
}

/**
 * The same stored entity, one schema version later: version-1 rows are upcast on read (their
 * last name gains an "Up" prefix, so the byLastName copy they call for moves).
 */
@Entity({
  ...RX_OPTIONS,
  version: 2,
  upcast: (row, from) => (from < 2 ? { ...row, lastName: `Up${String(row.lastName)}` } : row),
})
export class RxEmployeeV2 extends RxEmployee {}
