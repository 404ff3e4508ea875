import { describe, expect, it } from "vitest";
import { Column, Entity, MemoryStore, TableContext, type TableKitEvent } from "../../src/index.js";

@Entity({ table: "SwLogs", partitionKey: "{at}", rowKey: "{id}" })
class IsoLog {
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "String" }) id!: string;
}

@Entity({ table: "SwTicks", partitionKey: "log_{at:ticks}", rowKey: "{id}" })
class TicksLog {
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "String" }) id!: string;
}

@Entity({ table: "SwMonth", partitionKey: "{at:month}", rowKey: "{id}" })
class MonthLog {
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "String" }) id!: string;
}

@Entity({ table: "SwDesc", partitionKey: "{at:desc}", rowKey: "{id}" })
class DescLog {
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "String" }) id!: string;
}

@Entity({ table: "SwBucket", partitionKey: "{id:hash:16}", rowKey: "{at}_{id}" })
class BucketLog {
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "String" }) id!: string;
}

@Entity({ table: "SwLater", partitionKey: "{id}_{at}", rowKey: "x" })
class LaterTime {
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "String" }) id!: string;
}

function warnings(
  use: (db: TableContext) => unknown,
): Array<Extract<TableKitEvent, { type: "schema-warning" }>> {
  const events: TableKitEvent[] = [];
  const db = new TableContext({ store: new MemoryStore(), onEvent: (e) => events.push(e) });
  use(db);
  return events.filter((e) => e.type === "schema-warning");
}

describe("schema-warning: a PartitionKey beginning with an ascending time", () => {
  it("is reported once per context per entity, naming the anti-pattern and the bucket fix", async () => {
    const found = await warnings(async (db) => {
      db.repository(IsoLog);
      db.repository(IsoLog);
      db.repository(TicksLog);
      await db.ensureTables(IsoLog, TicksLog, MonthLog);
    });
    expect(found.map((e) => e.entity)).toEqual(["IsoLog", "TicksLog", "MonthLog"]);
    for (const event of found) {
      expect(event.rule).toBe("append-only-partition");
      expect(event.message).toMatch(/append-only/);
      expect(event.message).toMatch(/prepend\/append/);
      expect(event.message).toMatch(/:hash:16/);
    }
    // A second context reports it again: each context has its own listener.
    expect(await warnings((db) => db.repository(IsoLog))).toHaveLength(1);
  });

  it("is not reported for hash buckets or a time after another field", async () => {
    expect(
      await warnings((db) => {
        db.repository(BucketLog);
        db.repository(LaterTime);
      }),
    ).toEqual([]);
  });
});

@Entity({ table: "SwDescTicks", partitionKey: "log_{at:desc}", rowKey: "{id}" })
class DescTicksLog {
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "String" }) id!: string;
}

describe("schema-warning: a PartitionKey beginning with a descending time", () => {
  it("is reported as prepend-only-partition ({at:desc}: inverted ticks), with or without a literal prefix, beside append-only", async () => {
    const found = await warnings((db) => {
      db.repository(DescLog);
      db.repository(DescTicksLog);
      db.repository(IsoLog);
    });
    expect(found.map((e) => [e.entity, e.rule])).toEqual([
      ["DescLog", "prepend-only-partition"],
      ["DescTicksLog", "prepend-only-partition"],
      ["IsoLog", "append-only-partition"],
    ]);
    for (const event of found.slice(0, 2)) {
      expect(event.message).toMatch(/prepend-only/);
      expect(event.message).toMatch(/:hash:16/);
    }
  });
});
