import { expect } from "vitest";
import type { TableContext } from "../../src/index.js";
import type { CrashMode, CrashStore } from "./crash-store.js";
import { expectNoDrift, rowsOf } from "./helpers.js";
import { RxEmployee, rxEmployee, valuesOf } from "./models.js";

/** One indexed write: the state before (absent or a version), the write, and the state after. */
export interface WriteCase {
  name: string;
  /** Version stored before the write; `undefined`: the entity does not exist. */
  before: number | undefined;
  /** Version after the write; `undefined`: deleted. */
  after: number | undefined;
  run(db: TableContext, id: number): Promise<unknown>;
}

const DEPARTMENT = "Crash";

/** The writes every crash point is tried on. */
export const WRITE_CASES: readonly WriteCase[] = [
  {
    name: "insert",
    before: undefined,
    after: 1,
    run: (db, id) => db.repository(RxEmployee).insert(rxEmployee(DEPARTMENT, id, 1)),
  },
  {
    // Every indexed value moves, the sparse copy moves to another key.
    name: "update changing indexed values",
    before: 1,
    after: 2,
    run: async (db, id) => {
      const employees = db.repository(RxEmployee);
      const e = await employees.getOrThrow({ department: DEPARTMENT, employeeId: id });
      return employees.update(Object.assign(e, rxEmployee(DEPARTMENT, id, 2)));
    },
  },
  {
    // Remote copies keep their keys (same lastName and age), only their content changes.
    name: "update keeping the remote keys",
    before: 1,
    after: 31,
    run: async (db, id) => {
      const employees = db.repository(RxEmployee);
      const e = await employees.getOrThrow({ department: DEPARTMENT, employeeId: id });
      return employees.update(Object.assign(e, rxEmployee(DEPARTMENT, id, 31)));
    },
  },
  {
    // The sparse copy goes away.
    name: "update dropping the sparse copy",
    before: 2,
    after: 3,
    run: async (db, id) => {
      const employees = db.repository(RxEmployee);
      const e = await employees.getOrThrow({ department: DEPARTMENT, employeeId: id });
      e.badge = undefined;
      return employees.update(Object.assign(e, rxEmployee(DEPARTMENT, id, 3)));
    },
  },
  {
    // A blind upsert over an existing entity (its first attempt loses the race and re-reads).
    name: "blind upsert",
    before: 3,
    after: 4,
    run: (db, id) => db.repository(RxEmployee).upsert(rxEmployee(DEPARTMENT, id, 4)),
  },
  {
    name: "delete",
    before: 1,
    after: undefined,
    run: (db, id) => db.repository(RxEmployee).delete({ department: DEPARTMENT, employeeId: id }),
  },
];

/** How many requests a write makes when nothing fails. */
export async function requestsOf(
  db: TableContext,
  store: CrashStore,
  write: WriteCase,
  id: number,
): Promise<number> {
  await prepare(db, write, id);
  store.reset();
  await write.run(db, id);
  const count = store.requests;
  store.reset();
  return count;
}

/** Brings entity `id` to the state before the write. */
export async function prepare(db: TableContext, write: WriteCase, id: number): Promise<void> {
  if (write.before !== undefined)
    await db.repository(RxEmployee).upsert(rxEmployee(DEPARTMENT, id, write.before));
}

/** What one crash point did: whether the write reported success, and what the repair cost. */
export interface CrashOutcome {
  succeeded: boolean;
  repairRequests: number;
  repair: Awaited<ReturnType<TableContext["repairIndexes"]>>;
}

/**
 * Runs `write` on entity `id` with request `at` failing as `mode` says, then repairs (no scan) in
 * a fresh context and checks: no intent left, and the entity is exactly as before or exactly as
 * after the write, with its copies (unless `verify` is off) exactly right.
 */
export async function crashAt(
  db: TableContext,
  fresh: () => TableContext,
  store: CrashStore,
  intentsTable: string,
  write: WriteCase,
  id: number,
  at: number,
  mode: CrashMode,
  verify = true,
): Promise<CrashOutcome> {
  await prepare(db, write, id);
  store.arm(at, mode);
  let succeeded = true;
  try {
    await write.run(db, id);
  } catch {
    succeeded = false;
  }
  store.reset();
  // After a restart: nothing of the crashed process is left but what it wrote.
  const restarted = fresh();
  const repair = await restarted.repairIndexes(RxEmployee);
  const repairRequests = store.requests;
  const where = `${write.name}, ${mode} at request ${at}`;
  expect(await rowsOf(restarted.store, intentsTable), where).toEqual([]);
  expect(repair.poisoned, where).toBe(0);
  if (verify) await expectNoDrift(restarted);
  const stored = await restarted.repository(RxEmployee).get({ department: DEPARTMENT, employeeId: id });
  const seen = stored ? valuesOf(stored) : undefined;
  const expected = (version: number | undefined) =>
    version === undefined ? undefined : valuesOf(rxEmployee(DEPARTMENT, id, version));
  if (succeeded) expect(seen, where).toEqual(expected(write.after));
  else expect([expected(write.before), expected(write.after)], where).toContainEqual(seen);
  return { succeeded, repairRequests, repair };
}
