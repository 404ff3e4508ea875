import { describe, expect, it } from "vitest";
import { Column, Entity, odata, ValidationError } from "../../src/index.js";
import { freshContext, stores } from "../fixtures/context.js";
import { AllTypes, Employee, employee } from "../fixtures/models.js";

@Entity({ table: "GuidKeyed", partitionKey: "p", rowKey: "{id}" })
class GuidKeyed {
  @Column({ type: "Guid" }) id!: string;
  @Column({ type: "Int32" }) n!: number;
}

@Entity({
  table: "IdxForeign",
  partitionKey: "{department}",
  rowKey: "empid_{employeeId:6}",
  indexes: { byEmail: { rowKey: "email_{email}" } },
})
class Indexed {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "String" }) email?: string;
  @Column({ type: "Int32" }) age?: number;
}

const UPPER = "0F8FAD5B-D9CB-469F-A165-70867728950E";

describe.each(stores)("edge cases on %s", (_name, kind) => {
  it("a Guid key written in upper case is one entity: read, updated and filtered alike", async () => {
    const { db } = await freshContext(kind, [GuidKeyed]);
    const repo = db.repository(GuidKeyed);
    await repo.insert(Object.assign(new GuidKeyed(), { id: UPPER, n: 1 }));
    const read = await repo.getOrThrow({ id: UPPER });
    expect(read.id).toBe(UPPER.toLowerCase());
    read.n = 2;
    await repo.update(read);
    await repo.upsert(Object.assign(new GuidKeyed(), { id: UPPER, n: 3 }));
    const all = await repo.find({}).toArray();
    expect(all.map((g) => [g.id, g.n])).toEqual([[UPPER.toLowerCase(), 3]]);
    expect(await repo.find({}).where("id", "eq", UPPER).toArray()).toHaveLength(1);
  });

  it("refuses raw filter text that could escape its conjunct, and odd keys, before any request", async () => {
    const { db, counter } = await freshContext(kind, [Employee]);
    const employees = db.repository(Employee);
    const attempts = [
      async () => employees.find({ department: "Sales" }).filter("age eq 1) or (age eq 1").toArray(),
      async () => employees.find({ department: "Sales" }).filter("lastName eq 'x").toArray(),
      () => employees.get({ department: "Sales\ud800", employeeId: 1 }),
      async () => employees.scan().filter(odata`age gt ${3_000_000_000}`).toArray(),
      () =>
        db
          .repository(AllTypes)
          .insert(Object.assign(new AllTypes(), { group: "g", id: "1", json: { big: 1n } })),
    ];
    for (const attempt of attempts) await expect(attempt()).rejects.toBeInstanceOf(ValidationError);
    expect(counter.requests).toBe(0);
  });

  it("take(0) means nothing, also for first()", async () => {
    const { db } = await freshContext(kind, [Employee]);
    const employees = db.repository(Employee);
    await employees.insert(employee("Sales", 1));
    expect(await employees.find({ department: "Sales" }).take(0).first()).toBeUndefined();
    expect(await employees.find({ department: "Sales" }).take(0).toArray()).toEqual([]);
  });

  it("large and tiny doubles in filters mean the same on every store", async () => {
    const { db } = await freshContext(kind, [AllTypes]);
    const repo = db.repository(AllTypes);
    await repo.insert(Object.assign(new AllTypes(), { group: "g", id: "big", double: 2e21 }));
    await repo.insert(Object.assign(new AllTypes(), { group: "g", id: "tiny", double: 1.5e-7 }));
    expect((await repo.find({ group: "g" }).where("double", "gt", 1e21).toArray()).map((e) => e.id)).toEqual([
      "big",
    ]);
    expect((await repo.find({ group: "g" }).where("double", "lt", 1e-6).toArray()).map((e) => e.id)).toEqual([
      "tiny",
    ]);
  });

  it("binary values read back as plain Uint8Array", async () => {
    const { db } = await freshContext(kind, [AllTypes]);
    const repo = db.repository(AllTypes);
    await repo.insert(
      Object.assign(new AllTypes(), { group: "g", id: "b", bytes: new Uint8Array([1, 2, 3]) }),
    );
    const read = await repo.getOrThrow({ group: "g", id: "b" });
    expect(Object.getPrototypeOf(read.bytes)).toBe(Uint8Array.prototype);
    expect([...(read.bytes ?? [])]).toEqual([1, 2, 3]);
  });

  it("indexed entities: rows from other clients read fine, and merges keep properties the class does not know", async () => {
    const { db } = await freshContext(kind, [Indexed]);
    const repo = db.repository(Indexed);
    // Written by a plain client: no e-mail (no copy possible), an extra property, no bookkeeping.
    await db.store.upsert(
      repo.table,
      {
        partitionKey: "Sales",
        rowKey: "empid_000050",
        department: "Sales",
        employeeId: 50,
        extra: "keep me",
      },
      "replace",
    );
    expect((await repo.find({ department: "Sales" }).toArray()).map((e) => e.employeeId)).toEqual([50]);
    await repo.upsert(Object.assign(new Indexed(), { department: "Sales", employeeId: 50, email: "x@y.z" }), {
      mode: "merge",
    });
    const row = await db.store.getEntity(repo.table, "Sales", "empid_000050");
    expect(row?.extra).toBe("keep me");
    expect((await repo.index("byEmail").get({ department: "Sales", email: "x@y.z" }))?.employeeId).toBe(50);
    expect(await db.verifyIndexes(Indexed)).toEqual({ missing: [], stale: [], orphans: [] });
  });
});
