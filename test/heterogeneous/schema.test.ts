import { describe, expect, expectTypeOf, it } from "vitest";
import {
  Column,
  Entity,
  MemoryStore,
  type MultiEntityQuery,
  type MultiEntitySource,
  type Page,
  SchemaError,
  TableContext,
} from "../../src/index.js";
import { Department, Note, PersonV1, PersonV2, StaffEmployee } from "./models.js";

/** Same table and type as Department: rows of the two could not be told apart. */
@Entity({ table: "Staff", partitionKey: "{department}", rowKey: "dept2", type: "Department" })
class DepartmentClone {
  @Column({ type: "String" }) department!: string;
}

/** Same type, same table spelled in another case (table names are case-insensitive). */
@Entity({ table: "STAFF", partitionKey: "{department}", rowKey: "d", type: "Department" })
class ShoutingDepartment {
  @Column({ type: "String" }) department!: string;
}

/** Same table, another partition key template. */
@Entity({ table: "Staff", partitionKey: "{region}", rowKey: "r_{code}", type: "Region" })
class Region {
  @Column({ type: "String" }) region!: string;
  @Column({ type: "String" }) code!: string;
}

/** Same template text, but the field is an integer: the same values would not encode the same way. */
@Entity({ table: "Staff", partitionKey: "{department}", rowKey: "b_{id}", type: "Budget" })
class Budget {
  @Column({ type: "Int32" }) department!: number;
  @Column({ type: "String" }) id!: string;
}

/** Another table altogether. */
@Entity({ table: "Elsewhere", partitionKey: "{department}", rowKey: "x" })
class Elsewhere {
  @Column({ type: "String" }) department!: string;
}

const context = () => new TableContext({ store: new MemoryStore() });

describe("classes sharing a table", () => {
  it("two classes with the same table and type in one context are a SchemaError (repository)", () => {
    const db = context();
    db.repository(Department);
    expect(() => db.repository(DepartmentClone)).toThrow(SchemaError);
    expect(() => db.repository(DepartmentClone)).toThrow(
      /DepartmentClone and Department both store type 'Department' in table 'Staff'.*distinct @Entity\(\{ type \}\)/,
    );
    expect(() => db.repository(ShoutingDepartment)).toThrow(SchemaError);
    // The first class keeps working; distinct types in the same table are fine.
    expect(db.repository(Department).model.type).toBe("Department");
    expect(() => db.repository(StaffEmployee)).not.toThrow();
    expect(() => db.repository(Note)).not.toThrow();
  });

  it("the clash is also caught by db.query, in either order, and is per context", () => {
    expect(() => context().query(DepartmentClone, Department)).toThrow(SchemaError);
    expect(() => context().query(Department, StaffEmployee, DepartmentClone)).toThrow(SchemaError);
    const db = context();
    db.query(DepartmentClone);
    expect(() => db.repository(Department)).toThrow(SchemaError);
    // Another context is another deployment: there, the clone may be used.
    expect(() => context().repository(DepartmentClone)).not.toThrow();
    // Two versions of one type are one type too: an old and a new class cannot share a context.
    const versions = context();
    versions.repository(PersonV1);
    expect(() => versions.repository(PersonV2)).toThrow(/both store type 'Person'/);
  });

  it("db.query needs one table and one partition-key template", () => {
    const db = context();
    expect(() => db.query(Department, Elsewhere)).toThrow(SchemaError);
    expect(() => db.query(Department, Elsewhere)).toThrow(/table 'Staff' and Elsewhere in 'Elsewhere'/);
    expect(() => db.query(Department, Region)).toThrow(SchemaError);
    expect(() => db.query(Department, Region)).toThrow(
      /partitionKey '\{department\}' and Region '\{region\}'.*one partition/,
    );
    expect(() => db.query(Department, Budget)).toThrow(
      /'department' is String in Department but Int32 in Budget/,
    );
    // Listing a class twice is harmless.
    expect(() => db.query(Department, Department, StaffEmployee)).not.toThrow();
  });

  it("version and upcast are checked when the class is declared", () => {
    expect(() => {
      @Entity({ table: "People", partitionKey: "{team}", rowKey: "{id}", upcast: (row) => row })
      class NoOlderVersion {
        @Column({ type: "String" }) team!: string;
        @Column({ type: "String" }) id!: string;
      }
      return NoOlderVersion;
    }).toThrow(/upcast upgrades rows of versions older.*version is 1/);
    expect(() => {
      @Entity({
        table: "People",
        partitionKey: "{team}",
        rowKey: "{id}",
        version: 2,
        upcast: "nope" as never,
      })
      class BadUpcast {
        @Column({ type: "String" }) team!: string;
        @Column({ type: "String" }) id!: string;
      }
      return BadUpcast;
    }).toThrow(/upcast must be a function/);
  });

  it("types: db.query(A, B) is a query over the union A | B", () => {
    const db = context();
    // Type-level only: nothing here is awaited, and no table exists.
    const types = () => {
      const source = db.query(Department, StaffEmployee);
      expectTypeOf(source).toEqualTypeOf<MultiEntitySource<Department | StaffEmployee>>();
      const query = source.find({ department: "Sales" });
      expectTypeOf(query).toEqualTypeOf<MultiEntityQuery<Department | StaffEmployee>>();
      expectTypeOf(query.toArray()).toEqualTypeOf<Promise<Array<Department | StaffEmployee>>>();
      expectTypeOf(query.first()).toEqualTypeOf<Promise<Department | StaffEmployee | undefined>>();
      expectTypeOf(query.page()).toEqualTypeOf<Promise<Page<Department | StaffEmployee>>>();
      expectTypeOf(query.take(1).where("name", "eq", "x").toArray()).toEqualTypeOf<
        Promise<Array<Department | StaffEmployee>>
      >();
      expectTypeOf(db.query(Department, StaffEmployee, Note).scan().toArray()).toEqualTypeOf<
        Promise<Array<Department | StaffEmployee | Note>>
      >();
      expectTypeOf(db.query(Note).find({ department: "x" }).toArray()).toEqualTypeOf<Promise<Note[]>>();
      // where/select/find take the fields every class has, and nothing else.
      expectTypeOf<Parameters<typeof query.select>[0]>().toEqualTypeOf<"department" | "name">();
      // @ts-expect-error budget is Department's only
      query.where("budget", "gt", 1);
      // @ts-expect-error age is StaffEmployee's only
      query.where({ age: 3 });
      // @ts-expect-error employeeId is StaffEmployee's only
      source.find({ department: "Sales", employeeId: 3 });
      // @ts-expect-error a class is required
      db.query();
      // Narrowing by class works on the results.
      const narrow = (row: Department | StaffEmployee) =>
        row instanceof StaffEmployee ? row.age : row.budget;
      expectTypeOf(narrow).returns.toEqualTypeOf<number>();
    };
    expect(typeof types).toBe("function");
  });
});
