import { describe, expect, it } from "vitest";
import { Column, Entity } from "../../src/index.js";
import { freshContext, stores } from "../fixtures/context.js";

/** Readings partitioned by UTC day; the instant itself lives only in the stored column. */
@Entity({ table: "Readings", partitionKey: "day_{at:day}", rowKey: "{id}" })
class Reading {
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Double" }) value!: number;
}

/** Partitioned by month with the exact instant in the RowKey as ticks. */
@Entity({ table: "Ticks", partitionKey: "{at:month}", rowKey: "{at:ticks}" })
class Tick {
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "Int32" }) n!: number;
}

function reading(iso: string, id: string, value: number): Reading {
  return Object.assign(new Reading(), { at: new Date(iso), id, value });
}

describe.each(stores)("period placeholders in keys on %s", (_name, kind) => {
  it("partitions by period and reads the stored instant back exactly", async () => {
    const { db, counter } = await freshContext(kind, [Reading]);
    const readings = db.repository(Reading);
    await readings.insert(reading("2026-11-25T13:45:12.345Z", "a", 1));
    await readings.insert(reading("2026-11-25T23:59:59.999Z", "b", 2));
    await readings.insert(reading("2026-11-26T00:00:00.000Z", "c", 3));
    counter.reset();

    const got = await readings.get({ at: new Date("2026-11-25T13:45:12.345Z"), id: "a" });
    expect(got?.at.toISOString()).toBe("2026-11-25T13:45:12.345Z");
    expect(counter.requests).toBe(1);

    // Any instant of the day names the day's partition.
    const day = await readings.find({ at: new Date("2026-11-25T00:00:00Z") }).toArray();
    expect(day.map((r) => [r.id, r.at.toISOString()])).toEqual([
      ["a", "2026-11-25T13:45:12.345Z"],
      ["b", "2026-11-25T23:59:59.999Z"],
    ]);
    const raw = await db.store.getEntity(readings.table, "day_20261126", "c");
    expect(raw?.rowKey).toBe("c");
  });

  it("never restores a field from a period key: a projection without it leaves it unset", async () => {
    const { db } = await freshContext(kind, [Reading]);
    const readings = db.repository(Reading);
    await readings.insert(reading("2026-11-25T13:45:12.345Z", "a", 1));
    const [row] = await readings
      .find({ at: new Date("2026-11-25T08:00:00Z") })
      .select("value")
      .toArray();
    const projected = row as Partial<Reading>;
    expect(projected.id).toBe("a");
    expect(projected.value).toBe(1);
    expect(projected.at).toBeUndefined();
  });

  it("restores the field from an exact placeholder in the other key", async () => {
    const { db } = await freshContext(kind, [Tick]);
    const ticks = db.repository(Tick);
    await ticks.insert(Object.assign(new Tick(), { at: new Date("2026-11-25T13:45:12.345Z"), n: 1 }));
    // Both keys hold `at`: the month in the PartitionKey, the exact instant in the RowKey.
    const at = new Date("2026-11-25T13:45:12.345Z");
    const [row] = await ticks.find({ at }).select("n").toArray();
    expect((row as Partial<Tick>).at?.toISOString()).toBe("2026-11-25T13:45:12.345Z");
  });
});
