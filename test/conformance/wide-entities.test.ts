/**
 * Wide entities (`@Entity({ wide: true })`): more than the service's 252 properties (and 1 MiB) per
 * entity, stored as several rows of one partition, each write one entity group transaction, each
 * read one range query, the ETag covering every row.
 */
import { describe, expect, it } from "vitest";
import {
  Column,
  ConcurrencyError,
  Entity,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  etagOf,
  SchemaError,
  TableContext,
  TransactionError,
  ValidationError,
} from "../../src/index.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import type { StoredEntity, TableStore } from "../../src/store/table-store.js";
import { freshContext, stores, uniquePrefix } from "../fixtures/context.js";
import { expectRejection } from "../support/rejection.js";
import { ShortPageStore } from "../support/short-page-store.js";

const COLUMNS = 600;
const name = (i: number): string => `c${String(i).padStart(3, "0")}`;

/** 600 Int32 columns c000…c599, plus a free-text column, keyed by {tenant} / {id}. */
class Sheet {
  tenant!: string;
  id!: string;
  note?: string;
  [column: string]: unknown;
}
Column({ type: "String" })(Sheet.prototype, "tenant");
Column({ type: "String" })(Sheet.prototype, "id");
Column({ type: "String" })(Sheet.prototype, "note");
for (let i = 0; i < COLUMNS; i++) Column({ type: "Int32" })(Sheet.prototype, name(i));
Entity({ table: "WideSheets", partitionKey: "{tenant}", rowKey: "{id}", wide: true })(Sheet);

/** Few columns but large values: its size, not its property count, makes it wide. */
class Blobby {
  key!: string;
  [column: string]: unknown;
}
Column({ type: "String" })(Blobby.prototype, "key");
for (let i = 0; i < 50; i++) Column({ type: "String" })(Blobby.prototype, `text${i}` as string);
Entity({ table: "WideBlobs", partitionKey: "blobs", rowKey: "{key}", wide: true })(Blobby);

/** Wide and a table per month: the period's table is created by the first write. */
class WideLog {
  source!: string;
  at!: Date;
  id!: string;
  [column: string]: unknown;
}
Column({ type: "String" })(WideLog.prototype, "source");
Column({ type: "DateTime" })(WideLog.prototype, "at");
Column({ type: "String" })(WideLog.prototype, "id");
for (let i = 0; i < 300; i++) Column({ type: "Int32" })(WideLog.prototype, `m${i}` as string);
Entity({ table: "WideLogs{at:month}", partitionKey: "{source}", rowKey: "{at:ticks}_{id}", wide: true })(
  WideLog,
);

/** Wide and spread over hash buckets: find without the device reads every bucket. */
class WideReading {
  device!: string;
  n!: number;
  [column: string]: unknown;
}
Column({ type: "String" })(WideReading.prototype, "device");
Column({ type: "Int32" })(WideReading.prototype, "n");
for (let i = 0; i < 300; i++) Column({ type: "Int32" })(WideReading.prototype, `r${i}` as string);
Entity({ table: "WideReadings", partitionKey: "{device:hash:4}", rowKey: "{device}_{n:4}", wide: true })(
  WideReading,
);

function sheet(id: string, base: number, note?: string): Sheet {
  const s = new Sheet();
  s.tenant = "acme";
  s.id = id;
  if (note !== undefined) s.note = note;
  for (let i = 0; i < COLUMNS; i++) s[name(i)] = base + i;
  return s;
}

/** Every stored row of a partition, as the store holds it. */
async function rawRows(store: TableStore, table: string, partitionKey: string): Promise<StoredEntity[]> {
  const rows: StoredEntity[] = [];
  let continuation: Awaited<ReturnType<TableStore["queryPage"]>>["continuation"];
  do {
    const page = await store.queryPage(table, {
      filter: `PartitionKey eq '${partitionKey}'`,
      ...(continuation ? { continuation } : {}),
    });
    rows.push(...page.items);
    continuation = page.continuation;
  } while (continuation);
  return rows;
}

describe.each(stores)("wide entities on %s", (_name, kind) => {
  it("round-trips a 600-column entity stored as three rows, read with one request", async () => {
    const { db, counter, prefix } = await freshContext(kind, [Sheet]);
    const sheets = db.repository(Sheet);
    await sheets.insert(sheet("s1", 1000, "hello"));
    expect(counter.calls.submitTransaction).toBe(1);
    expect(counter.calls.insert).toBe(0);

    const rows = await rawRows(counter, `${prefix}WideSheets`, "acme");
    expect(rows.map((r) => r.rowKey)).toEqual(["s1 00", "s1 01", "s1 02"]);
    for (const row of rows) {
      const props = Object.keys(row).filter(
        (k) => !["partitionKey", "rowKey", "etag", "timestamp"].includes(k),
      );
      expect(props.length).toBeLessThanOrEqual(252);
      expect(row.EntityType).toBe("Sheet@1");
    }

    counter.reset();
    const read = await sheets.get({ tenant: "acme", id: "s1" });
    expect(counter.calls.queryPage).toBe(1);
    expect(counter.calls.getEntity).toBe(0);
    expect(read).toBeInstanceOf(Sheet);
    expect(read?.note).toBe("hello");
    for (let i = 0; i < COLUMNS; i++) expect(read?.[name(i)]).toBe(1000 + i);
    expect(JSON.parse(etagOf(read as Sheet) as string)).toHaveLength(3);
  });

  it("round-trips an entity over 1 MiB (40 values of 30,000 characters) split by size", async () => {
    const { db, counter, prefix } = await freshContext(kind, [Blobby]);
    const blobs = db.repository(Blobby);
    const b = new Blobby();
    b.key = "big";
    for (let i = 0; i < 40; i++) b[`text${i}`] = `${String.fromCharCode(0x41 + (i % 26))}é`.repeat(15_000);
    await blobs.insert(b);
    const rows = await rawRows(counter, `${prefix}WideBlobs`, "blobs");
    // 40 × ~60 KB by the service's formula: at most 17 of them per 1 MiB row.
    expect(rows.length).toBe(3);
    const read = await blobs.getOrThrow({ key: "big" });
    for (let i = 0; i < 40; i++) expect(read[`text${i}`]).toBe(b[`text${i}`]);
  });

  it("shrinks and grows: a replace deletes the rows it no longer needs in the same transaction", async () => {
    const { db, counter, prefix } = await freshContext(kind, [Blobby]);
    const blobs = db.repository(Blobby);
    const table = `${prefix}WideBlobs`;
    const big = new Blobby();
    big.key = "k";
    for (let i = 0; i < 40; i++) big[`text${i}`] = "x".repeat(30_000);
    await blobs.insert(big);
    expect((await rawRows(counter, table, "blobs")).length).toBe(3);

    const small = await blobs.getOrThrow({ key: "k" });
    for (let i = 1; i < 40; i++) small[`text${i}`] = undefined;
    counter.reset();
    await blobs.update(small);
    expect(counter.calls.submitTransaction).toBe(1);
    expect((await rawRows(counter, table, "blobs")).map((r) => r.rowKey)).toEqual(["k 00"]);
    const read = await blobs.getOrThrow({ key: "k" });
    expect(read.text0).toBe("x".repeat(30_000));
    expect(read.text1).toBeUndefined();

    // Upsert (no ETag) grows it back: it reads the stored rows' ETags, then writes conditionally.
    await blobs.upsert(big);
    expect((await rawRows(counter, table, "blobs")).length).toBe(3);
    // And shrinks again, unconditionally.
    const tiny = new Blobby();
    tiny.key = "k";
    await blobs.upsert(tiny);
    expect((await rawRows(counter, table, "blobs")).map((r) => r.rowKey)).toEqual(["k 00"]);
    expect(Object.keys(await blobs.getOrThrow({ key: "k" })).filter((k) => k.startsWith("text"))).toEqual([]);
  });

  it("a stale ETag on any row fails with ConcurrencyError and changes nothing", async () => {
    const { db, counter, prefix } = await freshContext(kind, [Sheet]);
    const sheets = db.repository(Sheet);
    await sheets.insert(sheet("s1", 0));
    const mine = await sheets.getOrThrow({ tenant: "acme", id: "s1" });
    // Someone else changes only the last row (a raw write, as another client could).
    const table = `${prefix}WideSheets`;
    const last = (await rawRows(counter, table, "acme")).at(-1) as StoredEntity;
    const { etag: _etag, timestamp: _timestamp, ...row } = last;
    await counter.update(table, { ...row, c599: -1 }, "replace", last.etag);

    mine.c000 = 42;
    const before = await rawRows(counter, table, "acme");
    await expectRejection(sheets.update(mine), ConcurrencyError);
    await expectRejection(sheets.delete(mine), ConcurrencyError);
    expect(await rawRows(counter, table, "acme")).toEqual(before);

    // A fresh read covers the changed row, so its update goes through.
    const fresh = await sheets.getOrThrow({ tenant: "acme", id: "s1" });
    expect(fresh.c599).toBe(-1);
    fresh.c000 = 42;
    await sheets.update(fresh);
    expect((await sheets.getOrThrow({ tenant: "acme", id: "s1" })).c000).toBe(42);
  });

  it("insert of an existing key, update and delete of a missing one, as for any entity", async () => {
    const { db } = await freshContext(kind, [Sheet]);
    const sheets = db.repository(Sheet);
    const s = sheet("s1", 0);
    await sheets.insert(s);
    await expectRejection(sheets.insert(sheet("s1", 5)), EntityAlreadyExistsError);
    expect(await sheets.delete({ tenant: "acme", id: "s1" })).toBe(true);
    expect(await sheets.get({ tenant: "acme", id: "s1" })).toBeUndefined();
    expect(await sheets.delete({ tenant: "acme", id: "s1" })).toBe(false);
    await expectRejection(sheets.update(sheet("s1", 0), { ifMatch: "*" }), EntityNotFoundError);
    // The instance's tracked ETag names rows that are gone.
    await expectRejection(sheets.update(s), EntityNotFoundError);
    expect(await sheets.delete(s)).toBe(false);
  });

  it("merges: patch, upsert merge and update merge keep the other columns", async () => {
    const { db, counter } = await freshContext(kind, [Sheet]);
    const sheets = db.repository(Sheet);
    await sheets.insert(sheet("s1", 0, "first"));
    await sheets.patch({ tenant: "acme", id: "s1" }, { c598: -5 } as never);
    const partial = new Sheet();
    partial.tenant = "acme";
    partial.id = "s1";
    partial.c001 = -1;
    await sheets.upsert(partial, { mode: "merge" });
    const read = await sheets.getOrThrow({ tenant: "acme", id: "s1" });
    expect([read.c000, read.c001, read.c598, read.c599, read.note]).toEqual([0, -1, -5, 599, "first"]);

    partial.c002 = -2;
    await sheets.update(partial, { mode: "merge", ifMatch: etagOf(read) as string });
    const again = await sheets.getOrThrow({ tenant: "acme", id: "s1" });
    expect([again.c001, again.c002, again.c003]).toEqual([-1, -2, 3]);
    // A merge conditional on an ETag that is no longer current fails without writing.
    counter.reset();
    await expectRejection(
      sheets.update(partial, { mode: "merge", ifMatch: etagOf(read) as string }),
      ConcurrencyError,
    );
    expect(counter.calls.submitTransaction).toBe(0);
  });

  it("a RowKey that is a prefix of another never reads the other's rows", async () => {
    const { db } = await freshContext(kind, [Sheet]);
    const sheets = db.repository(Sheet);
    for (const [id, base] of [
      ["a", 0],
      ["a!", 1],
      ["a0", 2],
      ["a~", 3],
      ["ab", 4],
      ["a00", 5],
    ] as const) {
      await sheets.insert(sheet(id, base * 1000));
    }
    for (const [id, base] of [
      ["a", 0],
      ["a!", 1],
      ["a0", 2],
      ["a~", 3],
      ["ab", 4],
      ["a00", 5],
    ] as const) {
      const read = await sheets.getOrThrow({ tenant: "acme", id });
      expect(read.id).toBe(id);
      expect(read.c000).toBe(base * 1000);
      expect(read.c599).toBe(base * 1000 + 599);
    }
    const all = await sheets.find({ tenant: "acme" }).toArray();
    expect(all.map((s) => s.id)).toEqual(["a", "a!", "a0", "a00", "ab", "a~"]);
    // A find of one entity's full key reads exactly its rows: one range query, kind "range".
    const one = sheets.find({ tenant: "acme", id: "a" });
    expect(one.explain()).toMatchObject({
      kind: "range",
      filter: "PartitionKey eq 'acme' and RowKey ge 'a ' and RowKey lt 'a!'",
    });
    expect((await one.toArray()).map((s) => [s.id, s.c599])).toEqual([["a", 599]]);
    expect(await sheets.delete({ tenant: "acme", id: "a" })).toBe(true);
    expect((await sheets.find({ tenant: "acme" }).toArray()).map((s) => s.id)).toEqual([
      "a!",
      "a0",
      "a00",
      "ab",
      "a~",
    ]);
  });

  it("refuses a RowKey with a space (the separator) before any request", async () => {
    const { db, counter } = await freshContext(kind, [Sheet]);
    const sheets = db.repository(Sheet);
    await expectRejection(sheets.insert(sheet("a b", 0)), ValidationError);
    await expectRejection(sheets.get({ tenant: "acme", id: "a b" }), ValidationError);
    await expectRejection(sheets.delete({ tenant: "acme", id: "a b" }), ValidationError);
    await expectRejection(sheets.find({ tenant: "acme", id: "a b" }).toArray(), ValidationError);
    await expectRejection(
      sheets.find({ tenant: "acme" }).startsWith({ id: "a " }).toArray(),
      ValidationError,
    );
    expect(Object.values(counter.calls).reduce((a, b) => a + b, 0)).toBe(0);
  });

  it("find pages return whole entities in RowKey order when the service's pages end inside one", async () => {
    const base = kind.create();
    const store = new ShortPageStore(base, 2);
    const prefix = uniquePrefix();
    const db = new TableContext({ store, tablePrefix: prefix });
    await db.ensureTables(Sheet);
    const sheets = db.repository(Sheet);
    const ids = ["e0", "e1", "e2", "e3", "e4"];
    for (const [i, id] of ids.entries()) await sheets.insert(sheet(id, i * 1000));

    const seen: string[] = [];
    let continuation: string | undefined;
    do {
      const page = await sheets
        .find({ tenant: "acme" })
        .page({ size: 2, ...(continuation ? { continuation } : {}) });
      expect(page.items.length).toBeLessThanOrEqual(2);
      for (const item of page.items) {
        seen.push(item.id);
        expect(item.c599).toBe(ids.indexOf(item.id) * 1000 + 599);
      }
      continuation = page.continuation;
    } while (continuation !== undefined);
    expect(seen).toEqual(ids);

    const iterated: string[] = [];
    for await (const item of sheets.find({ tenant: "acme" })) iterated.push(item.id);
    expect(iterated).toEqual(ids);
    expect((await sheets.find({ tenant: "acme" }).take(3).toArray()).map((s) => s.id)).toEqual([
      "e0",
      "e1",
      "e2",
    ]);
    expect((await sheets.scan().toArray()).map((s) => s.id)).toEqual(ids);
    expect(
      (await sheets.find({ tenant: "acme" }).between({ id: "e1" }, { id: "e3" }).toArray()).map((s) => s.id),
    ).toEqual(["e1", "e2", "e3"]);
    const many = await sheets.getMany([
      { tenant: "acme", id: "e3" },
      { tenant: "acme", id: "nope" },
      { tenant: "acme", id: "e0" },
    ]);
    expect(many.map((s) => s?.id)).toEqual(["e3", undefined, "e0"]);
  });

  it("select fetches only the chosen columns from every row", async () => {
    const { db } = await freshContext(kind, [Sheet]);
    const sheets = db.repository(Sheet);
    await sheets.insert(sheet("s1", 0, "n"));
    const got = (await sheets.get(
      { tenant: "acme", id: "s1" },
      { select: ["c000", "c599"] as never },
    )) as Sheet;
    expect([got.id, got.c000, got.c599, got.c300, got.note]).toEqual(["s1", 0, 599, undefined, undefined]);
    const found = (await sheets
      .find({ tenant: "acme" })
      .select("c300" as never)
      .toArray()) as Sheet[];
    expect(found.map((s) => [s.id, s.c300, s.c000])).toEqual([["s1", 300, undefined]]);
  });

  it("refuses where/filter and db.query with a clear ValidationError", async () => {
    const { db } = await freshContext(kind, [Sheet]);
    const sheets = db.repository(Sheet);
    await sheets.insert(sheet("s1", 0));
    expect(() => sheets.find({ tenant: "acme" }).where({ c000: 0 } as never)).toThrow(ValidationError);
    expect(() => sheets.find({ tenant: "acme" }).filter("c000 eq 0")).toThrow(ValidationError);
    expect(() => db.query(Sheet)).toThrow(/wide entity/);
  });

  it("db.transaction carries a wide entity's rows: inserted, replaced and deleted whole", async () => {
    const { db, prefix, counter } = await freshContext(kind, [Sheet]);
    const sheets = db.repository(Sheet);
    await sheets.insert(sheet("s1", 0, "x".repeat(30_000)));
    const before = await rawRows(counter, `${prefix}WideSheets`, "acme");
    await db.transaction((tx) => {
      tx.insert(sheet("s2", 5));
      tx.upsert(sheet("s1", 9));
    });
    expect((await sheets.getOrThrow({ tenant: "acme", id: "s2" })).c000).toBe(5);
    const s1 = await sheets.getOrThrow({ tenant: "acme", id: "s1" });
    expect(s1.c000).toBe(9);
    expect(s1.note).toBeUndefined();
    // The new version of s1 replaced its rows: as many rows as a fresh insert, none left over.
    await sheets.insert(sheet("s3", 9));
    const after = await rawRows(counter, `${prefix}WideSheets`, "acme");
    const rowsOf = (rows: StoredEntity[], id: string) =>
      rows.filter((row) => row.rowKey.startsWith(`${id} `)).length;
    expect(rowsOf(after, "s1")).toBe(rowsOf(after, "s3"));
    expect(rowsOf(before, "s1")).toBe(rowsOf(after, "s1"));
    await db.transaction((tx) => tx.delete(Sheet, { tenant: "acme", id: "s2" }));
    expect(await sheets.get({ tenant: "acme", id: "s2" })).toBeUndefined();
    expect(await sheets.get({ tenant: "acme", id: "s1" })).toBeDefined();
  });

  it("db.transaction: a wide entity's RowKey with a space is refused before any request, even the other entities' reads", async () => {
    const { db, counter } = await freshContext(kind, [Sheet]);
    counter.reset();
    // The upsert of s1 reads the rows it replaces: planned first, read only once every rule has passed.
    const error = await expectRejection(
      db.transaction((tx) => {
        tx.upsert(sheet("s1", 1));
        tx.upsert(sheet("bad id", 2));
      }),
      ValidationError,
    );
    expect(error.message).toContain("may not contain a space");
    expect(Object.values(counter.calls).reduce((a, c) => a + c, 0)).toBe(0);
  });

  it("bulk writes: a partition's entities share one transaction of their rows, which fails whole", async () => {
    const { db, counter, prefix } = await freshContext(kind, [Sheet]);
    const sheets = db.repository(Sheet);
    await sheets.insert(sheet("taken", 0));
    counter.reset();
    const refused = await sheets.bulkInsert([sheet("b0", 0), sheet("taken", 1), sheet("b1", 1000)]);
    expect(refused.written).toBe(0);
    expect(refused.failed.map((f) => f.items.map((item) => (item as Sheet).id))).toEqual([
      ["b0", "taken", "b1"],
    ]);
    // As any batch: the transaction's error, at the entity it failed on.
    expect(refused.failed[0]?.error).toBeInstanceOf(TransactionError);
    expect(refused.failed[0]?.error).toMatchObject({ statusCode: 409, index: 1 });
    expect(counter.calls.submitTransaction).toBe(1);
    expect(await sheets.get({ tenant: "acme", id: "b0" })).toBeUndefined();

    counter.reset();
    const result = await sheets.bulkInsert([sheet("b0", 0), sheet("b1", 1000)]);
    expect(result).toMatchObject({ written: 2, batches: 1, failed: [] });
    expect(counter.calls.submitTransaction).toBe(1);
    expect((await sheets.getOrThrow({ tenant: "acme", id: "b1" })).c000).toBe(1000);

    const upserted = await sheets.bulkUpsert([sheet("b0", 7), sheet("b2", 8)]);
    expect(upserted.written).toBe(2);
    expect((await sheets.getOrThrow({ tenant: "acme", id: "b0" })).c000).toBe(7);

    const deleted = await sheets.bulkDelete([
      { tenant: "acme", id: "b0" },
      { tenant: "acme", id: "gone" },
      { tenant: "acme", id: "taken" },
    ]);
    expect(deleted.written).toBe(3);
    const left = await rawRows(counter, `${prefix}WideSheets`, "acme");
    expect([...new Set(left.map((r) => r.rowKey.split(" ")[0]))]).toEqual(["b1", "b2"]);
  });

  it("a table per period: the first write creates the period's table, reads find it", async () => {
    const { db } = await freshContext(kind, []);
    const logs = db.repository(WideLog);
    const log = (iso: string, id: string, v: number): WideLog => {
      const l = new WideLog();
      l.source = "web";
      l.at = new Date(iso);
      l.id = id;
      for (let i = 0; i < 300; i++) l[`m${i}`] = v + i;
      return l;
    };
    await logs.insert(log("2026-10-05T00:00:00Z", "a", 0));
    await logs.upsert(log("2026-11-05T00:00:00Z", "b", 100));
    await logs.upsert(log("2026-11-06T00:00:00Z", "c", 200));
    const got = await logs.getOrThrow({ source: "web", at: new Date("2026-10-05T00:00:00Z"), id: "a" });
    expect(got.m299).toBe(299);
    const november = await logs.period(new Date("2026-11-01T00:00:00Z")).find({ source: "web" }).toArray();
    expect(november.map((l) => [l.id, l.m0, l.m299])).toEqual([
      ["b", 100, 399],
      ["c", 200, 499],
    ]);
    expect(await logs.delete({ source: "web", at: new Date("2026-11-05T00:00:00Z"), id: "b" })).toBe(true);
    expect(await logs.period(new Date("2026-12-01T00:00:00Z")).find({ source: "web" }).toArray()).toEqual([]);
  });

  it("hash buckets: a find without the hashed field returns whole entities merged in RowKey order", async () => {
    const { db } = await freshContext(kind, [WideReading]);
    const readings = db.repository(WideReading);
    const devices = ["d1", "d2", "d3", "d4", "d5", "d6"];
    for (const [i, device] of devices.entries()) {
      for (const n of [1, 2]) {
        const r = new WideReading();
        r.device = device;
        r.n = n;
        for (let c = 0; c < 300; c++) r[`r${c}`] = i * 1000 + n * 10 + c;
        await readings.insert(r);
      }
    }
    const all = await readings.find({}).toArray();
    expect(all.map((r) => `${r.device}_${r.n}`)).toEqual(devices.flatMap((d) => [`${d}_1`, `${d}_2`]));
    for (const r of all) expect(r.r299).toBe(devices.indexOf(r.device) * 1000 + r.n * 10 + 299);
    const page = await readings.find({}).page({ size: 5 });
    expect(page.items.length).toBe(5);
    const rest = await readings.find({}).page({ size: 100, continuation: page.continuation });
    expect([...page.items, ...rest.items].map((r) => `${r.device}_${r.n}`)).toEqual(
      all.map((r) => `${r.device}_${r.n}`),
    );
    expect((await readings.find({ device: "d3" }).toArray()).map((r) => r.n)).toEqual([1, 2]);
  });

  it("mutate reads and writes back the whole entity conditionally", async () => {
    const { db } = await freshContext(kind, [Sheet]);
    const sheets = db.repository(Sheet);
    await sheets.insert(sheet("m", 0));
    const written = await sheets.mutate({ tenant: "acme", id: "m" }, (s) => {
      s.c599 = (s.c599 as number) + 1;
      s.note = "mutated";
    });
    expect(written?.c599).toBe(600);
    const read = await sheets.getOrThrow({ tenant: "acme", id: "m" });
    expect([read.c000, read.c599, read.note]).toEqual([0, 600, "mutated"]);
  });

  it("a bulk write of an array checks every entity before the first request", async () => {
    const { db, counter } = await freshContext(kind, [Blobby]);
    const blobs = db.repository(Blobby);
    const ok = new Blobby();
    ok.key = "ok";
    const huge = new Blobby();
    huge.key = "huge";
    for (let i = 0; i < 50; i++) huge[`text${i}`] = "€".repeat(32_000);
    await expectRejection(blobs.bulkInsert([ok, huge]), ValidationError);
    await expectRejection(
      blobs.bulkUpsert([ok, Object.assign(new Blobby(), { key: "a b" })]),
      ValidationError,
    );
    expect(Object.values(counter.calls).reduce((a, c) => a + c, 0)).toBe(0);
  });

  it("past what one transaction carries: a ValidationError naming the limit, before any request", async () => {
    const { db, counter } = await freshContext(kind, [Blobby]);
    const blobs = db.repository(Blobby);
    // 50 strings of 32,000 characters in UTF-8 JSON (3 bytes each): ~4.8 MB of payload.
    const b = new Blobby();
    b.key = "huge";
    for (let i = 0; i < 50; i++) b[`text${i}`] = "€".repeat(32_000);
    const error = await expectRejection(blobs.insert(b), ValidationError);
    expect(error.message).toContain("4 MiB");
    expect(Object.values(counter.calls).reduce((a, c) => a + c, 0)).toBe(0);
  });
});

describe("wide entity definitions", () => {
  const define = (options: Record<string, unknown>, columns = 3): void => {
    class W {
      [k: string]: unknown;
    }
    Column({ type: "String" })(W.prototype, "p");
    Column({ type: "String" })(W.prototype, "r");
    for (let i = 0; i < columns; i++) Column({ type: "Int32" })(W.prototype, `x${i}` as string);
    Entity({ table: "Wides", partitionKey: "{p}", rowKey: "{r}", ...options } as never)(W);
  };

  it("allows more than 252 columns only when wide", () => {
    expect(() => define({}, 300)).toThrow(SchemaError);
    expect(() => define({ wide: true }, 300)).not.toThrow();
    expect(() => define({ wide: true }, 100 * 250)).toThrow(/at most 25000/);
  });

  it("names what a wide entity cannot be combined with", () => {
    // Indexes compose with wide entities (issue 18): their copies hold keys and index key fields.
    expect(() =>
      define({ wide: true, rowKey: "e_{r}", indexes: { byX: { rowKey: "x_{x0}" } } }, 300),
    ).not.toThrow();
    expect(() => define({ wide: true, rowKey: "a {r}" })).toThrow(/may not contain a space/);
    expect(() => define({ wide: true, partitionKey: "{p:hash:4}" })).toThrow(/first field of its rowKey/);
    expect(() => define({ wide: true, partitionKey: "{p:hash:4}", rowKey: "{p}_{r}" })).not.toThrow();
    expect(() => define({ wide: "yes" })).toThrow(SchemaError);
  });

  it("the stored format is fixed: RowKey + space + two-digit part", async () => {
    const store = new MemoryStore();
    const db = new TableContext({ store });
    await db.ensureTables(Sheet);
    await db.repository(Sheet).insert(sheet("id", 0));
    const rows = await rawRows(store, "WideSheets", "acme");
    expect(rows.map((r) => [r.rowKey, r._tkWide?.toString().split(":")[0]])).toEqual([
      ["id 00", "3"],
      ["id 01", "3"],
      ["id 02", "3"],
    ]);
    // Declaration order: the first row starts with the first columns.
    expect(rows[0]?.tenant).toBe("acme");
    expect(rows[0]?.c000).toBe(0);
    expect(rows[2]?.c599).toBe(599);
  });
});
