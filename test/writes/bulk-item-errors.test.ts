/**
 * A bulk write with one invalid item rejects the whole input before any request, and its
 * ValidationError names the item: its position in the input (`itemIndex`, from 0) and its keys where
 * they encode, beside the field and rule. Validation happens before the store is reached, so
 * MemoryStore (behind a request counter) stands for every store.
 */
import { describe, expect, it } from "vitest";
import { Column, Entity, TableContext, ValidationError } from "../../src/index.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { CountingStore } from "../support/counting-store.js";
import { rejectionOf } from "./harness.js";
import { Reading, reading } from "./models.js";

/** An entity with an index: its bulk writes go through the planned path (rows and copies together). */
@Entity({
  table: "BieBadges",
  partitionKey: "{team}",
  rowKey: "b_{id:4}",
  indexes: { byCode: { partitionKey: "{team}", rowKey: "code_{code}" } },
})
class Badge {
  @Column({ type: "String" }) team!: string;
  @Column({ type: "Int32" }) id!: number;
  @Column({ type: "String" }) code!: string;
  @Column({ type: "Int32" }) level!: number;
}

/** An entity kept in a table per month: a bulk write splits its input into one group per table. */
@Entity({ table: "BieLogs{at:month}", partitionKey: "{source}", rowKey: "{n:4}" })
class LogLine {
  @Column({ type: "String" }) source!: string;
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "Int32" }) n!: number;
  @Column({ type: "Int32" }) size!: number;
}

const OUT_OF_RANGE = 2 ** 31; // one past Int32's maximum

async function context(): Promise<{ db: TableContext; counter: CountingStore }> {
  const counter = new CountingStore(new MemoryStore());
  const db = new TableContext({ store: counter });
  await db.ensureTables(Reading, Badge);
  counter.reset();
  return { db, counter };
}

function expectItem(
  error: unknown,
  expected: { itemIndex: number; rule: string; field?: string; partitionKey?: string; rowKey?: string },
): void {
  expect(error).toBeInstanceOf(ValidationError);
  const e = error as ValidationError;
  expect({
    itemIndex: e.itemIndex,
    rule: e.rule,
    field: e.field,
    partitionKey: e.partitionKey,
    rowKey: e.rowKey,
  }).toEqual({
    field: undefined,
    partitionKey: undefined,
    rowKey: undefined,
    ...expected,
  });
  expect(e.message).toContain(`bulk item ${expected.itemIndex}`);
  if (expected.partitionKey !== undefined)
    expect(e.message).toContain(`PartitionKey '${expected.partitionKey}'`);
  if (expected.rowKey !== undefined) expect(e.message).toContain(`RowKey '${expected.rowKey}'`);
  // The error about the value itself stays the cause.
  expect(e.cause).toBeInstanceOf(ValidationError);
  expect(e.message.startsWith((e.cause as Error).message)).toBe(true);
}

describe("a bulk write's ValidationError names the bad item", () => {
  it("bulkInsert and bulkUpsert of an array: its position and keys, nothing sent", async () => {
    const { db, counter } = await context();
    const readings = db.repository(Reading);
    const items = Array.from({ length: 300 }, (_, i) => reading(i % 7, i, 1));
    const bad = 217;
    (items[bad] as Reading).round = OUT_OF_RANGE;
    const expected = {
      itemIndex: bad,
      rule: "range",
      field: "round",
      partitionKey: (items[bad] as Reading).sensor,
      rowKey: "r_000217",
    };
    expectItem(await rejectionOf(readings.bulkInsert(items)), expected);
    expectItem(await rejectionOf(readings.bulkUpsert(items)), expected);
    expect(counter.requests).toBe(0);
  });

  it("an async source: the position counts every item pulled", async () => {
    const { db } = await context();
    async function* source() {
      for (let i = 0; i < 40; i++)
        yield i === 33 ? Object.assign(reading(1, i, 1), { sensor: "s#1" }) : reading(1, i, 1);
    }
    // The PartitionKey does not encode (a '#'); the RowKey still does.
    expectItem(await rejectionOf(db.repository(Reading).bulkUpsert(source())), {
      itemIndex: 33,
      rule: "key-characters",
      field: "sensor",
      rowKey: "r_000033",
    });
  });

  it("bulkDelete: a key field missing", async () => {
    const { db, counter } = await context();
    const keys: Partial<Reading>[] = [
      { sensor: "s001", seq: 1 },
      { sensor: "s001", seq: 2 },
      { sensor: "s002" },
    ];
    expectItem(await rejectionOf(db.repository(Reading).bulkDelete(keys)), {
      itemIndex: 2,
      rule: "key-field-missing",
      field: "seq",
      partitionKey: "s002",
    });
    expect(counter.requests).toBe(0);
  });

  it("an indexed entity (rows and copies planned together)", async () => {
    const { db, counter } = await context();
    const badges = Array.from({ length: 12 }, (_, i) =>
      Object.assign(new Badge(), { team: "red", id: i, code: `c${i}`, level: i === 9 ? OUT_OF_RANGE : 1 }),
    );
    expectItem(await rejectionOf(db.repository(Badge).bulkInsert(badges)), {
      itemIndex: 9,
      rule: "range",
      field: "level",
      partitionKey: "red",
      rowKey: "b_0009",
    });
    expect(counter.requests).toBe(0);
  });

  it("a table per period: the position in the whole input, not in its month's group", async () => {
    const { db } = await context();
    const month = (m: number, n: number, size = 1) =>
      Object.assign(new LogLine(), { source: "app", at: new Date(Date.UTC(2026, m, 2)), n, size });
    // Items alternate between two months; the bad one is the second of March's group.
    const lines = [month(0, 0), month(2, 1), month(0, 2), month(2, 3, OUT_OF_RANGE), month(0, 4)];
    expectItem(await rejectionOf(db.repository(LogLine).bulkUpsert(lines)), {
      itemIndex: 3,
      rule: "range",
      field: "size",
      partitionKey: "app",
      rowKey: "0003",
    });
    // Without its period field an item cannot be routed: named by position too.
    const unrouted = [month(0, 0), Object.assign(new LogLine(), { source: "app", n: 1, size: 1 })];
    const missing = await rejectionOf(db.repository(LogLine).bulkUpsert(unrouted));
    expect(missing).toBeInstanceOf(ValidationError);
    expect((missing as ValidationError).itemIndex).toBe(1);
    expect((missing as ValidationError).message).toContain("bulk item 1");
  });
});
