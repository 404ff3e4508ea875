import { expect } from "vitest";
import { TableContext } from "../../src/index.js";
import type { StoredEntity } from "../../src/store/table-store.js";
import { uniquePrefix } from "../fixtures/context.js";
import { CrashStore } from "../indexes/crash-store.js";
import { rowsOf } from "../indexes/helpers.js";
import { RxEmployee, rxEmployee, valuesOf } from "../indexes/models.js";
import type { StoreKind } from "../support/stores.js";
import { ArchivedEmployee, archived, CurrentEmployee, current } from "./models.js";

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

const DEPARTMENT = "Move";

/**
 * The guide's archive move plus an indexed update and a blind upsert, over four tables and five
 * partitions: what the crash tests interrupt at every request.
 */
export const MOVE = {
  async prepare(db: TableContext, id: number): Promise<void> {
    await db.repository(CurrentEmployee).insert(current(DEPARTMENT, id));
    await db.repository(RxEmployee).upsert(rxEmployee(DEPARTMENT, id, 1));
  },
  /** Reads what the move needs tracked (no request may fail here), then returns the move itself. */
  async plan(db: TableContext, id: number): Promise<() => Promise<unknown>> {
    const indexed = await db.repository(RxEmployee).getOrThrow({ department: DEPARTMENT, employeeId: id });
    return () =>
      db.eventually((tx) => {
        // An untracked key: the delete is conditional on the version read when the set is recorded.
        tx.delete(CurrentEmployee, { department: DEPARTMENT, employeeId: id });
        tx.insert(archived(current(DEPARTMENT, id)));
        tx.update(Object.assign(indexed, rxEmployee(DEPARTMENT, id, 2)));
        tx.upsert(current("Upserted", id, 2));
      });
  },
  async state(db: TableContext, id: number) {
    const e = await db.repository(CurrentEmployee).get({ department: DEPARTMENT, employeeId: id });
    const a = await db
      .repository(ArchivedEmployee)
      .get({ year: 2026, department: DEPARTMENT, employeeId: id });
    const r = await db.repository(RxEmployee).get({ department: DEPARTMENT, employeeId: id });
    const u = await db.repository(CurrentEmployee).get({ department: "Upserted", employeeId: id });
    return {
      current: e && { ...e },
      archived: a && { ...a },
      indexed: r && valuesOf(r),
      upserted: u && { ...u },
    };
  },
  before(id: number) {
    return {
      current: { ...current(DEPARTMENT, id) },
      archived: undefined,
      indexed: valuesOf(rxEmployee(DEPARTMENT, id, 1)),
      upserted: undefined,
    };
  },
  after(id: number) {
    return {
      current: undefined,
      archived: { ...archived(current(DEPARTMENT, id)) },
      indexed: valuesOf(rxEmployee(DEPARTMENT, id, 2)),
      upserted: { ...current("Upserted", id, 2) },
    };
  },
};

/** Expects no intent row at all in the intents table. */
export async function expectNoIntents(db: TableContext, table: string, where: string): Promise<void> {
  expect(
    (await intentRows(db, table)).map((row) => row.partitionKey),
    where,
  ).toEqual([]);
}
