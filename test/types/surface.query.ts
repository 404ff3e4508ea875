import { expectTypeOf } from "vitest";
import { MemoryStore, type Page, type Query, TableContext } from "../../src/index.js";
import { Department, Employee } from "./surface-fixtures.js";

const db = new TableContext({ store: new MemoryStore() });
const employees = db.repository(Employee);
const sales = employees.find({ department: "Sales" });

// where: the value has the field's type.
expectTypeOf(sales.where("age", "gt", 30)).toEqualTypeOf<Query<Employee>>();
sales.where("lastName", "eq", "Jones");
sales.where("salaryCents", "ge", 100n);
sales.where("hired", "lt", new Date());
// @ts-expect-error age is a number
sales.where("age", "gt", "thirty");
// @ts-expect-error an Int64 column compares with a bigint
sales.where("salaryCents", "ge", 100);
// @ts-expect-error a DateTime column compares with a Date
sales.where("hired", "lt", "2026-01-01");
// @ts-expect-error the service cannot compare with null
sales.where("nickname", "eq", null);
// @ts-expect-error not a field
sales.where("salary", "gt", 1);
// @ts-expect-error a method is not a column
sales.where("greet", "eq", "x");
// @ts-expect-error not an operator
sales.where("age", "like", 30);

// where({ … }): equalities on data fields, each with its own type.
sales.where({ lastName: "Jones", age: 30 });
// @ts-expect-error age is a number
sales.where({ age: "30" });
// @ts-expect-error not a field
sales.where({ lastNmae: "Jones" });

// select narrows the results to the selected fields.
const names = sales.select("firstName", "lastName");
expectTypeOf(names).toEqualTypeOf<Query<Employee, Pick<Employee, "firstName" | "lastName">>>();
expectTypeOf(names.toArray()).resolves.toEqualTypeOf<Array<Pick<Employee, "firstName" | "lastName">>>();
expectTypeOf(names.first()).resolves.toEqualTypeOf<Pick<Employee, "firstName" | "lastName"> | undefined>();
expectTypeOf(names.page()).resolves.toEqualTypeOf<Page<Pick<Employee, "firstName" | "lastName">>>();
// Filters still see every column; the narrowing survives chaining.
expectTypeOf(names.where("age", "gt", 30).take(5)).toEqualTypeOf<typeof names>();
// @ts-expect-error a method cannot be selected
sales.select("greet");
// @ts-expect-error not a field
sales.select("salary");

async function readNames(): Promise<void> {
  for await (const row of sales.select("lastName")) {
    expectTypeOf(row).toEqualTypeOf<Pick<Employee, "lastName">>();
    // @ts-expect-error age was not selected
    row.age;
  }
  const first = await sales.select("lastName").first();
  // @ts-expect-error age was not selected
  first?.age;
}
void readNames;

// Point reads narrow with { select } too.
const key = { department: "Sales", employeeId: 223 };
expectTypeOf(employees.get(key)).resolves.toEqualTypeOf<Employee | undefined>();
expectTypeOf(employees.get(key, { select: ["email"] })).resolves.toEqualTypeOf<
  Pick<Employee, "email"> | undefined
>();
expectTypeOf(employees.getOrThrow(key, { select: ["email", "age"] })).resolves.toEqualTypeOf<
  Pick<Employee, "email" | "age">
>();
expectTypeOf(employees.get(key, { select: undefined })).resolves.toEqualTypeOf<Employee | undefined>();
// @ts-expect-error a method cannot be selected
employees.get(key, { select: ["greet"] });

// Paging: a page's continuation goes back in as it is (explicit undefined on the last page).
async function pageThrough(): Promise<void> {
  const first = await sales.page({ size: 50 });
  const next = await sales.page({ size: 50, continuation: first.continuation });
  expectTypeOf(next.items).toEqualTypeOf<Employee[]>();
}
void pageThrough;

// Index lookups return queries with the same typed where.
employees.index("byEmail").find({ department: "Sales" }).where("age", "ge", 18);
// @ts-expect-error age is a number
employees.index("byEmail").find({ department: "Sales" }).where("age", "ge", "18");

// Several classes over one table: where/select take the columns every class has.
const both = db.query(Department, Employee).find({ department: "Sales" });
expectTypeOf(both.toArray()).resolves.toEqualTypeOf<Array<Department | Employee>>();
both.where("department", "eq", "Sales");
both.where({ department: "Sales" });
// @ts-expect-error department is a string
both.where("department", "eq", 1);
// @ts-expect-error age is not a column of Department
both.where("age", "gt", 30);
// @ts-expect-error lastName is not a column of Department
both.where({ lastName: "Jones" });
expectTypeOf(both.select("department").toArray()).resolves.toEqualTypeOf<
  Array<Pick<Department, "department"> | Pick<Employee, "department">>
>();
// @ts-expect-error manager is not a column of Employee
both.select("manager");
