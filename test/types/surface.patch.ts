import { expectTypeOf } from "vitest";
import {
  type DynamicRow,
  MemoryStore,
  type PatchChanges,
  TableContext,
  timestampOf,
} from "../../src/index.js";
import { Employee } from "./surface-fixtures.js";

const employees = new TableContext({ store: new MemoryStore() }).repository(Employee);
const key = { department: "Sales", employeeId: 223 };

// patch: any columns, each with its own type; resolves when merged.
expectTypeOf(employees.patch(key, { age: 31 })).toEqualTypeOf<Promise<void>>();
employees.patch(key, { nickname: "JJ", salaryCents: 100n, hired: new Date() }, { ifMatch: "*" });
// undefined means "not changed", also for required columns and for the options.
employees.patch(key, { age: undefined, nickname: undefined }, { ifMatch: undefined });
// @ts-expect-error age is a number
employees.patch(key, { age: "thirty" });
// @ts-expect-error salaryCents is an Int64 (bigint)
employees.patch(key, { salaryCents: 100 });
// @ts-expect-error agee is not a field of Employee
employees.patch(key, { agee: 31 });
// @ts-expect-error displayName is a getter, not a column
employees.patch(key, { displayName: "x" });
// @ts-expect-error greet is a method
employees.patch(key, { greet: () => "" });
// @ts-expect-error ifMatch is an ETag string
employees.patch(key, { age: 1 }, { ifMatch: 1 });
expectTypeOf<keyof PatchChanges<Employee>>().toEqualTypeOf<
  | "department"
  | "employeeId"
  | "firstName"
  | "lastName"
  | "age"
  | "email"
  | "nickname"
  | "salaryCents"
  | "hired"
>();

// getMany: the entities in key order, undefined where absent.
expectTypeOf(employees.getMany([key, key])).toEqualTypeOf<Promise<Array<Employee | undefined>>>();
employees.getMany([key], { concurrency: 4 });
employees.getMany([key], { concurrency: undefined });
// @ts-expect-error keys are objects of fields
employees.getMany(["Sales"]);
// @ts-expect-error concurrency is a number
employees.getMany([key], { concurrency: "4" });

// timestampOf: a Date when the entity was read or written through a repository.
expectTypeOf(timestampOf(new Employee())).toEqualTypeOf<Date | undefined>();
// @ts-expect-error entities are objects
timestampOf("x");

// db.dynamic: untyped rows of wire values.
const events = new TableContext({ store: new MemoryStore() }).dynamic("Events");
expectTypeOf(events.get("p", "r")).toEqualTypeOf<Promise<DynamicRow | undefined>>();
events.upsert({
  partitionKey: "p",
  rowKey: "r",
  n: 1,
  big: 1n,
  at: new Date(),
  id: { type: "Guid", value: "x" },
});
events.upsert({ partitionKey: "p", rowKey: "r" }, { mode: "merge" });
// @ts-expect-error a row needs its rowKey
events.upsert({ partitionKey: "p" });
// @ts-expect-error values are wire values, not arbitrary objects
events.upsert({ partitionKey: "p", rowKey: "r", nested: { a: 1 } });
expectTypeOf(events.find("p").toArray()).toEqualTypeOf<Promise<DynamicRow[]>>();
expectTypeOf(events.delete("p", "r", { ifMatch: "*" })).toEqualTypeOf<Promise<boolean>>();
