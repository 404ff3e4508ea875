// Compiled under both decorator dialects: `@Entity(options)` checks the class against its options.

import { expectTypeOf } from "vitest";
import {
  Column,
  Entity,
  type EntityOptions,
  type KeyTemplateFields,
  type MissingFields,
} from "../../src/index.js";

expectTypeOf<KeyTemplateFields<"empid_{employeeId:6}">>().toEqualTypeOf<"employeeId">();
expectTypeOf<KeyTemplateFields<"{department}_{employeeId:6:desc}">>().toEqualTypeOf<
  "department" | "employeeId"
>();
expectTypeOf<KeyTemplateFields<"{at:month}">>().toEqualTypeOf<"at">();
expectTypeOf<KeyTemplateFields<"summary">>().toEqualTypeOf<never>();
// A template only known as `string` cannot be read: it is checked at run time.
expectTypeOf<KeyTemplateFields<string>>().toEqualTypeOf<never>();

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
    byAge: { partitionKey: "{age}", rowKey: "{employeeId}", project: ["firstName"] },
    // `when` with an annotated parameter is checked against the class.
    adults: { rowKey: "adult_{employeeId}", when: (e: { age: number }) => e.age >= 18 },
  },
})
export class Employee {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "String" }) firstName!: string;
  @Column({ type: "String" }) lastName!: string;
  @Column({ type: "Int32" }) age!: number;
  // An optional field may still be named by an index template.
  @Column({ type: "String" }) email?: string;
}

expectTypeOf<
  MissingFields<typeof Employee, { partitionKey: "{nope}"; rowKey: "{age}" }>
>().toEqualTypeOf<"nope">();

// @ts-expect-error the partitionKey template names a field the class lacks
@Entity({ table: "Typos", partitionKey: "{departmnet}", rowKey: "{id}" })
export class PartitionKeyTypo {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "String" }) id!: string;
}

// @ts-expect-error the rowKey template names a field the class lacks (format specs are skipped)
@Entity({ table: "Typos", partitionKey: "{id}", rowKey: "emp_{employeId:6}" })
export class RowKeyTypo {
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Int32" }) employeeId!: number;
}

// @ts-expect-error an index template names a field the class lacks
@Entity({ table: "Typos", partitionKey: "{id}", rowKey: "r", indexes: { byMail: { rowKey: "m_{mail}" } } })
export class IndexTypo {
  @Column({ type: "String" }) id!: string;
  @Column({ type: "String" }) email!: string;
}

// @ts-expect-error a projected field the class lacks
@Entity({
  table: "Typos",
  partitionKey: "{id}",
  rowKey: "r",
  indexes: { byN: { rowKey: "n_{n}", project: ["nmae"] } },
})
export class ProjectTypo {
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Int32" }) n!: number;
  @Column({ type: "String" }) name!: string;
}

// @ts-expect-error `when` expects entities with a numeric `age`; this class has none
@Entity({
  table: "Typos",
  partitionKey: "{id}",
  rowKey: "r",
  indexes: { x: { rowKey: "x_{id}", when: (e: { age: number }) => e.age > 1 } },
})
export class WhenMismatch {
  @Column({ type: "String" }) id!: string;
}

// Two annotated `when`s: the class must fit both.
@Entity({
  table: "Whens",
  partitionKey: "{id}",
  rowKey: "r",
  indexes: {
    a: { rowKey: "a_{id}", when: (e: { age: number }) => e.age > 1 },
    b: { rowKey: "b_{id}", when: (e: { flag: boolean }) => e.flag },
  },
})
export class FitsBothWhens {
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Int32" }) age!: number;
  @Column({ type: "Boolean" }) flag!: boolean;
}

// @ts-expect-error the class fits the first `when` but not the second
@Entity({
  table: "Whens",
  partitionKey: "{id}",
  rowKey: "r",
  indexes: {
    a: { rowKey: "a_{id}", when: (e: { age: number }) => e.age > 1 },
    b: { rowKey: "b_{id}", when: (e: { flag: boolean }) => e.flag },
  },
})
export class FitsOneWhen {
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Int32" }) age!: number;
}

// Options held in a variable typed `EntityOptions` (dynamic): nothing to check at compile time,
// the run-time SchemaError covers it.
const dynamic: EntityOptions = { table: "Dynamic", partitionKey: "{id}", rowKey: "r" };
@Entity(dynamic)
export class Dynamic {
  @Column({ type: "String" }) id!: string;
}

// Options accept explicit `undefined` for optional members (exactOptionalPropertyTypes).
@Entity({
  table: "Undefineds",
  partitionKey: "{id}",
  rowKey: "r",
  indexes: undefined,
  type: undefined,
  version: undefined,
})
export class Undefineds {
  @Column({ type: "String", name: undefined }) id!: string;
}

// Without a type argument, an unannotated `when` parameter is `never`: annotate it or use @Entity<T>.
@Entity({
  table: "Whens",
  partitionKey: "{id}",
  rowKey: "r",
  // @ts-expect-error `e` is never here: properties cannot be read from it
  indexes: { x: { rowKey: "x_{id}", when: (e) => e.flag } },
})
export class UnannotatedWhen {
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Boolean" }) flag!: boolean;
}

// ---- @Entity<T>(…): the options are typed by the entity type.
@Entity<Manager>({
  table: "Managers",
  partitionKey: "{department}",
  rowKey: "{id}",
  indexes: {
    senior: {
      rowKey: "senior_{id}",
      when: (m) => {
        expectTypeOf(m).toEqualTypeOf<Manager>();
        return m.reports > 10;
      },
      project: ["department", "reports"],
    },
  },
})
export class Manager {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Int32" }) reports!: number;
}

@Entity<Director>({
  table: "Directors",
  partitionKey: "{department}",
  rowKey: "{id}",
  // @ts-expect-error `project` names must be fields of Director
  indexes: { byId: { rowKey: "x_{id}", project: ["reprots"] } },
})
export class Director {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Int32" }) reports!: number;
}

@Entity<Director>({
  table: "Directors",
  partitionKey: "{department}",
  rowKey: "{id}",
  // @ts-expect-error `when` reads a field Director lacks
  indexes: { byId: { rowKey: "x_{id}", when: (d) => d.budget > 0 } },
})
export class DirectorWhen {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Int32" }) reports!: number;
}

// @ts-expect-error @Entity<Director> on a class that is not a Director
@Entity<Director>({ table: "Directors", partitionKey: "{department}", rowKey: "{id}" })
export class NotADirector {
  @Column({ type: "String" }) id!: string;
}

// Wide entities: a boolean; a space in the RowKey template is rejected with them (indexes compose).
@Entity({ table: "Wides", partitionKey: "{id}", rowKey: "r", wide: true })
export class WideOk {
  @Column({ type: "String" }) id!: string;
}

@Entity({ table: "Wides", partitionKey: "{id}", rowKey: "r", wide: undefined, indexes: {} })
export class WideUndefined {
  @Column({ type: "String" }) id!: string;
}

@Entity({
  table: "Wides",
  partitionKey: "{id}",
  rowKey: "r",
  // @ts-expect-error wide is a boolean
  wide: "yes",
})
export class WideNotBoolean {
  @Column({ type: "String" }) id!: string;
}

// A wide entity may have indexes (its copies hold its keys and the index's key fields).
@Entity({
  table: "Wides",
  partitionKey: "{id}",
  rowKey: "r",
  wide: true,
  indexes: { byId: { rowKey: "i_{id}" } },
})
export class WideIndexed {
  @Column({ type: "String" }) id!: string;
}

// @ts-expect-error a wide entity's RowKey template may not hold a space
@Entity({ table: "Wides", partitionKey: "{id}", rowKey: "a {id}", wide: true })
export class WideSpace {
  @Column({ type: "String" }) id!: string;
}

// Not wide: indexes and spaces are fine.
@Entity({
  table: "Wides",
  partitionKey: "{id}",
  rowKey: "a {id}",
  wide: false,
  indexes: { byId: { rowKey: "i_{id}" } },
})
export class NarrowIndexed {
  @Column({ type: "String" }) id!: string;
}
