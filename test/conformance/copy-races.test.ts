/**
 * Copies elsewhere under concurrent writers, each from its own context (as separate processes would),
 * with the interleaving forced request by request (a `HoldingStore` holds one writer's request until
 * another writer's whole write has resolved), not left to timing. Every case ends with the copies
 * exact without a repair: each index read finds the entity, and `verifyIndexes` is clean.
 */
import { describe, expect, it } from "vitest";
import { Column, ConcurrencyError, Entity, TableContext, UniqueConstraintError } from "../../src/index.js";
import { freshContext, stores } from "../fixtures/context.js";
import { employee, expectExact, RsEmployee } from "../summaries-remote/models.js";
import { HoldingStore } from "../support/holding-store.js";
import type { StoreRequest } from "../support/store-wrapper.js";

/** One of each kind of copy kept in another table. */
@Entity({
  table: "CrEmployees",
  type: "CrEmployee",
  partitionKey: "{department}",
  rowKey: "empid_{employeeId:6}",
  indexes: {
    // A plain (non-unique) copy.
    byLastName: {
      table: "CrEmployeesByName",
      partitionKey: "{lastName}",
      rowKey: "{department}_{employeeId:6}",
      unique: false,
    },
    // A unique value, claimed before the entity is written.
    byEmail: { table: "CrEmployeesByEmail", partitionKey: "emails", rowKey: "{email}" },
    // An index entity: one row per value listing its members.
    byCity: { list: true, table: "CrEmployeesByCity", partitionKey: "{city}", rowKey: "city" },
  },
})
class CrEmployee {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "String" }) lastName!: string;
  @Column({ type: "String" }) email!: string;
  @Column({ type: "String" }) city!: string;
}

/** Employee Sales/5 with the values of one "generation" (each index moves with it). */
function sales5(generation: number): CrEmployee {
  return Object.assign(new CrEmployee(), {
    department: "Sales",
    employeeId: 5,
    lastName: `N${generation}`,
    email: `e${generation}@x.com`,
    city: `C${generation}`,
  });
}

const KEY = { department: "Sales", employeeId: 5 };

describe.each(stores)("copies elsewhere under racing writers, on %s", (_name, kind) => {
  /** A shared store with a holding door, the context that checks, and a factory of writers' own contexts. */
  async function setup() {
    const { db, counter, prefix } = await freshContext(kind, [CrEmployee]);
    const holding = new HoldingStore(counter);
    // Each writer has its own context (as separate processes would: nothing tracked is shared).
    const context = () => new TableContext({ store: holding, tablePrefix: prefix });
    const writer = () => context().repository(CrEmployee);
    const copyTables = ["CrEmployeesByName", "CrEmployeesByEmail", "CrEmployeesByCity"].map(
      (t) => prefix + t,
    );
    const onCopies = (request: StoreRequest) => copyTables.includes(request.table);
    return { db, holding, context, writer, onCopies };
  }

  /** Each index finds Sales/5 under the given generation's values, and nothing is drifted. */
  async function expectCopiesOf(db: TableContext, generation: number) {
    const employees = db.repository(CrEmployee);
    const { lastName, email, city } = sales5(generation);
    const found = (rows: CrEmployee[]) => rows.map((e) => `${e.department}/${e.employeeId}`);
    // All three read before comparing: a failure names every kind of copy that is wrong.
    expect({
      byLastName: found(await employees.index("byLastName").find({ lastName }).toArray()),
      byEmail: found(await employees.index("byEmail").find({ email }).toArray()),
      byCity: found(await employees.index("byCity").find({ city }).toArray()),
    }).toEqual({ byLastName: ["Sales/5"], byEmail: ["Sales/5"], byCity: ["Sales/5"] });
    expect(await db.verifyIndexes(CrEmployee)).toEqual({ missing: [], stale: [], orphans: [] });
  }

  it("a delete's cleanup that lands after the entity was inserted again leaves the new version's copies", async () => {
    const { db, holding, writer, onCopies } = await setup();
    await db.repository(CrEmployee).insert(sales5(1));
    // The interleaving:
    // 1. D reads Sales/5 (copies N1, e1, C1), records its intent, deletes the entity: committed.
    // 2. D's first request on a copy table (the removal of an old copy) is held at the door.
    const cleanup = holding.hold((request) => onCopies(request) && request.method !== "getEntity");
    const deleting = writer().delete(KEY);
    await cleanup.reached;
    // 3. I inserts Sales/5 again with the same values, from its own context: the entity, its copies
    //    (the unique e1 found held by this very entity and refreshed), the list membership; its
    //    settle read finds its own version. I resolves.
    await writer().insert(sales5(1));
    // 4. D's removals of N1, e1 and the C1 membership land now, after I re-created them; D resolves.
    cleanup.release();
    await expect(deleting).resolves.toBe(true);
    expect(await db.repository(CrEmployee).get(KEY)).toMatchObject({ lastName: "N1" });
    await expectCopiesOf(db, 1);
  });

  it("a delete's late cleanup of a unique copy the entity written again claimed leaves it: no second holder", async () => {
    const { db, holding, writer } = await setup();
    await db.repository(CrEmployee).insert(sales5(1));
    // The interleaving:
    // 1. D reads Sales/5, records its intent, deletes the entity: committed. Its removal of N1 lands;
    //    its first request on the unique copy e1 is held at the door.
    const uniqueCleanup = holding.hold((request) => request.table.endsWith("CrEmployeesByEmail"));
    const deleting = writer().delete(KEY);
    await uniqueCleanup.reached;
    // 2. I inserts Sales/5 again with the same values, from its own context: its claim of e1 finds
    //    the old copy, sees it is Sales/5's and takes it over; its copies are written, its settle read
    //    finds its own version. I resolves.
    await writer().insert(sales5(1));
    // 3. D's removal of e1 goes on now; D's next read of the entity (before its settle read could
    //    restore anything) is held.
    const settle = holding.hold(
      (request) => request.method === "getEntity" && request.table.endsWith("CrEmployees"),
    );
    uniqueCleanup.release();
    await settle.reached;
    // 4. Meanwhile Sales/7 is inserted with e1@x.com: Sales/5 holds that value, so it is refused.
    await expect(writer().insert(seven())).rejects.toBeInstanceOf(UniqueConstraintError);
    settle.release();
    await expect(deleting).resolves.toBe(true);
    expect(await db.repository(CrEmployee).get({ department: "Sales", employeeId: 7 })).toBeUndefined();
    await expectCopiesOf(db, 1);
  });

  it("a list index has no holder to race for: another entity joining the value while a delete's late removal is unsettled keeps both members", async () => {
    const { db, holding, writer, onCopies } = await setup();
    await db.repository(CrEmployee).insert(sales5(1));
    // 1. D deletes Sales/5 (committed); its first request on a copy table is held.
    const cleanup = holding.hold((request) => onCopies(request) && request.method !== "getEntity");
    const deleting = writer().delete(KEY);
    await cleanup.reached;
    // 2. I inserts Sales/5 again (city C1): it is a member of C1 again; I resolves.
    await writer().insert(sales5(1));
    // 3. D's removals land (Sales/5 taken out of C1 among them); D's settle read is held.
    const settle = holding.hold(
      (request) => request.method === "getEntity" && request.table.endsWith("CrEmployees"),
    );
    cleanup.release();
    await settle.reached;
    // 4. Sales/8 joins C1 in that window (a list value is not unique: nothing to refuse).
    await writer().insert(
      Object.assign(new CrEmployee(), {
        department: "Sales",
        employeeId: 8,
        lastName: "L8",
        email: "e8@x.com",
        city: "C1",
      }),
    );
    // 5. D's settle read finds Sales/5 written again and puts it back in C1, next to Sales/8.
    settle.release();
    await expect(deleting).resolves.toBe(true);
    const members = await db.repository(CrEmployee).index("byCity").find({ city: "C1" }).toArray();
    expect(members.map((e) => `${e.department}/${e.employeeId}`).sort()).toEqual(["Sales/5", "Sales/8"]);
    expect(await db.verifyIndexes(CrEmployee)).toEqual({ missing: [], stale: [], orphans: [] });
  });

  /** Employee Sales/7 holding Sales/5's generation-1 email (its other values its own). */
  const seven = () => Object.assign(sales5(1), { employeeId: 7, lastName: "L7", city: "C7" });
  const isEmailCopy = (email: string) => (request: StoreRequest) =>
    request.table.endsWith("CrEmployeesByEmail") && request.identity.includes(email);

  /** How the entity is written again: alone, or in a transaction with another entity's insert. */
  const insertions = [
    [
      "an insert",
      (db: TableContext) =>
        db
          .repository(CrEmployee)
          .insert(sales5(1))
          .then(() => {}),
    ],
    [
      "a two-insert transaction",
      (db: TableContext) =>
        db.transaction((tx) => {
          tx.insert(sales5(1));
          tx.insert(
            Object.assign(new CrEmployee(), {
              department: "Sales",
              employeeId: 6,
              lastName: "M6",
              email: "six@x.com",
              city: "C6",
            }),
          );
        }),
    ],
  ] as const;

  it.each(insertions)(
    "a delete's late cleanup of a unique value the entity written again (%s) holds between its claim and its copies leaves it",
    async (_how, insertAgain) => {
      const { db, holding, context, writer } = await setup();
      await db.repository(CrEmployee).insert(sales5(1));
      // The interleaving:
      // 1. D deletes Sales/5 (committed); its first request on the unique copy e1 is held.
      const uniqueCleanup = holding.hold((request) => request.table.endsWith("CrEmployeesByEmail"));
      const deleting = writer().delete(KEY);
      await uniqueCleanup.reached;
      // 2. I writes Sales/5 again with e1: its claim finds Sales/5's old copy and takes it over as
      //    its own claim, I commits; its first write of the e1 copy after the commit is held.
      //    (The takeover is a write of that copy too: the hold lets requests pass until the commit has.)
      let committed = false;
      const copyAfterCommit = holding.hold((request) => {
        committed ||= request.method === "submitTransaction" && request.table.endsWith("CrEmployees");
        return committed && ["upsert", "update"].includes(request.method) && isEmailCopy("e1@x.com")(request);
      });
      const inserting = insertAgain(context());
      await copyAfterCommit.reached;
      // 3. D's cleanup of e1 goes on; D's settle read (which could restore the copy) is held.
      const settle = holding.hold(
        (request) => request.method === "getEntity" && request.table.endsWith("CrEmployees"),
      );
      uniqueCleanup.release();
      await settle.reached;
      // 4. Sales/7 claims e1 meanwhile: the value is I's claim, so it is refused.
      await expect(writer().insert(seven())).rejects.toBeInstanceOf(UniqueConstraintError);
      settle.release();
      await expect(deleting).resolves.toBe(true);
      copyAfterCommit.release();
      await inserting;
      expect(await db.repository(CrEmployee).get({ department: "Sales", employeeId: 7 })).toBeUndefined();
      await expectCopiesOf(db, 1);
    },
  );

  it("a claim's takeover of the entity's own old copy is conditional: a value freed and claimed by another entity meanwhile is refused", async () => {
    const { db, holding, writer } = await setup();
    await db.repository(CrEmployee).insert(sales5(1));
    // The interleaving:
    // 1. D deletes Sales/5 (committed); its first request on the unique copy e1 is held.
    const uniqueCleanup = holding.hold((request) => request.table.endsWith("CrEmployeesByEmail"));
    const deleting = writer().delete(KEY);
    await uniqueCleanup.reached;
    // 2. I inserts Sales/5 again with e1: its insert of the claim finds the old copy (Sales/5's, as
    //    its read shows); its takeover of that copy is held.
    // (Its first write of e1 after the insert; an unconditional upsert would be held here as well.)
    const takeover = holding.hold(
      (request) => ["update", "upsert"].includes(request.method) && isEmailCopy("e1@x.com")(request),
    );
    const inserting = writer().insert(sales5(1));
    await takeover.reached;
    // 3. D's cleanup removes the old copy (the version it deleted made it); D resolves.
    uniqueCleanup.release();
    await expect(deleting).resolves.toBe(true);
    // 4. Sales/7 claims the free e1 and is written.
    await writer().insert(seven());
    // 5. I's takeover goes on: the copy it read is gone, Sales/7 holds e1 now: I is refused.
    takeover.release();
    await expect(inserting).rejects.toBeInstanceOf(UniqueConstraintError);
    expect(await db.repository(CrEmployee).get(KEY)).toBeUndefined();
    const employees = db.repository(CrEmployee);
    const holders = await employees.index("byEmail").find({ email: "e1@x.com" }).toArray();
    expect(holders.map((e) => `${e.department}/${e.employeeId}`)).toEqual(["Sales/7"]);
    expect(await db.verifyIndexes(CrEmployee)).toEqual({ missing: [], stale: [], orphans: [] });
  });

  it("a write that keeps a unique value writes its copy after the commit only over its own: a value freed and claimed by another entity meanwhile stays that entity's", async () => {
    const { db, holding, writer } = await setup();
    await db.repository(CrEmployee).insert(sales5(1));
    // The interleaving (issue 34: the kept value is not claimed again, its copy is written after the commit):
    // 1. F and W each read Sales/5 (generation 1), in their own contexts.
    const f = writer();
    const w = writer();
    const forF = (await f.get(KEY)) as CrEmployee;
    const forW = (await w.get(KEY)) as CrEmployee;
    // 2. F records its intent for a rename (N1 → N8, e1 kept); its commit is held.
    const fCommit = holding.hold(
      (request) => request.method === "submitTransaction" && request.table.endsWith("CrEmployees"),
    );
    const renamingF = f.update(Object.assign(forF, { lastName: "N8" }));
    await fCommit.reached;
    // 3. W renames Sales/5 (N1 → N9) keeping e1: committed; its first request on the e1 copy after
    //    the commit is held.
    const wCopy = holding.hold(isEmailCopy("e1@x.com"));
    const renamingW = w.update(Object.assign(forW, { lastName: "N9" }));
    await wCopy.reached;
    // 4. F's commit goes on and is refused (W's version is stored): F's abandonment reconciles the copies
    //    with that version, so the e1 copy is stamped with W's version.
    fCommit.release();
    await expect(renamingF).rejects.toBeInstanceOf(ConcurrencyError);
    // 5. T moves Sales/5 to generation 2 (a read, then a write conditional on W's version): its cleanup
    //    removes the e1 copy (the version it replaced made it). e1 is free.
    await writer().upsert(sales5(2));
    // 6. Sales/7 claims the free e1 and is written.
    await writer().insert(seven());
    // 7. W's write of the e1 copy goes on: it must not take the value back from Sales/7.
    wCopy.release();
    await renamingW;
    const employees = db.repository(CrEmployee);
    const holders = await employees.index("byEmail").find({ email: "e1@x.com" }).toArray();
    expect(holders.map((e) => `${e.department}/${e.employeeId}`)).toEqual(["Sales/7"]);
    // 8. Sales/8 with e1 is refused: Sales/7 holds it (a second holder otherwise).
    const eight = Object.assign(sales5(1), { employeeId: 8, lastName: "L8", city: "C8" });
    await expect(writer().insert(eight)).rejects.toBeInstanceOf(UniqueConstraintError);
    await expectCopiesOf(db, 2);
  });

  it("a claimed value's copy after the commit is written on the claim's ETag: a newer write that took the value over keeps it, and a late cleanup cannot free it", async () => {
    const { db, holding, writer } = await setup();
    await db.repository(CrEmployee).insert(sales5(0));
    const readBy = async () => {
      const repository = writer();
      return { repository, entity: (await repository.get(KEY)) as CrEmployee };
    };
    const entityTable = (request: StoreRequest) => request.table.endsWith("CrEmployees");
    const settleRead = (request: StoreRequest) => request.method === "getEntity" && entityTable(request);
    // The interleaving:
    // 1. W moves Sales/5 from generation 0 to 1: it claims e1, commits; its write of the e1 copy after
    //    the commit is held.
    const w = await readBy();
    let committed = false;
    const wCopy = holding.hold((request) => {
      committed ||= request.method === "submitTransaction" && entityTable(request);
      return committed && request.method !== "getEntity" && isEmailCopy("e1@x.com")(request);
    });
    const movingW = w.repository.update(Object.assign(w.entity, sales5(1)));
    await wCopy.reached;
    // 2. T moves it on to generation 2 (conditional on W's version); its read of the e1 copy (its cleanup
    //    of the value it left) is held.
    const t = await readBy();
    const tCleanup = holding.hold(
      (request) => request.method === "getEntity" && isEmailCopy("e1@x.com")(request),
    );
    const movingT = t.repository.update(Object.assign(t.entity, sales5(2)));
    await tCleanup.reached;
    // 3. U moves it back to generation 1: its claim finds W's claim (Sales/5's copy) and takes it over,
    //    U commits, its copy is stamped with its version; U resolves.
    const u = await readBy();
    await u.repository.update(Object.assign(u.entity, sales5(1)));
    // 4. W's write of the e1 copy goes on (W's settle read is held): it must not stamp U's copy as W's.
    const wSettle = holding.hold(settleRead);
    wCopy.release();
    await wSettle.reached;
    // 5. T's cleanup goes on (T's settle read is held): the copy is not the one W's version made.
    const tSettle = holding.hold(settleRead);
    tCleanup.release();
    await tSettle.reached;
    // 6. Sales/7 claims e1: U's version of Sales/5 holds it.
    await expect(writer().insert(seven())).rejects.toBeInstanceOf(UniqueConstraintError);
    wSettle.release();
    tSettle.release();
    await Promise.all([movingW, movingT]);
    expect(await db.repository(CrEmployee).get({ department: "Sales", employeeId: 7 })).toBeUndefined();
    await expectCopiesOf(db, 1);
  });

  /** How the older move is written: alone, or in a transaction with another entity's upsert. */
  const moves = [
    ["an upsert", (db: TableContext) => db.repository(CrEmployee).upsert(sales5(2))],
    [
      "a two-upsert transaction",
      (db: TableContext) =>
        db.transaction((tx) => {
          tx.upsert(sales5(2));
          tx.upsert(
            Object.assign(new CrEmployee(), {
              department: "Sales",
              employeeId: 6,
              lastName: "M6",
              email: "six@x.com",
              city: "C6",
            }),
          );
        }),
    ],
  ] as const;

  it.each(moves)(
    "a move's cleanup (%s) that lands after the entity moved back leaves the newer version's copies",
    async (_how, move) => {
      const { db, holding, context } = await setup();
      await db.repository(CrEmployee).insert(sales5(1));
      // The interleaving:
      // 1. W moves Sales/5 from generation 1 to 2: intent, claim of e2, entity committed.
      // 2. W's first step after the commit for Sales/5 (its upsert of the N2 copy) is held; its
      //    removals of N1 and e1 and its list moves (C1 → C2) wait behind it.
      const after = holding.hold(
        (request) =>
          request.method === "upsert" &&
          request.table.endsWith("CrEmployeesByName") &&
          request.partitionKey === "N2",
      );
      const moving = move(context());
      await after.reached;
      // 3. F moves it back to generation 1 (a read, then a write conditional on W's version): its
      //    copies are written (N1 and e1 still there, refreshed; the C1 membership still there), the
      //    N2 copy and e2 claim removed, and its settle read finds its own version. F resolves.
      await context().repository(CrEmployee).upsert(sales5(1));
      // 4. W's stale steps land now: the N2 copy written, N1 and e1 removed, Sales/5 removed from C1
      //    and added to C2; W resolves.
      after.release();
      await moving;
      expect(await db.repository(CrEmployee).get(KEY)).toMatchObject({ lastName: "N1" });
      await expectCopiesOf(db, 1);
    },
  );
});

describe.each(stores)("a remote summary's mirror under racing writers, on %s", (_name, kind) => {
  it("a mirror that lands after a newer one of the same source does not move the summary back", async () => {
    const { db, counter, prefix } = await freshContext(kind, [RsEmployee]);
    const holding = new HoldingStore(counter);
    const writer = () => new TableContext({ store: holding, tablePrefix: prefix }).repository(RsEmployee);
    await db.repository(RsEmployee).insert(employee("eu", "sales", 1, 100));
    // 1. W inserts eu/sales/2: the local summary row rides in its transaction; its first write of a
    //    contribution row (the mirror of that local row) is held.
    const mirror = holding.hold(
      (request) => request.table === `${prefix}RsStats` && request.method !== "getEntity",
    );
    const inserting = writer().insert(employee("eu", "sales", 2, 20));
    await mirror.reached;
    // 2. F inserts eu/sales/3 in the same partition: its mirrors carry the local row's newer version.
    await writer().insert(employee("eu", "sales", 3, 3));
    // 3. W's older mirror lands now: its condition fails, it reads the newer one and writes nothing.
    mirror.release();
    await inserting;
    expect(await db.repository(RsEmployee).summary("global", {})).toEqual({
      employees: 3,
      totalSalary: 123,
      totalBonus: 0n,
    });
    await expectExact(db, prefix, ["eu"]);
  });
});
