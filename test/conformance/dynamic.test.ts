/**
 * `db.dynamic(table)`: an untyped repository over any table, with the typed one's ETags,
 * validation and paging, on every store.
 */
import { describe, expect, it } from "vitest";
import {
  ConcurrencyError,
  type DynamicRow,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  etagOf,
  odata,
  timestampOf,
  ValidationError,
} from "../../src/index.js";
import { freshContext, stores } from "../fixtures/context.js";
import { Employee, employee } from "../fixtures/models.js";
import { expectRejection, rejectionOf } from "../support/rejection.js";

const GUID = "3f2504e0-4f89-11d3-9a0c-0305e82c3301";

describe.each(stores)("db.dynamic on %s", (_name, kind) => {
  it("writes and reads rows with typed wire values, ETags and Timestamps", async () => {
    const { db, prefix } = await freshContext(kind, []);
    const events = db.dynamic("Events");
    expect(events.table).toBe(`${prefix}Events`);
    await events.ensureTable();
    const at = new Date(Date.UTC(2026, 10, 25, 13, 0, 0, 123));
    const row: DynamicRow = {
      partitionKey: "device-7",
      rowKey: "0001",
      text: "hello",
      flag: true,
      count: 42,
      ratio: 1.5,
      wholeDouble: { type: "Double", value: 2 },
      big: 2n ** 40n,
      at,
      bytes: new Uint8Array([1, 2, 255]),
      id: { type: "Guid", value: GUID },
      nothing: undefined,
    };
    await events.insert(row);
    expect(etagOf(row)).toBeDefined();
    expect(timestampOf(row)).toBeInstanceOf(Date);

    const read = (await events.get("device-7", "0001")) as DynamicRow;
    expect(read).toEqual({
      partitionKey: "device-7",
      rowKey: "0001",
      text: "hello",
      flag: true,
      count: 42,
      ratio: 1.5,
      wholeDouble: 2,
      big: 2n ** 40n,
      at,
      bytes: new Uint8Array([1, 2, 255]),
      id: { type: "Guid", value: GUID },
    });
    expect(etagOf(read)).toBe(etagOf(row));
    expect(timestampOf(read)?.getTime()).toBe(timestampOf(row)?.getTime());
    expect(await events.get("device-7", "0002")).toBeUndefined();
    await expectRejection(
      events.insert({ partitionKey: "device-7", rowKey: "0001" }),
      EntityAlreadyExistsError,
    );
  });

  it("updates on the tracked ETag, upserts by mode and deletes conditionally", async () => {
    const { db } = await freshContext(kind, []);
    const rows = db.dynamic("Rows");
    await rows.ensureTable();
    await rows.upsert({ partitionKey: "p", rowKey: "r", a: "1", b: "2" });
    const first = (await rows.get("p", "r")) as DynamicRow;
    const second = (await rows.get("p", "r")) as DynamicRow;
    await rows.update({ ...first, a: "changed" }, { ifMatch: etagOf(first) });
    await rows.update(Object.assign(first, { a: "again" }), { ifMatch: "*" });
    // `second` still carries the version read before those writes.
    await expectRejection(rows.update(Object.assign(second, { a: "stale" })), ConcurrencyError);
    await expectRejection(rows.update({ partitionKey: "p", rowKey: "r", a: "x" }), ValidationError);
    await expectRejection(
      rows.update({ partitionKey: "p", rowKey: "gone" }, { ifMatch: "*" }),
      EntityNotFoundError,
    );

    await rows.upsert({ partitionKey: "p", rowKey: "r", c: 3 }, { mode: "merge" });
    expect(await rows.get("p", "r")).toEqual({ partitionKey: "p", rowKey: "r", a: "again", b: "2", c: 3 });
    await rows.upsert({ partitionKey: "p", rowKey: "r", c: 4 });
    expect(await rows.get("p", "r")).toEqual({ partitionKey: "p", rowKey: "r", c: 4 });

    const current = (await rows.get("p", "r")) as DynamicRow;
    await expectRejection(rows.delete("p", "r", { ifMatch: etagOf(second) }), ConcurrencyError);
    expect(await rows.delete("p", "r", { ifMatch: etagOf(current) })).toBe(true);
    expect(await rows.delete("p", "r")).toBe(false);
  });

  it("finds a partition in pages and scans the table, honouring the table prefix", async () => {
    const { db } = await freshContext(kind, [Employee]);
    await db.repository(Employee).bulkInsert([employee("Sales", 1), employee("Sales", 2), employee("HR", 3)]);
    const table = db.dynamic("Employees");
    // The typed repository's rows, seen untyped through the same prefixed table.
    const sales = table.find("Sales");
    const first = await sales.page({ size: 1 });
    expect(first.items.map((r) => r.rowKey)).toEqual(["empid_000001"]);
    const one = employee("Sales", 1);
    expect(first.items[0]).toMatchObject({ firstName: one.firstName, age: one.age });
    const rest = await sales.page({ size: 10, continuation: first.continuation });
    expect(rest.items.map((r) => r.rowKey)).toEqual(["empid_000002"]);
    expect(rest.continuation).toBeUndefined();
    expect((await sales.toArray()).map((r) => r.rowKey)).toEqual(["empid_000001", "empid_000002"]);
    const keys: string[] = [];
    for await (const row of table.scan()) keys.push(`${row.partitionKey}/${row.rowKey}`);
    expect(keys.sort()).toEqual(["HR/empid_000003", "Sales/empid_000001", "Sales/empid_000002"]);
    const older = await table.find("Sales").filter(odata`employeeId gt ${1}`).toArray();
    expect(older.map((r) => r.rowKey)).toEqual(["empid_000002"]);
    expect(etagOf(older[0] as DynamicRow)).toBeDefined();
    // A continuation belongs to its query.
    await expectRejection(table.scan().page({ continuation: first.continuation }), ValidationError);
  });

  it("stops a page at maxRequests; following its continuations reads every row once", async () => {
    const { db, counter } = await freshContext(kind, []);
    const rows = db.dynamic("Budget");
    await rows.ensureTable();
    const written = ["a", "b", "c"].flatMap((p) => ["1", "2"].map((r) => `${p}/${r}`));
    for (const key of written) {
      const [partitionKey, rowKey] = key.split("/") as [string, string];
      await rows.insert({ partitionKey, rowKey });
    }
    counter.reset();
    const seen: string[] = [];
    let continuation: string | undefined;
    let pages = 0;
    do {
      const page = await rows.scan().page({ size: 1000, maxRequests: 1, continuation });
      seen.push(...page.items.map((r) => `${r.partitionKey}/${r.rowKey}`));
      if (page.continuation !== undefined) expect(page.budgetExhausted).toBe(true);
      continuation = page.continuation;
      pages++;
    } while (continuation !== undefined);
    expect(counter.calls.queryPage).toBe(pages);
    expect(seen.sort()).toEqual(written);
  });

  it("refuses bad rows, keys, names and options before any request", async () => {
    const { db, counter } = await freshContext(kind, []);
    expect(() => db.dynamic("bad-name")).toThrow(ValidationError);
    expect(() => db.dynamic("x".repeat(70))).toThrow(ValidationError);
    const rows = db.dynamic("Rows");
    const ok = { partitionKey: "p", rowKey: "r" };
    const bad: DynamicRow[] = [
      { partitionKey: "a/b", rowKey: "r" },
      { ...ok, partitionKey: 1 as never },
      { ...ok, "1abc": "x" },
      { ...ok, etag: "x" },
      { ...ok, Timestamp: new Date() },
      { ...ok, s: "x".repeat(40_000) },
      { ...ok, n: { type: "Int32", value: 2 ** 31 } },
      { ...ok, n: { type: "Int64", value: "12x" } },
      { ...ok, n: 2n ** 63n },
      { ...ok, g: { type: "Guid", value: "nope" } },
      { ...ok, t: { type: "Decimal" as never, value: "1" } },
      { ...ok, d: new Date(Number.NaN) },
      { ...ok, b: new Uint8Array(64 * 1024 + 1) },
      { ...ok, o: {} as never },
      { ...ok, ...Object.fromEntries(Array.from({ length: 253 }, (_, i) => [`p${i}`, i])) },
      { ...ok, ...Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`p${i}`, "x".repeat(30_000)])) },
      null as never,
    ];
    for (const row of bad) {
      const error = await rejectionOf(rows.upsert(row));
      expect(
        error,
        JSON.stringify(row, (_k, v) => (typeof v === "bigint" ? `${v}n` : v))?.slice(0, 80),
      ).toBeInstanceOf(ValidationError);
    }
    await expectRejection(rows.upsert(ok, { mode: "patch" as never }), ValidationError);
    await expectRejection(rows.get("p", "a#b"), ValidationError);
    await expectRejection(rows.delete("p", "a?b"), ValidationError);
    expect(() => rows.find("a\\b")).toThrow(ValidationError);
    expect(() => rows.scan().filter("")).toThrow(ValidationError);
    await expectRejection(rows.scan().page({ size: 0 }), ValidationError);
    await expectRejection(rows.scan().page({ maxRequests: 0 }), ValidationError);
    expect(counter.requests).toBe(0);
  });
});
