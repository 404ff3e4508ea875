/**
 * Copies elsewhere under concurrent writers, each from its own context (as separate processes would),
 * with the interleaving forced request by request (a `HoldingStore` holds one writer's request until
 * another writer's whole write has resolved), not left to timing. Every case ends with the copies
 * exact without a repair: each index read finds the entity, and `verifyIndexes` is clean.
 */
import { describe, expect, it } from "vitest";
import { Column, Entity, TableContext } from "../../src/index.js";
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
