/**
 * Data series (`@Column({ type, series: N })`): one stored property per slot, read back as an
 * array of length N, single slots merged by `patch`. The stored rows are checked through the raw
 * store (what the SDK sees), against names computed here from the rule, not by the code under test.
 */
import { describe, expect, it } from "vitest";
import { Column, Entity, ValidationError } from "../../src/index.js";
import { isUserProperty } from "../../src/wire/system-properties.js";
import { freshContext, stores } from "../fixtures/context.js";
import { expectRejection } from "../support/rejection.js";

@Entity({ table: "Meters", partitionKey: "{meter}", rowKey: "{day}" })
class Meter {
  @Column({ type: "String" }) meter!: string;
  @Column({ type: "String" }) day!: string;
  @Column({ type: "Int32", series: 24 }) hourly!: Array<number | undefined>;
  @Column({ type: "DateTime", series: 3, name: "seen" }) sightings?: Array<Date | undefined>;
  @Column({ type: "Int64", series: 11 }) big?: Array<bigint | undefined>;
  @Column({ type: "String" }) note?: string;
}

@Entity({
  table: "IdxMeters",
  partitionKey: "{meter}",
  rowKey: "d_{day}",
  indexes: { byNote: { rowKey: "n_{note}", project: ["hourly"] } },
})
class IndexedMeter {
  @Column({ type: "String" }) meter!: string;
  @Column({ type: "String" }) day!: string;
  @Column({ type: "String" }) note!: string;
  @Column({ type: "Int32", series: 4 }) hourly!: Array<number | undefined>;
  @Column({ type: "Int32" }) other?: number;
}

/** The stored name of slot `i` of a series of `n`: prefix + i zero-padded to the digits of n - 1. */
const slotName = (prefix: string, i: number, n: number): string =>
  prefix + String(i).padStart(String(n - 1).length, "0");

const meter = (hourly: Array<number | undefined>, extra: Partial<Meter> = {}): Meter =>
  Object.assign(new Meter(), { meter: "m1", day: "20261126", hourly, ...extra });

const userProperties = (row: object | undefined): Record<string, unknown> =>
  Object.fromEntries(Object.entries(row ?? {}).filter(([name]) => isUserProperty(name)));

describe.each(stores)("data series on %s", (_name, kind) => {
  it("stores one property per slot, zero-padded, and reads back an array of length N", async () => {
    const { db, counter, prefix } = await freshContext(kind, [Meter]);
    const meters = db.repository(Meter);
    const hourly = Array.from({ length: 24 }, (_, i) => (i % 5 === 0 ? undefined : i * 10));
    const at = new Date("2026-11-26T12:00:00.000Z");
    await meters.insert(
      meter(hourly, {
        sightings: [undefined, at],
        big: [...new Array<bigint | undefined>(10).fill(undefined), 7n],
      }),
    );

    const raw = await counter.getEntity(`${prefix}Meters`, "m1", "20261126");
    const expected: Record<string, unknown> = {};
    hourly.forEach((v, i) => {
      if (v !== undefined) expected[slotName("hourly", i, 24)] = v;
    });
    expected[slotName("seen", 1, 3)] = at;
    expected[slotName("big", 10, 11)] = 7n;
    const stored = userProperties(raw);
    delete stored.meter;
    delete stored.day;
    expect(Object.keys(stored).sort()).toEqual(Object.keys(expected).sort());
    expect(stored.hourly01).toBe(10);
    expect(stored.big10).toBe(7n);
    expect((stored.seen1 as Date).toISOString()).toBe(at.toISOString());

    const read = await meters.getOrThrow({ meter: "m1", day: "20261126" });
    expect(read.hourly).toHaveLength(24);
    expect(read.hourly).toEqual(hourly);
    expect(read.sightings).toEqual([undefined, at, undefined]);
    expect(read.big?.[10]).toBe(7n);
    expect(read.big).toHaveLength(11);
    // A row without any slot still reads as a full-length array of undefined.
    await meters.insert(Object.assign(new Meter(), { meter: "m1", day: "20261127" }));
    const empty = await meters.getOrThrow({ meter: "m1", day: "20261127" });
    expect(empty.hourly).toEqual(new Array(24).fill(undefined));
    // A shorter array fills the first slots; the rest read as undefined.
    await meters.upsert(meter([1, 2]));
    expect((await meters.getOrThrow({ meter: "m1", day: "20261126" })).hourly).toEqual([
      1,
      2,
      ...new Array(22).fill(undefined),
    ]);
  });

  it("replace drops slots written as undefined; merge keeps them", async () => {
    const { db, counter, prefix } = await freshContext(kind, [Meter]);
    const meters = db.repository(Meter);
    const key = { meter: "m1", day: "20261126" };
    await meters.insert(meter(new Array(24).fill(1)));
    const slots = new Array<number | undefined>(24).fill(2);
    slots[5] = undefined;
    await meters.upsert(meter(slots), { mode: "merge" });
    expect((await meters.getOrThrow(key)).hourly[5]).toBe(1);
    await meters.upsert(meter(slots));
    expect((await meters.getOrThrow(key)).hourly[5]).toBeUndefined();
    const raw = await counter.getEntity(`${prefix}Meters`, "m1", "20261126");
    expect(raw && "hourly05" in raw).toBe(false);
    expect(raw?.hourly04).toBe(2);
  });

  it("patch merges a single slot in one request, leaving every other property as stored", async () => {
    const { db, counter, prefix } = await freshContext(kind, [Meter]);
    const meters = db.repository(Meter);
    const key = { meter: "m1", day: "20261126" };
    const hourly = Array.from({ length: 24 }, (_, i) => i);
    await meters.insert(meter(hourly, { note: "n" }));
    const before = userProperties(await counter.getEntity(`${prefix}Meters`, "m1", "20261126"));
    counter.reset();
    await meters.patch(key, { hourly: { 13: 500 } });
    expect(counter.requests).toBe(1);
    expect(counter.calls.upsert).toBe(1);
    const after = userProperties(await counter.getEntity(`${prefix}Meters`, "m1", "20261126"));
    const changed = Object.keys(after).filter((name) => after[name] !== before[name]);
    expect(changed).toEqual(["hourly13"]);
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
    expect((await meters.getOrThrow(key)).hourly).toEqual(hourly.map((v, i) => (i === 13 ? 500 : v)));

    // Several slots and a plain column at once; undefined slots are not changes.
    await meters.patch(key, { hourly: { 0: -1, 23: 99, 4: undefined }, note: "m" });
    const read = await meters.getOrThrow(key);
    expect(read.hourly[0]).toBe(-1);
    expect(read.hourly[23]).toBe(99);
    expect(read.hourly[4]).toBe(4);
    expect(read.note).toBe("m");
    // Patching an absent entity creates it with just that slot.
    await meters.patch({ meter: "m2", day: "20261126" }, { hourly: { 2: 7 } });
    const created = await meters.getOrThrow({ meter: "m2", day: "20261126" });
    expect(created.hourly).toEqual([undefined, undefined, 7, ...new Array(21).fill(undefined)]);
  });

  it("select of a series column selects all its slots", async () => {
    const { db } = await freshContext(kind, [Meter]);
    const meters = db.repository(Meter);
    const hourly = Array.from({ length: 24 }, (_, i) => i + 1);
    await meters.insert(meter(hourly, { note: "n", sightings: [new Date(0)] }));
    const [row] = await meters.find({ meter: "m1" }).select("hourly").toArray();
    expect(row?.hourly).toEqual(hourly);
    expect((row as Meter).note).toBeUndefined();
    const got = await meters.get({ meter: "m1", day: "20261126" }, { select: ["hourly"] });
    expect(got?.hourly).toEqual(hourly);
  });

  it("index copies carry the series, and patching a slot keeps them exact", async () => {
    const { db } = await freshContext(kind, [IndexedMeter]);
    const meters = db.repository(IndexedMeter);
    const key = { meter: "m1", day: "20261126" };
    await meters.insert(
      Object.assign(new IndexedMeter(), { ...key, note: "a", hourly: [1, 2, 3, 4], other: 5 }),
    );
    await meters.patch(key, { hourly: { 2: 30 } });
    const copy = await meters.index("byNote").get({ meter: "m1", note: "a" });
    expect(copy?.hourly).toEqual([1, 2, 30, 4]);
    expect((await meters.getOrThrow(key)).hourly).toEqual([1, 2, 30, 4]);
    expect((await meters.getOrThrow(key)).other).toBe(5);
  });

  it("refuses bad slots, too many values and bad slot values before any request", async () => {
    const { db, counter } = await freshContext(kind, [Meter]);
    const meters = db.repository(Meter);
    const key = { meter: "m1", day: "20261126" };
    const badPatches: unknown[] = [
      { hourly: { 24: 1 } },
      { hourly: { [-1]: 1 } },
      { hourly: { 1.5: 1 } },
      { hourly: { "01": 1 } },
      { hourly: { x: 1 } },
      { hourly: { 3: "three" } },
      { hourly: { 3: 2 ** 31 } },
      { hourly: { 3: null } },
      { hourly: 5 },
      { hourly: new Array(25).fill(1) },
      { big: { 0: 1.5 } },
      { hourly: { 3: undefined } },
    ];
    for (const changes of badPatches) {
      await expectRejection(meters.patch(key, changes as never), ValidationError);
    }
    await expectRejection(meters.insert(meter(new Array(25).fill(0))), ValidationError);
    await expectRejection(meters.insert(meter([1, 2.5])), ValidationError);
    await expectRejection(meters.insert(meter("nope" as never)), ValidationError);
    await expectRejection(meters.upsert(meter([1], { sightings: [new Date(Number.NaN)] })), ValidationError);
    await expectRejection(meters.bulkInsert([meter([1]), meter(new Array(30).fill(1))]), ValidationError);
    expect(() => meters.find({ meter: "m1" }).where({ hourly: [1] as never })).toThrow(ValidationError);
    expect(counter.requests).toBe(0);
  });
});
