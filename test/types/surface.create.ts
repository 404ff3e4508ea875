import { expectTypeOf } from "vitest";
import { type CreateValues, MemoryStore, type RequiredField, TableContext } from "../../src/index.js";
import { Employee } from "./surface-fixtures.js";

const employees = new TableContext({ store: new MemoryStore() }).repository(Employee);

// Every required column given: an Employee (nothing written).
const jones = employees.create({
  department: "Sales",
  employeeId: 223,
  firstName: "Jo",
  lastName: "Jones",
  age: 30,
  email: "jj@contoso.com",
});
expectTypeOf(jones).toEqualTypeOf<Employee>();

// Optional columns may be given, or given as undefined (read as absent).
employees.create({ ...jones, nickname: "JJ", salaryCents: 100n, hired: new Date() });
employees.create({ ...jones, nickname: undefined });

// Required columns are required.
// @ts-expect-error nothing given
employees.create({});
// @ts-expect-error lastName is missing
employees.create({ department: "Sales", employeeId: 1, firstName: "Jo", age: 30, email: "x" });

// Unknown properties are rejected (excess property check): a typo does not slip through.
employees.create({
  ...jones,
  // @ts-expect-error lastNmae is not a field of Employee
  lastNmae: "x",
});

// Values have their field's type.
employees.create({
  ...jones,
  // @ts-expect-error age is a number
  age: "thirty",
});
employees.create({
  ...jones,
  // @ts-expect-error an Int64 column holds a bigint
  salaryCents: 100,
});

// Methods are not data: they are neither required nor accepted.
employees.create({
  ...jones,
  // @ts-expect-error greet is a method
  greet: () => "hi",
});

// A getter (readonly) is not required.
expectTypeOf<CreateValues<Employee>>().not.toHaveProperty("greet");
expectTypeOf<keyof CreateValues<Employee>>().toEqualTypeOf<
  | "department"
  | "employeeId"
  | "firstName"
  | "lastName"
  | "age"
  | "email"
  | "nickname"
  | "salaryCents"
  | "hired"
  | "displayName"
>();
expectTypeOf<RequiredField<Employee>>().toEqualTypeOf<
  "department" | "employeeId" | "firstName" | "lastName" | "age" | "email"
>();
