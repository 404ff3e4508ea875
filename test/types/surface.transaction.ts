import { expectTypeOf } from "vitest";
import { MemoryStore, TableContext, type TransactionResult } from "../../src/index.js";
import { Employee } from "./surface-fixtures.js";

const db = new TableContext({ store: new MemoryStore() });
const employees = db.repository(Employee);
const e = employees.create({
  department: "Sales",
  employeeId: 1,
  firstName: "Jo",
  lastName: "Jones",
  age: 30,
  email: "jj@contoso.com",
});

// The callback may return anything: an expression body that returns the transaction compiles.
expectTypeOf(db.transaction((tx) => tx.insert(e))).toEqualTypeOf<Promise<TransactionResult>>();
db.transaction((tx) => tx.insert(e).delete(Employee, { department: "Sales", employeeId: 2 }));
db.transaction((tx) => {
  tx.upsert(e, { mode: "merge" });
});
db.transaction(async (tx) => {
  await Promise.resolve();
  tx.update(e, { ifMatch: "*" });
  return 42;
});
// @ts-expect-error the callback receives the transaction
db.transaction((tx: string) => tx);
