import { expectTypeOf } from "vitest";
import {
  type EventualResult,
  type EventualStepError,
  type EventualTransaction,
  MemoryStore,
  type RepairReport,
  type RepairWorker,
  type StepOutcome,
  TableContext,
  type TableKitEvent,
} from "../../src/index.js";
import { Employee } from "./surface-fixtures.js";

const db = new TableContext({ store: new MemoryStore() });
declare const employee: Employee;

// db.eventually takes the four single-entity steps and resolves one outcome per step.
expectTypeOf(
  db.eventually((tx) => {
    expectTypeOf(tx).toEqualTypeOf<EventualTransaction>();
    tx.insert(employee);
    tx.upsert(employee, { mode: "merge" });
    tx.update(employee, { ifMatch: "*" });
    tx.delete(Employee, { department: "Sales", employeeId: 1 });
  }),
).toEqualTypeOf<Promise<EventualResult>>();
expectTypeOf<EventualResult["outcomes"]>().toEqualTypeOf<StepOutcome[]>();
expectTypeOf<StepOutcome>().toEqualTypeOf<"applied" | "alreadyDone" | "absent" | "superseded">();
db.eventually((tx) => {
  // @ts-expect-error an upsert's mode is "replace" or "merge"
  tx.upsert(employee, { mode: "patch" });
  // @ts-expect-error a delete's key has the entity's fields
  tx.delete(Employee, { nope: 1 });
});

// A refused step is named by index, operation and keys.
expectTypeOf<EventualStepError["index"]>().toEqualTypeOf<number>();
expectTypeOf<EventualStepError["op"]>().toEqualTypeOf<"insert" | "upsert" | "update" | "delete">();
expectTypeOf<EventualStepError["conflicts"][number]["rowKey"]>().toEqualTypeOf<string>();

// repair resolves counts per kind; the worker's interval is required and numbers only.
expectTypeOf(db.repair()).toEqualTypeOf<Promise<RepairReport>>();
expectTypeOf(db.repair({ minIntentAgeMs: 1000, entities: [Employee] })).toEqualTypeOf<
  Promise<RepairReport>
>();
// @ts-expect-error minIntentAgeMs is a number
db.repair({ minIntentAgeMs: "1s" });
expectTypeOf(db.startRepairWorker({ intervalMs: 1000 })).toEqualTypeOf<RepairWorker>();
expectTypeOf<RepairWorker["stop"]>().toEqualTypeOf<() => Promise<void>>();
// @ts-expect-error intervalMs is required
db.startRepairWorker({ minIntentAgeMs: 10 });

// Each pass of a worker is an event with its counts and errors.
declare const event: TableKitEvent;
if (event.type === "repair-pass") {
  expectTypeOf(event.counts).toEqualTypeOf<RepairReport>();
  expectTypeOf(event.errors).toEqualTypeOf<unknown[]>();
}
