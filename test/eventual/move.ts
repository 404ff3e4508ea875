// Free of vitest and of the package index: the SIGKILL test's child process (crash-mover.ts) runs it too.
import type { EventualTransaction } from "../../src/repository/facade/eventual/eventual-transaction.js";
import type { TableContext } from "../../src/repository/facade/table-context.js";
import { RxEmployee, rxEmployee, valuesOf } from "../indexes/models.js";
import { ArchivedEmployee, archived, CurrentEmployee, current } from "./models.js";

const DEPARTMENT = "Move";

/** The employee the move takes out of the current table. */
export function movedEmployee(id: number): CurrentEmployee {
  return current(DEPARTMENT, id);
}

/**
 * The guide's archive move plus an indexed update and a blind upsert, over four tables and five
 * partitions: what the crash tests interrupt at every request.
 */
export const MOVE = {
  async prepare(db: TableContext, id: number): Promise<void> {
    await db.repository(CurrentEmployee).insert(current(DEPARTMENT, id));
    await db.repository(RxEmployee).upsert(rxEmployee(DEPARTMENT, id, 1));
  },
  /**
   * Reads what the move needs tracked (no request may fail here), then returns the move itself;
   * `also` adds steps of its own after the move's four.
   */
  async plan(
    db: TableContext,
    id: number,
    also?: (tx: EventualTransaction) => void,
  ): Promise<() => Promise<unknown>> {
    const indexed = await db.repository(RxEmployee).getOrThrow({ department: DEPARTMENT, employeeId: id });
    return () =>
      db.eventually((tx) => {
        // An untracked key: the delete is conditional on the version read when the set is recorded.
        tx.delete(CurrentEmployee, { department: DEPARTMENT, employeeId: id });
        tx.insert(archived(current(DEPARTMENT, id)));
        tx.update(Object.assign(indexed, rxEmployee(DEPARTMENT, id, 2)));
        tx.upsert(current("Upserted", id, 2));
        also?.(tx);
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
