// Summaries: `@Entity<T>` checks which columns can be summed; `repository.summary` is typed by its caller.

import { expectTypeOf } from "vitest";
import {
  Column,
  Entity,
  MemoryStore,
  type SummableField,
  type SummaryDrift,
  type SummaryValues,
  TableContext,
} from "../../src/index.js";

class Payroll {
  department!: string;
  id!: string;
  salary!: number;
  bonus?: bigint;
  rate?: number | undefined;
  name!: string;
  greet(): string {
    return this.name;
  }
}

expectTypeOf<SummableField<Payroll>>().toEqualTypeOf<"salary" | "bonus" | "rate">();
expectTypeOf<SummableField<unknown>>().toEqualTypeOf<string>();

@Entity<Payroll>({
  table: "Payrolls",
  partitionKey: "{department}",
  rowKey: "p_{id}",
  summaries: {
    perDepartment: { rowKey: "summary", count: "people", sum: { salary: "total", bonus: "bonuses" } },
  },
})
export class TypedPayroll extends Payroll {}

/** Indexes and summaries together (API.md's Employee shape) are accepted. */
@Entity<Payroll>({
  table: "Payrolls",
  partitionKey: "{department}",
  rowKey: "p_{id}",
  indexes: {
    byName: { rowKey: "name_{name}" },
    byNameElsewhere: { table: "PayrollsByName", partitionKey: "{name}", rowKey: "{department}_{id}" },
  },
  summaries: { perDepartment: { rowKey: "summary", count: "people", sum: { salary: "total" } } },
})
export class IndexedPayroll extends Payroll {}

@Entity<Payroll>({
  table: "Payrolls",
  partitionKey: "{department}",
  rowKey: "p_{id}",
  // @ts-expect-error a String column cannot be summed
  summaries: { perDepartment: { rowKey: "summary", sum: { name: "names" } } },
})
export class SumsAString extends Payroll {}

// @ts-expect-error without a type argument, a summed field the class lacks is caught like a key field
@Entity({
  table: "Untyped",
  partitionKey: "{department}",
  rowKey: "p_{id}",
  summaries: { s: { rowKey: "summary", sum: { salray: "total" } } },
})
export class Misspelled {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Int32" }) salary!: number;
}

/** A summary in another partition (and table): its template takes fields of the entity's partitionKey. */
@Entity<Payroll>({
  table: "Payrolls",
  partitionKey: "{department}",
  rowKey: "p_{id}",
  summaries: {
    everyone: { partitionKey: "totals", rowKey: "people", table: "PayrollTotals", count: "people" },
    perDepartment: { partitionKey: "d_{department}", rowKey: "people", sum: { salary: "total" } },
  },
})
export class RemotePayroll extends Payroll {}

// @ts-expect-error a remote summary's template field the class lacks is caught like a key field
@Entity({
  table: "Untyped",
  partitionKey: "{department}",
  rowKey: "p_{id}",
  summaries: { s: { partitionKey: "{departmnet}", rowKey: "all", count: "n" } },
})
export class MisspelledRemote {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "String" }) id!: string;
}

@Entity<Payroll>({
  table: "Payrolls",
  partitionKey: "{department}",
  rowKey: "p_{id}",
  // @ts-expect-error a remote table is a string
  summaries: { s: { partitionKey: "all", rowKey: "all", table: 7, count: "n" } },
})
export class NumericTable extends Payroll {}

const db = new TableContext({ store: new MemoryStore() });
const payrolls = db.repository(TypedPayroll);
expectTypeOf(payrolls.summary("perDepartment", { department: "Sales" })).toEqualTypeOf<
  Promise<SummaryValues>
>();
expectTypeOf(
  payrolls.summary<{ people: number; total: number; bonuses: bigint }>("perDepartment", {
    department: "Sales",
  }),
).toEqualTypeOf<Promise<{ people: number; total: number; bonuses: bigint }>>();
// @ts-expect-error summary values are numbers or bigints
payrolls.summary<{ people: string }>("perDepartment", { department: "Sales" });
// @ts-expect-error the partial is the entity's fields
payrolls.summary("perDepartment", { departmnet: "Sales" });
expectTypeOf(db.verifySummaries(TypedPayroll)).toEqualTypeOf<Promise<SummaryDrift[]>>();
