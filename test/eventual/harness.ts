import { expect } from "vitest";
import { TableContext } from "../../src/index.js";
import type { StoredEntity } from "../../src/store/table-store.js";
import { uniquePrefix } from "../fixtures/context.js";
import { CrashStore } from "../indexes/crash-store.js";
import { rowsOf } from "../indexes/helpers.js";
import { RxEmployee } from "../indexes/models.js";
import type { StoreKind } from "../support/stores.js";
import { ArchivedEmployee, CurrentEmployee } from "./models.js";

export { MOVE } from "./move.js";

/** A context (retries off) over a crash-injecting store, with every table of these tests created. */
export async function eventualContext(kind: StoreKind) {
  const store = new CrashStore(kind.create());
  const prefix = uniquePrefix("ev");
  const db = new TableContext({ store, tablePrefix: prefix, retry: false });
  await db.ensureTables(CurrentEmployee, ArchivedEmployee, RxEmployee);
  store.reset();
  const fresh = () => new TableContext({ store, tablePrefix: prefix, retry: false });
  return { db, store, prefix, fresh, intents: `${prefix}TablekitIntents` };
}

/** Every intent row left (index and eventual, poisoned ones included). */
export function intentRows(db: TableContext, table: string): Promise<StoredEntity[]> {
  return rowsOf(db.store, table);
}

/** Expects no intent row at all in the intents table. */
export async function expectNoIntents(db: TableContext, table: string, where: string): Promise<void> {
  expect(
    (await intentRows(db, table)).map((row) => row.partitionKey),
    where,
  ).toEqual([]);
}
