/**
 * Order-dependent reads on every store, sorted (memory, Azurite) or not (the Cosmos-flavoured memory
 * store, once per seed): results as sets are always right; `toArray`, `first`, `take` and `latest`
 * return the key-order answer everywhere; iteration and pages follow the store's order (asserted in
 * key order only where the store sorts); and on an unsorted store a `first`/`take` over a table scan
 * is refused with a `ValidationError`. Expected orders are computed here from the inputs.
 */
import { describe, expect, it } from "vitest";
import {
  Column,
  Entity,
  type EntityClass,
  TableContext,
  type TableStore,
  ValidationError,
} from "../../src/index.js";
import { uniquePrefix } from "../fixtures/context.js";
import { Employee, employee } from "../fixtures/models.js";
import { Department, department, Note, note, StaffEmployee, staff } from "../heterogeneous/models.js";
import { storeKinds } from "../support/stores.js";
import { unsortedStoreKinds } from "../support/unsorted-stores.js";

@Entity({
  table: "UoMembers",
  partitionKey: "{team}",
  rowKey: "m_{id:6}",
  indexes: { byAge: { table: "UoMembersByAge", partitionKey: "{team}", rowKey: "{age:3}_{id:6}" } },
})
class Member {
  @Column({ type: "String" }) team!: string;
  // Stored as "memberId": the Cosmos DB Table API reserves the property name "id".
  @Column({ type: "Int32", name: "memberId" }) id!: number;
  @Column({ type: "Int32" }) age!: number;
}

/** A log-tail entity (newest first); its tie-breaker is `ref`, as Cosmos DB reserves the name "id". */
@Entity({ table: "UoCharges", partitionKey: "{account:6}", rowKey: "{at:desc}_{ref}" })
class Charge {
  @Column({ type: "Int32" }) account!: number;
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "String" }) ref!: string;
}

const allStores: Array<{ name: string; sorted: boolean; create(): TableStore }> = [
  ...storeKinds.map((kind) => ({ name: kind.name, sorted: true, create: () => kind.create() })),
  ...unsortedStoreKinds.map((kind) => ({ name: kind.name, sorted: false, create: () => kind.create() })),
];

/** 60 distinct ids inserted out of order (37 is coprime with 101, so i·37 mod 101 never repeats). */
const SALES_IDS = Array.from({ length: 60 }, (_, i) => ((i * 37) % 101) + 1);
const SUPPORT_IDS = [7, 3, 55, 21];
const ascending = (values: readonly number[]) => [...values].sort((a, b) => a - b);
const ids = (items: ReadonlyArray<{ employeeId: number }>) => items.map((e) => e.employeeId);

async function context(store: TableStore, ...entities: EntityClass[]): Promise<TableContext> {
  const db = new TableContext({ store, tablePrefix: uniquePrefix() });
  await db.ensureTables(...entities);
  return db;
}

async function employees(store: TableStore) {
  const db = await context(store, Employee);
  const repository = db.repository(Employee);
  await repository.bulkInsert(SALES_IDS.map((id) => employee("Sales", id)));
  await repository.bulkInsert(SUPPORT_IDS.map((id) => employee("Support", id)));
  return repository;
}

function expectUnsortedRefusal(error: unknown): void {
  expect(error).toBeInstanceOf(ValidationError);
  expect((error as ValidationError).rule).toBe("unsorted-order");
  expect((error as ValidationError).message).toMatch(/find\(/);
}

describe.each(allStores)("order-dependent reads on $name", ({ create, sorted }) => {
  it("reports sortedResults as the store behaves", () => {
    expect(create().capabilities.sortedResults).toBe(sorted);
  });

  it("toArray, first and take over a partition give the key-order answer", async () => {
    const repository = await employees(create());
    const sales = repository.find({ department: "Sales" });
    const inOrder = ascending(SALES_IDS);
    expect(ids(await sales.toArray())).toEqual(inOrder);
    expect((await sales.first())?.employeeId).toBe(inOrder[0]);
    expect(ids(await sales.take(5).toArray())).toEqual(inOrder.slice(0, 5));
    const iterated: number[] = [];
    for await (const e of sales.take(5)) iterated.push(e.employeeId);
    expect(iterated).toEqual(inOrder.slice(0, 5));
    expect(ids((await sales.take(5).page({ size: 10 })).items)).toEqual(inOrder.slice(0, 5));
    const between = sales.between({ employeeId: 30 }, { employeeId: 80 });
    expect(ids(await between.take(3).toArray())).toEqual(
      inOrder.filter((id) => id >= 30 && id <= 80).slice(0, 3),
    );
    const older = sales.where("age", "gt", 45);
    const olderIds = inOrder.filter((id) => 20 + (id % 40) > 45);
    expect(ids(await older.take(4).toArray())).toEqual(olderIds.slice(0, 4));
    expect((await older.first())?.employeeId).toBe(olderIds[0]);
  });

  it("pages and iteration hold every result exactly once (in key order where the store sorts)", async () => {
    const repository = await employees(create());
    const sales = repository.find({ department: "Sales" });
    const paged: number[] = [];
    let continuation: string | undefined;
    do {
      const page = await sales.page({ size: 7, continuation });
      expect(page.items.length).toBeLessThanOrEqual(7);
      paged.push(...ids(page.items));
      continuation = page.continuation;
    } while (continuation !== undefined);
    expect(ascending(paged)).toEqual(ascending(SALES_IDS));
    const iterated: number[] = [];
    for await (const e of sales) iterated.push(e.employeeId);
    expect(ascending(iterated)).toEqual(ascending(SALES_IDS));
    if (sorted) {
      expect(paged).toEqual(ascending(SALES_IDS));
      expect(iterated).toEqual(ascending(SALES_IDS));
    }
  });

  it("a table scan's toArray is in key order; its first/take are refused where results are unsorted", async () => {
    const repository = await employees(create());
    const everyone = [
      ...ascending(SALES_IDS).map((id) => `Sales/${id}`),
      ...ascending(SUPPORT_IDS).map((id) => `Support/${id}`),
    ];
    const scanned = (await repository.scan().toArray()).map((e) => `${e.department}/${e.employeeId}`);
    expect(scanned).toEqual(everyone);
    if (sorted) {
      expect((await repository.scan().first())?.employeeId).toBe(ascending(SALES_IDS)[0]);
      expect(ids(await repository.scan().take(2).toArray())).toEqual(ascending(SALES_IDS).slice(0, 2));
    } else {
      expectUnsortedRefusal(
        await repository
          .scan()
          .first()
          .catch((e: unknown) => e),
      );
      expectUnsortedRefusal(
        await repository
          .scan()
          .take(2)
          .toArray()
          .catch((e: unknown) => e),
      );
      expectUnsortedRefusal(
        await repository
          .scan()
          .take(2)
          .page()
          .catch((e: unknown) => e),
      );
    }
  });

  it("take(n) paged by less than n pages on in key order where sorted, and is refused where not", async () => {
    const repository = await employees(create());
    const query = repository.find({ department: "Sales" }).take(10);
    if (sorted) {
      const first = await query.page({ size: 4 });
      expect(ids(first.items)).toEqual(ascending(SALES_IDS).slice(0, 4));
      expect(first.continuation).toBeDefined();
    } else {
      const error = await query.page({ size: 4 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).rule).toBe("unsorted-order");
    }
  });

  it("latest(n) returns the n newest of the partition", async () => {
    const db = await context(create(), Charge);
    const charges = db.repository(Charge);
    const base = Date.UTC(2024, 0, 1);
    // Minutes out of order (17 is coprime with 41); two expenses share a timestamp to exercise the tie-breaker id.
    const rows = Array.from({ length: 40 }, (_, i) => ({
      minute: (i * 17) % 41,
      id: `x${String(i).padStart(2, "0")}`,
    }));
    rows.push({ minute: 40, id: "y00" }, { minute: 40, id: "y01" });
    await charges.bulkInsert(
      rows.map((r) =>
        Object.assign(new Charge(), { account: 7, at: new Date(base + r.minute * 60_000), ref: r.id }),
      ),
    );
    const newest = [...rows].sort((a, b) => b.minute - a.minute || (a.id < b.id ? -1 : 1)).slice(0, 5);
    const latest = await charges.latest({ account: 7 }, 5).toArray();
    expect(latest.map((c) => c.ref)).toEqual(newest.map((r) => r.id));
  });

  it("multi-type queries return rows in RowKey order from toArray and first", async () => {
    const db = await context(create(), Department, StaffEmployee, Note);
    await db.repository(Department).insert(department("Ops"));
    for (const id of [12, 3, 40, 8]) await db.repository(StaffEmployee).insert(staff("Ops", id));
    for (const id of ["zeta", "alpha", "note7"]) await db.repository(Note).insert(note("Ops", id));
    const rowKeys = [
      "dept",
      ...[3, 8, 12, 40].map((id) => `empid_${String(id).padStart(6, "0")}`),
      "alpha",
      "note7",
      "zeta",
    ];
    const expected = [...rowKeys].sort();
    const keyOf = (row: Department | StaffEmployee | Note) =>
      row instanceof Department
        ? "dept"
        : row instanceof StaffEmployee
          ? `empid_${String(row.employeeId).padStart(6, "0")}`
          : row.noteId;
    const query = db.query(Department, StaffEmployee, Note).find({ department: "Ops" });
    expect((await query.toArray()).map(keyOf)).toEqual(expected);
    const first = await query.first();
    expect(first && keyOf(first)).toBe(expected[0]);
    expect((await query.take(3).toArray()).map(keyOf)).toEqual(expected.slice(0, 3));
  });

  it("index queries return entities in the index's key order", async () => {
    const db = await context(create(), Member);
    const members = db.repository(Member);
    const people = Array.from({ length: 25 }, (_, i) => ({
      id: ((i * 11) % 29) + 1,
      age: 20 + ((i * 7) % 9),
    }));
    for (const p of people) await members.insert(Object.assign(new Member(), { team: "blue", ...p }));
    const expected = [...people].sort((a, b) => a.age - b.age || a.id - b.id).map((p) => p.id);
    const byAge = members.index("byAge").find({ team: "blue" });
    expect((await byAge.toArray()).map((m) => m.id)).toEqual(expected);
    expect((await byAge.first())?.id).toBe(expected[0]);
    expect((await byAge.take(4).toArray()).map((m) => m.id)).toEqual(expected.slice(0, 4));
  });
});
