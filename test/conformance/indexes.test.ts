import { TableClient } from "@azure/data-tables";
import { describe, expect, inject, it } from "vitest";
import { Column, Entity, etagOf, TransactionError, UniqueConstraintError } from "../../src/index.js";
import { freshContext, stores } from "../fixtures/context.js";
import { azuriteSelected } from "../support/stores.js";

/** API.md's employee with both index kinds. */
@Entity({
  table: "IdxEmployees",
  partitionKey: "{department}",
  rowKey: "empid_{employeeId:6}",
  indexes: {
    byEmail: { rowKey: "email_{email}" },
    byLastName: {
      table: "IdxEmployeesByName",
      partitionKey: "{lastName}",
      rowKey: "{department}_{employeeId:6}",
    },
  },
})
class IndexedEmployee {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "String" }) firstName!: string;
  @Column({ type: "String" }) lastName!: string;
  @Column({ type: "Int32" }) age!: number;
  @Column({ type: "String" }) email!: string;
}

/** Only a same-partition index: such entities can join transactions with their copies. */
@Entity({
  table: "IdxAccounts",
  partitionKey: "{tenant}",
  rowKey: "acct_{id}",
  indexes: { byEmail: { rowKey: "email_{email}" } },
})
class Account {
  @Column({ type: "String" }) tenant!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "String" }) email!: string;
}

const account = (id: string, email: string) => Object.assign(new Account(), { tenant: "t", id, email });

function person(department: string, employeeId: number, lastName: string, email: string): IndexedEmployee {
  return Object.assign(new IndexedEmployee(), {
    department,
    employeeId,
    firstName: "F",
    lastName,
    age: 30,
    email,
  });
}

async function physicalRows(db: { store: { queryPage: Function } }, table: string): Promise<string[]> {
  const page = await (
    db.store.queryPage as (
      t: string,
      q: object,
    ) => Promise<{ items: Array<{ partitionKey: string; rowKey: string }> }>
  )(table, {});
  return page.items.map((r) => `${r.partitionKey}|${r.rowKey}`);
}

describe.each(stores)("secondary indexes on %s", (_name, kind) => {
  it("writes the entity and its same-partition copy in one request, and the design guide's rows", async () => {
    const { db, counter, prefix } = await freshContext(kind, [IndexedEmployee]);
    const employees = db.repository(IndexedEmployee);
    counter.reset();
    await employees.insert(person("Sales", 223, "Jones", "jonesj@contoso.com"));
    // One EGT for entity + local copy; the remote copy goes through the intent log.
    expect(counter.calls.submitTransaction).toBe(1);
    expect(await physicalRows(db, `${prefix}IdxEmployees`)).toEqual([
      "Sales|email_jonesj@contoso.com",
      "Sales|empid_000223",
    ]);
    expect(await physicalRows(db, `${prefix}IdxEmployeesByName`)).toEqual(["Jones|Sales_000223"]);
    expect(await physicalRows(db, `${prefix}TablekitIntents`)).toEqual([]);
  });

  it("moves copies when an indexed value changes and removes them on delete", async () => {
    const { db, prefix } = await freshContext(kind, [IndexedEmployee]);
    const employees = db.repository(IndexedEmployee);
    await employees.insert(person("Sales", 1, "Jones", "a@x.com"));
    const e = await employees.getOrThrow({ department: "Sales", employeeId: 1 });
    e.email = "b@x.com";
    e.lastName = "Smith";
    await employees.update(e);
    expect(await physicalRows(db, `${prefix}IdxEmployees`)).toEqual([
      "Sales|email_b@x.com",
      "Sales|empid_000001",
    ]);
    expect(await physicalRows(db, `${prefix}IdxEmployeesByName`)).toEqual(["Smith|Sales_000001"]);
    // A blind upsert of an instance never read still finds and removes the stale copies.
    await employees.upsert(person("Sales", 1, "Brown", "c@x.com"));
    expect(await physicalRows(db, `${prefix}IdxEmployees`)).toEqual([
      "Sales|email_c@x.com",
      "Sales|empid_000001",
    ]);
    expect(await physicalRows(db, `${prefix}IdxEmployeesByName`)).toEqual(["Brown|Sales_000001"]);
    expect(await employees.delete({ department: "Sales", employeeId: 1 })).toBe(true);
    expect(await physicalRows(db, `${prefix}IdxEmployees`)).toEqual([]);
    expect(await physicalRows(db, `${prefix}IdxEmployeesByName`)).toEqual([]);
  });

  it("looks entities up by index, and a second claimant of a unique value fails with nothing written", async () => {
    const { db } = await freshContext(kind, [IndexedEmployee]);
    const employees = db.repository(IndexedEmployee);
    await employees.insert(person("Sales", 1, "Jones", "jonesj@contoso.com"));
    await employees.insert(person("Sales", 2, "Jones", "other@contoso.com"));
    const byEmail = await employees
      .index("byEmail")
      .get({ department: "Sales", email: "jonesj@contoso.com" });
    expect(byEmail).toBeInstanceOf(IndexedEmployee);
    expect(byEmail?.employeeId).toBe(1);
    expect(employees.index("byEmail").explainGet({ department: "Sales", email: "x" }).kind).toBe("point");
    const joneses = await employees.index("byLastName").find({ lastName: "Jones" }).toArray();
    expect(joneses.map((e) => e.employeeId)).toEqual([1, 2]);
    expect(employees.index("byLastName").find({ lastName: "Jones" }).explain().kind).toBe("range");
    // Entity queries never see copies.
    expect((await employees.find({ department: "Sales" }).toArray()).map((e) => e.employeeId)).toEqual([
      1, 2,
    ]);
    const error = await employees
      .insert(person("Sales", 3, "Lee", "jonesj@contoso.com"))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UniqueConstraintError);
    expect(error).toMatchObject({ code: "UNIQUE", index: "byEmail" });
    expect(await employees.get({ department: "Sales", employeeId: 3 })).toBeUndefined();
    expect(await employees.index("byLastName").find({ lastName: "Lee" }).toArray()).toEqual([]);
  });

  it("concurrent writers claiming the same unique value: exactly one wins", async () => {
    const { db } = await freshContext(kind, [IndexedEmployee]);
    const employees = db.repository(IndexedEmployee);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        employees.insert(person("Sales", 100 + i, `N${i}`, "same@contoso.com")),
      ),
    );
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    for (const o of outcomes)
      if (o.status === "rejected") expect(o.reason).toBeInstanceOf(UniqueConstraintError);
    expect(await employees.find({ department: "Sales" }).toArray()).toHaveLength(1);
  });

  it("transactions carry same-partition copies atomically", async () => {
    const { db, counter, prefix } = await freshContext(kind, [Account]);
    const accounts = db.repository(Account);
    counter.reset();
    await db.transaction((tx) => {
      tx.insert(account("a", "a@x.com"));
      tx.insert(account("b", "b@x.com"));
    });
    expect(counter.requests).toBe(1);
    expect(await physicalRows(db, `${prefix}IdxAccounts`)).toEqual([
      "t|acct_a",
      "t|acct_b",
      "t|email_a@x.com",
      "t|email_b@x.com",
    ]);
    const a = await accounts.getOrThrow({ tenant: "t", id: "a" });
    a.email = "a2@x.com";
    await db.transaction((tx) => {
      tx.update(a);
      tx.delete(Account, { tenant: "t", id: "b" });
    });
    expect(etagOf(a)).toBeDefined();
    expect(await physicalRows(db, `${prefix}IdxAccounts`)).toEqual(["t|acct_a", "t|email_a2@x.com"]);
    const error = await db
      .transaction((tx) => {
        tx.insert(account("c", "c@x.com"));
        tx.insert(account("d", "a2@x.com"));
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransactionError);
    expect(error).toMatchObject({ index: 1, statusCode: 409 });
    expect(await physicalRows(db, `${prefix}IdxAccounts`)).toEqual(["t|acct_a", "t|email_a2@x.com"]);
  });
});

describe.each(stores)("bulk writes of indexed entities on %s", (_name, kind) => {
  it("keep every copy exact, item by item", async () => {
    const { db } = await freshContext(kind, [IndexedEmployee]);
    const employees = db.repository(IndexedEmployee);
    const first = Array.from({ length: 40 }, (_, i) =>
      person(i % 2 ? "Sales" : "Ops", i, `L${i % 3}`, `e${i}@x.com`),
    );
    const inserted = await employees.bulkInsert(first, { concurrency: 4 });
    expect(inserted).toMatchObject({ written: 40, failed: [] });
    const moved = first.map((e) =>
      Object.assign(new IndexedEmployee(), { ...e, email: `moved${e.employeeId}@x.com` }),
    );
    const upserted = await employees.bulkUpsert(moved);
    expect(upserted.written).toBe(40);
    for (const e of moved) {
      expect(
        (await employees.index("byEmail").get({ department: e.department, email: e.email }))?.employeeId,
      ).toBe(e.employeeId);
      expect(
        await employees.index("byEmail").get({ department: e.department, email: `e${e.employeeId}@x.com` }),
      ).toBeUndefined();
    }
    const deleted = await employees.bulkDelete(
      moved.slice(0, 10).map((e) => ({ department: e.department, employeeId: e.employeeId })),
    );
    expect(deleted.written).toBe(10);
    expect(await employees.index("byLastName").find({ lastName: "L0" }).toArray()).toHaveLength(
      moved.slice(10).filter((e) => e.lastName === "L0").length,
    );
  });
});

/** A unique value kept in another table: claimed before the entity is written. */
@Entity({
  table: "IdxBadged",
  partitionKey: "{team}",
  rowKey: "m_{id}",
  indexes: { byBadge: { table: "IdxBadges", partitionKey: "badges", rowKey: "{badge}" } },
})
class Member {
  @Column({ type: "String" }) team!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "String" }) badge!: string;
}

describe.each(stores)("unique values across partitions on %s", (_name, kind) => {
  it("concurrent claimants of one value in different partitions: exactly one wins, the others leave nothing", async () => {
    const { db } = await freshContext(kind, [Member]);
    const members = db.repository(Member);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        members.insert(Object.assign(new Member(), { team: `team${i}`, id: `m${i}`, badge: "B-007" })),
      ),
    );
    const winners = outcomes.flatMap((o, i) => (o.status === "fulfilled" ? [i] : []));
    expect(winners).toHaveLength(1);
    for (const o of outcomes)
      if (o.status === "rejected") expect(o.reason).toBeInstanceOf(UniqueConstraintError);
    const holder = await members.index("byBadge").get({ badge: "B-007" });
    expect(holder?.team).toBe(`team${winners[0]}`);
    for (let i = 0; i < 8; i++) {
      const stored = await members.get({ team: `team${i}`, id: `m${i}` });
      expect(stored === undefined).toBe(i !== winners[0]);
    }
    expect(await db.verifyIndexes(Member)).toEqual({ missing: [], stale: [], orphans: [] });
  });
});

// The rows as the raw SDK lists them: what another client of the table sees.
describe.skipIf(!azuriteSelected)(
  "physical rows of indexed entities on Azurite, read with the raw SDK (needs Azurite: TABLEKIT_STORES leaves it out)",
  () => {
    const azurite = stores.find(([name]) => name === "azurite")?.[1] as (typeof stores)[number][1];

    async function rawRows(table: string): Promise<string[]> {
      const client = TableClient.fromConnectionString(inject("azuriteConnectionString"), table, {
        allowInsecureConnection: true,
      });
      const rows: string[] = [];
      for await (const row of client.listEntities()) rows.push(`${row.partitionKey}|${row.rowKey}`);
      return rows;
    }

    it("after insert, after an indexed value changes, and after delete", async () => {
      const { db, prefix } = await freshContext(azurite, [IndexedEmployee]);
      const employees = db.repository(IndexedEmployee);
      await employees.insert(person("Sales", 223, "Jones", "jonesj@contoso.com"));
      expect(await rawRows(`${prefix}IdxEmployees`)).toEqual([
        "Sales|email_jonesj@contoso.com",
        "Sales|empid_000223",
      ]);
      expect(await rawRows(`${prefix}IdxEmployeesByName`)).toEqual(["Jones|Sales_000223"]);
      const e = await employees.getOrThrow({ department: "Sales", employeeId: 223 });
      e.email = "jane@contoso.com";
      e.lastName = "Smith";
      await employees.update(e);
      expect(await rawRows(`${prefix}IdxEmployees`)).toEqual([
        "Sales|email_jane@contoso.com",
        "Sales|empid_000223",
      ]);
      expect(await rawRows(`${prefix}IdxEmployeesByName`)).toEqual(["Smith|Sales_000223"]);
      await employees.delete(e);
      expect(await rawRows(`${prefix}IdxEmployees`)).toEqual([]);
      expect(await rawRows(`${prefix}IdxEmployeesByName`)).toEqual([]);
      expect(await rawRows(`${prefix}TablekitIntents`)).toEqual([]);
    });
  },
);
