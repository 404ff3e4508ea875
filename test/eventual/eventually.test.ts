import { describe, expect, it } from "vitest";
import {
  Column,
  Entity,
  EntityAlreadyExistsError,
  EventualStepError,
  MemoryStore,
  TableContext,
  UniqueConstraintError,
  ValidationError,
} from "../../src/index.js";
import { stores, uniquePrefix } from "../fixtures/context.js";
import { expectNoDrift, rowsOf } from "../indexes/helpers.js";
import { RxEmployee, rxEmployee, valuesOf } from "../indexes/models.js";
import { rejectionOf } from "../support/rejection.js";
import { eventualContext, expectNoIntents } from "./harness.js";
import { ArchivedEmployee, archived, CurrentEmployee, current } from "./models.js";

const archiveKey = (e: CurrentEmployee) => ({
  year: 2026,
  department: e.department,
  employeeId: e.employeeId,
});

describe.each(stores)("db.eventually on %s", (_name, kind) => {
  it("moves an employee from the current table to the archive (the guide's example)", async () => {
    const { db, intents } = await eventualContext(kind);
    const e = await db.repository(CurrentEmployee).insert(current("Sales", 1));
    const result = await db.eventually((tx) => {
      tx.delete(CurrentEmployee, e);
      tx.insert(archived(e));
    });
    expect(result.outcomes).toEqual(["applied", "applied"]);
    expect(await db.repository(CurrentEmployee).get(e)).toBeUndefined();
    const moved = await db.repository(ArchivedEmployee).getOrThrow(archiveKey(e));
    expect({ ...moved }).toEqual({ ...archived(e) });
    await expectNoIntents(db, intents, "after the move");
  });

  it("creates the intents table on first use", async () => {
    const fresh = new TableContext({ store: kind.create(), tablePrefix: uniquePrefix("ev") });
    await fresh.ensureTables(CurrentEmployee, ArchivedEmployee);
    const e = current("First", 1);
    expect((await fresh.eventually((tx) => tx.insert(e))).outcomes).toEqual(["applied"]);
    expect((await fresh.repository(CurrentEmployee).getOrThrow(e)).name).toBe(e.name);
  });

  it("an upsert refused by a unique index value is a named conflict, the other steps applied", async () => {
    const { db, intents } = await eventualContext(kind);
    await db.repository(RxEmployee).insert(rxEmployee("Uq", 1, 1));
    // Another employee with the same (unique) email.
    const clash = Object.assign(rxEmployee("Uq", 2, 5), { email: rxEmployee("Uq", 1, 1).email });
    const error = await rejectionOf(
      db.eventually((tx) => {
        tx.upsert(clash);
        tx.insert(current("Uq", 3));
      }),
    );
    expect(error).toBeInstanceOf(EventualStepError);
    expect((error as EventualStepError).index).toBe(0);
    expect((error as EventualStepError).cause).toBeInstanceOf(UniqueConstraintError);
    expect(await db.repository(RxEmployee).get({ department: "Uq", employeeId: 2 })).toBeUndefined();
    expect(await db.repository(CurrentEmployee).get({ department: "Uq", employeeId: 3 })).toBeDefined();
    await expectNoDrift(db);
    await expectNoIntents(db, intents, "after a unique conflict");
  });

  it("a step refused by a conflict names the step; the other steps roll forward and the intent is removed", async () => {
    const { db, intents } = await eventualContext(kind);
    const e = await db.repository(CurrentEmployee).insert(current("Sales", 2));
    // Someone archived another version already: the insert must not overwrite it.
    const theirs = Object.assign(archived(e), { name: "theirs" });
    await db.repository(ArchivedEmployee).insert(theirs);
    const error = await rejectionOf(
      db.eventually((tx) => {
        tx.delete(CurrentEmployee, e);
        tx.insert(archived(e));
      }),
    );
    expect(error).toBeInstanceOf(EventualStepError);
    const stepError = error as EventualStepError;
    expect(stepError.index).toBe(1);
    expect(stepError.op).toBe("insert");
    expect(stepError.rowKey).toBe("Sales_000002");
    expect(stepError.conflicts).toHaveLength(1);
    expect(stepError.cause).toBeInstanceOf(EntityAlreadyExistsError);
    expect(stepError.message).toContain("step 1 (insert");
    expect(await db.repository(CurrentEmployee).get(e)).toBeUndefined();
    expect((await db.repository(ArchivedEmployee).getOrThrow(archiveKey(e))).name).toBe("theirs");
    await expectNoIntents(db, intents, "after a conflict");
  });

  it("an update is conditional on the instance's tracked ETag, and tracks the new one", async () => {
    const { db } = await eventualContext(kind);
    const employees = db.repository(CurrentEmployee);
    await employees.insert(current("Sales", 3));
    const mine = await employees.getOrThrow({ department: "Sales", employeeId: 3 });
    const other = await employees.getOrThrow({ department: "Sales", employeeId: 3 });
    await db.eventually((tx) => tx.update(Object.assign(mine, { name: "first" })));
    // The same instance goes on: its ETag was tracked by the step.
    await db.eventually((tx) => tx.update(Object.assign(mine, { name: "second" })));
    const stale = await rejectionOf(
      db.eventually((tx) => tx.update(Object.assign(other, { name: "stale" }))),
    );
    expect(stale).toBeInstanceOf(EventualStepError);
    expect((stale as EventualStepError).op).toBe("update");
    expect((await employees.getOrThrow(mine)).name).toBe("second");
  });

  it("a delete of an absent entity is done; an upsert creates or replaces", async () => {
    const { db } = await eventualContext(kind);
    await db.repository(CurrentEmployee).insert(current("Sales", 5));
    const result = await db.eventually((tx) => {
      tx.delete(CurrentEmployee, { department: "Sales", employeeId: 404 });
      tx.upsert(current("Sales", 5, 2));
      tx.upsert(current("Sales", 6, 2), { mode: "merge" });
    });
    expect(result.outcomes).toEqual(["absent", "applied", "applied"]);
    expect(
      (await db.repository(CurrentEmployee).getOrThrow({ department: "Sales", employeeId: 5 })).name,
    ).toBe("N5v2");
    expect(
      (await db.repository(CurrentEmployee).getOrThrow({ department: "Sales", employeeId: 6 })).name,
    ).toBe("N6v2");
  });

  it("moves an indexed entity's copies with it", async () => {
    const { db, intents } = await eventualContext(kind);
    const employees = db.repository(RxEmployee);
    await employees.insert(rxEmployee("Ix", 1, 1));
    const one = await employees.getOrThrow({ department: "Ix", employeeId: 1 });
    await db.eventually((tx) => {
      tx.update(Object.assign(one, rxEmployee("Ix", 1, 2)));
      tx.insert(rxEmployee("Ix", 2, 4));
      tx.insert(archived(current("Ix", 1)));
    });
    await db.eventually((tx) => tx.delete(RxEmployee, { department: "Ix", employeeId: 2 }));
    expect(valuesOf(await employees.getOrThrow({ department: "Ix", employeeId: 1 }))).toEqual(
      valuesOf(rxEmployee("Ix", 1, 2)),
    );
    expect(await employees.get({ department: "Ix", employeeId: 2 })).toBeUndefined();
    await expectNoDrift(db);
    await expectNoIntents(db, intents, "after indexed steps");
  });

  it("a replay never overwrites a newer write by someone else", async () => {
    const { db, store, fresh, intents } = await eventualContext(kind);
    const employees = db.repository(CurrentEmployee);
    await employees.insert(current("Race", 1));
    const tracked = await employees.getOrThrow({ department: "Race", employeeId: 1 });
    // The writer dies right after recording its intent (request 1 reads the upsert's version, 2 records).
    store.arm(3, "crash");
    await rejectionOf(
      db.eventually((tx) => {
        tx.update(Object.assign(tracked, { name: "from the intent" }));
        tx.upsert(current("Race", 2, 1));
        tx.insert(current("Race", 3, 1));
      }),
    );
    store.reset();
    // Newer writes by others, after the intent was recorded.
    const other = fresh();
    const theirs = await other.repository(CurrentEmployee).getOrThrow({ department: "Race", employeeId: 1 });
    await other.repository(CurrentEmployee).update(Object.assign(theirs, { name: "newer" }));
    await other.repository(CurrentEmployee).upsert(Object.assign(current("Race", 2, 1), { name: "newer" }));
    await other.repository(CurrentEmployee).insert(Object.assign(current("Race", 3, 1), { name: "newer" }));
    const report = await fresh().repair();
    expect(report.eventually).toMatchObject({ replayed: 1, applied: 0, conflicts: 2, superseded: 1 });
    for (const employeeId of [1, 2, 3])
      expect(
        (await other.repository(CurrentEmployee).getOrThrow({ department: "Race", employeeId })).name,
      ).toBe("newer");
    await expectNoIntents(db, intents, "after the replay");
  });

  it("records typed values losslessly: a replay from the record alone writes the same row", async () => {
    const { db, store, fresh, prefix } = await eventualContext(kind);
    const e = current("Types", 7);
    e.salary = -0.1;
    e.badge = 2n ** 62n;
    store.arm(2, "crash"); // the intent is recorded, then the insert crashes
    await rejectionOf(db.eventually((tx) => tx.insert(e)));
    store.reset();
    const direct = fresh();
    expect((await direct.repair()).eventually).toMatchObject({ replayed: 1, applied: 1 });
    const [row] = await rowsOf(db.store, `${prefix}EvCurrent`, "PartitionKey eq 'Types'");
    const back = await direct.repository(CurrentEmployee).getOrThrow(e);
    expect({ ...back }).toEqual({ ...e });
    expect(row?.badge).toBe(2n ** 62n);
  });
});

describe("db.eventually validates the whole set before any request", () => {
  const withContext = async (run: (db: TableContext) => Promise<unknown>) => {
    const { db, store } = await eventualContext(
      stores[0]?.[1] ?? { name: "memory", create: () => null as never },
    );
    store.reset();
    const error = await rejectionOf(run(db));
    expect(store.requests).toBe(0);
    return error as ValidationError;
  };

  it("rejects an empty set, a repeated entity, an update without an ETag and a set too large for one intent", async () => {
    expect((await withContext((db) => db.eventually(() => undefined))).rule).toBe("eventual-empty");
    const repeated = await withContext((db) =>
      db.eventually((tx) => {
        tx.insert(current("V", 1));
        tx.upsert(current("V", 1, 2));
      }),
    );
    expect(repeated.rule).toBe("eventual-duplicate");
    expect(repeated.message).toContain("step 1");
    const untracked = await withContext((db) => db.eventually((tx) => tx.update(current("V", 1))));
    expect(untracked.rule).toBe("etag-required");
    const big = await withContext((db) =>
      db.eventually((tx) => {
        for (let i = 0; i < 40; i++) tx.insert(Object.assign(current("V", i), { name: "x".repeat(30_000) }));
      }),
    );
    expect(big).toBeInstanceOf(ValidationError);
    expect(big.rule).toBe("eventual-size");
    const badValue = await withContext((db) =>
      db.eventually((tx) => {
        tx.insert(current("V", 1));
        tx.insert(Object.assign(current("V", 2), { salary: "not a number" }));
      }),
    );
    expect(badValue).toBeInstanceOf(ValidationError);
  });

  it("takes a wide entity as a step: its repository writes its rows whole", async () => {
    @Entity({ table: "EvWide", partitionKey: "{p}", rowKey: "{r}", wide: true })
    class WideRow {
      @Column({ type: "String" }) p!: string;
      @Column({ type: "String" }) r!: string;
      @Column({ type: "String" }) text?: string;
    }
    const { db } = await eventualContext(stores[0]?.[1] ?? { name: "memory", create: () => null as never });
    await db.ensureTables(WideRow);
    const wide = Object.assign(new WideRow(), { p: "a", r: "b", text: "é".repeat(30_000) });
    await db.eventually((tx) => tx.insert(wide));
    expect((await db.repository(WideRow).get({ p: "a", r: "b" }))?.text).toBe(wide.text);
    await db.eventually((tx) => tx.delete(WideRow, { p: "a", r: "b" }));
    expect(await db.repository(WideRow).get({ p: "a", r: "b" })).toBeUndefined();
  });

  it("checks the backend's own limits (the Cosmos DB Table API's 255-byte RowKey)", async () => {
    const db = new TableContext({ store: new MemoryStore({ flavor: "cosmos" }) });
    const error = await rejectionOf(
      db.eventually((tx) => {
        tx.insert(current("V", 1));
        tx.insert(archived(Object.assign(current("V", 2), { department: "d".repeat(300) })));
      }),
    );
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).rule).toBe("backend-key-size");
    expect((error as ValidationError).message).toContain("eventual step 1");
  });
});
