import { expect } from "vitest";
import { Column, Entity, type TableContext } from "../../src/index.js";
import type { TableStore } from "../../src/store/table-store.js";
import { readAll } from "../support/read-all.js";

/**
 * Employees partitioned by region and department, with two summaries kept in another partition of
 * another table (a global total and one per region) and one in each partition.
 */
@Entity({
  table: "RsEmployees",
  type: "RsEmployee",
  partitionKey: "{region}_{department}",
  rowKey: "emp_{employeeId:6}",
  summaries: {
    global: {
      partitionKey: "totals",
      rowKey: "employees",
      table: "RsStats",
      count: "employees",
      sum: { salary: "totalSalary", bonus: "totalBonus" },
    },
    perRegion: {
      partitionKey: "{region}",
      rowKey: "region",
      table: "RsStats",
      count: "n",
      sum: { salary: "salary" },
    },
    local: { rowKey: "summary", count: "n" },
  },
})
export class RsEmployee {
  @Column({ type: "String" }) region!: string;
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "Int32" }) salary!: number;
  @Column({ type: "Int64" }) bonus?: bigint;
}

export function employee(
  region: string,
  department: string,
  employeeId: number,
  salary: number,
  bonus?: bigint,
) {
  return Object.assign(new RsEmployee(), {
    region,
    department,
    employeeId,
    salary,
    ...(bonus === undefined ? {} : { bonus }),
  });
}

/** The remote summaries recounted from the stored employee rows (never from a summary). */
export async function recount(store: TableStore, prefix: string) {
  const rows = (await readAll(store, `${prefix}RsEmployees`)).filter((row) =>
    String(row.EntityType ?? "").startsWith("RsEmployee"),
  );
  const global = { employees: 0, totalSalary: 0, totalBonus: 0n };
  const regions = new Map<string, { n: number; salary: number }>();
  for (const row of rows) {
    global.employees += 1;
    global.totalSalary += Number(row.salary);
    global.totalBonus += typeof row.bonus === "bigint" ? row.bonus : 0n;
    const region = String(row.region);
    const r = regions.get(region) ?? { n: 0, salary: 0 };
    r.n += 1;
    r.salary += Number(row.salary);
    regions.set(region, r);
  }
  return { global, regions };
}

/** Every remote summary read through the repository equals a recount of the rows. */
export async function expectExact(db: TableContext, prefix: string, regions: readonly string[], where = "") {
  const expected = await recount(db.store, prefix);
  const employees = db.repository(RsEmployee);
  expect(await employees.summary("global", {}), where).toEqual(expected.global);
  for (const region of regions) {
    expect(await employees.summary("perRegion", { region }), `${where} ${region}`).toEqual(
      expected.regions.get(region) ?? { n: 0, salary: 0 },
    );
  }
  expect(await db.verifySummaries(RsEmployee), where).toEqual([]);
}
