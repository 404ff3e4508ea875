import { describe, expect, it } from "vitest";
import {
  Column,
  Entity,
  EntityNotFoundError,
  SchemaError,
  TransactionError,
  ValidationError,
} from "../../src/index.js";
import { freshContext, stores } from "../fixtures/context.js";
import { rejectionOf } from "../support/rejection.js";

/** The guide's high-volume delete pattern: one table per UTC month. */
@Entity({ table: "Logs{at:month}", partitionKey: "{source}", rowKey: "{at:ticks}_{id}" })
class LogEntry {
  @Column({ type: "String" }) source!: string;
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "String" }) text!: string;
}

function entry(iso: string, id: string, source = "web"): LogEntry {
  return Object.assign(new LogEntry(), { source, at: new Date(iso), id, text: `${id}@${iso}` });
}

/** Defines an entity and returns the SchemaError that its definition raised. */
function schemaError(define: () => unknown): SchemaError {
  try {
    define();
  } catch (error) {
    expect(error).toBeInstanceOf(SchemaError);
    return error as SchemaError;
  }
  throw new Error("expected a SchemaError");
}

describe("table templates are checked at definition time", () => {
  it("accepts only one period placeholder of a DateTime field, with a valid table name around it", () => {
    const bad: [string, RegExp][] = [
      ["Logs{id}", /exactly one period placeholder/],
      ["Logs{at:week}", /not a period/],
      ["Logs{at}", /exactly one period placeholder/],
      ["Logs{n:month}", /must be a DateTime column/],
      ["Logs{missing:month}", /unknown field 'missing'/],
      ["{at:month}Logs", /starting with a letter/],
      ["Lo_gs{at:month}", /letters and digits/],
      ["Logs{at:month}{at:day}", /exactly one period placeholder/],
      [`L${"x".repeat(58)}{at:month}`, /over the service's 63/],
    ];
    for (const [table, message] of bad) {
      const error = schemaError(() => {
        @Entity({ table, partitionKey: "{id}", rowKey: "r" })
        class Bad {
          @Column({ type: "DateTime" }) at!: Date;
          @Column({ type: "String" }) id!: string;
          @Column({ type: "Int32" }) n!: number;
        }
        return Bad;
      });
      expect(error.message, table).toMatch(message);
    }
  });

  it("accepts copy and list indexes on a table per period, of an entity kept in one or beside it", () => {
    @Entity({
      table: "Logs{at:day}",
      partitionKey: "{id}",
      rowKey: "r",
      indexes: {
        byText: { partitionKey: "{text}", rowKey: "{id}" },
        fixed: { table: "LogTexts", partitionKey: "{text}", rowKey: "{id}" },
        daily: { table: "LogTexts{at:day}", partitionKey: "{text}", rowKey: "{id}" },
      },
    })
    class Indexed {
      @Column({ type: "DateTime" }) at!: Date;
      @Column({ type: "String" }) id!: string;
      @Column({ type: "String" }) text!: string;
    }
    expect(Indexed).toBeDefined();
    // A list elsewhere names each entity's period table in its entries (its keys alone do not say it).
    @Entity({
      table: "Logs{at:day}",
      partitionKey: "{id}",
      rowKey: "r",
      indexes: { byText: { table: "LogTexts", partitionKey: "{text}", rowKey: "t", list: true } },
    })
    class Listed {
      @Column({ type: "DateTime" }) at!: Date;
      @Column({ type: "String" }) id!: string;
      @Column({ type: "String" }) text!: string;
    }
    expect(Listed).toBeDefined();
    @Entity({
      table: "Logs{at:day}",
      partitionKey: "{id}",
      rowKey: "r",
      indexes: { byText: { partitionKey: "{text}", rowKey: "t_{text}", list: true } },
    })
    class ListedBeside {
      @Column({ type: "DateTime" }) at!: Date;
      @Column({ type: "String" }) id!: string;
      @Column({ type: "String" }) text!: string;
    }
    expect(ListedBeside).toBeDefined();
    // A fixed table's entities listed in a table per period: the entries' keys name the entity's one table.
    @Entity({
      table: "Logs",
      partitionKey: "{id}",
      rowKey: "r",
      indexes: { byText: { table: "LogTexts{at:day}", partitionKey: "{text}", rowKey: "t", list: true } },
    })
    class ListedPerDay {
      @Column({ type: "DateTime" }) at!: Date;
      @Column({ type: "String" }) id!: string;
      @Column({ type: "String" }) text!: string;
    }
    expect(ListedPerDay).toBeDefined();
    const badIndexTable = schemaError(() => {
      @Entity({
        table: "Logs{at:day}",
        partitionKey: "{id}",
        rowKey: "r",
        indexes: { byText: { table: "LogTexts{id:day}", partitionKey: "{text}", rowKey: "{id}" } },
      })
      class BadIndexTable {
        @Column({ type: "DateTime" }) at!: Date;
        @Column({ type: "String" }) id!: string;
        @Column({ type: "String" }) text!: string;
      }
      return BadIndexTable;
    });
    expect(badIndexTable.message).toMatch(/BadIndexTable\.indexes\.byText: table/);
  });
});

describe.each(stores)("table per period on %s", (_name, kind) => {
  it("creates a period's table on its first write only: one request per write afterwards", async () => {
    const { db, counter, prefix } = await freshContext(kind, [LogEntry]);
    expect(counter.requests).toBe(0);
    expect(await db.tablesOf(LogEntry)).toEqual([]);
    const logs = db.repository(LogEntry);

    counter.reset();
    await logs.insert(entry("2026-11-25T13:00:00.000Z", "a"));
    // The insert meets TableNotFound, creates the table and retries once.
    // The missing table's period is looked up among the dropped ones (one read) before it is created.
    expect(counter.log.map((call) => call.method)).toEqual(["insert", "getEntity", "createTable", "insert"]);
    expect(counter.log[2]?.table).toBe(`${prefix}Logs202611`);

    counter.reset();
    await logs.insert(entry("2026-11-30T23:59:59.999Z", "b"));
    await logs.upsert(entry("2026-11-01T00:00:00.000Z", "c"));
    expect(counter.log.map((call) => call.method)).toEqual(["insert", "upsert"]);

    counter.reset();
    await logs.upsert(entry("2026-12-01T00:00:00.000Z", "d"));
    expect(counter.log.map((call) => call.method)).toEqual(["upsert", "getEntity", "createTable", "upsert"]);
    expect(await db.tablesOf(LogEntry)).toEqual([`${prefix}Logs202611`, `${prefix}Logs202612`]);
  });

  it("reads need the period field; a period without a table reads as empty", async () => {
    const { db, counter } = await freshContext(kind, [LogEntry]);
    const logs = db.repository(LogEntry);
    const first = entry("2026-11-25T13:00:00.000Z", "a");
    await logs.insert(first);
    counter.reset();

    expect(() => logs.find({ source: "web" })).toThrow(ValidationError);
    expect(await rejectionOf(logs.get({ source: "web", id: "a" } as Partial<LogEntry>))).toBeInstanceOf(
      ValidationError,
    );
    expect(() => logs.scan()).toThrow(ValidationError);
    expect(counter.requests).toBe(0);

    const got = await logs.get({ source: "web", at: first.at, id: "a" });
    expect(got?.text).toBe(first.text);
    const november = await logs.find({ source: "web", at: new Date("2026-11-02T00:00:00Z") }).toArray();
    // The RowKey starts with the instant: a find with `at` reads that instant's rows in its period's table.
    expect(november).toEqual([]);
    const exact = await logs.find({ source: "web", at: first.at }).toArray();
    expect(exact.map((row) => row.id)).toEqual(["a"]);
    expect(await logs.get({ source: "web", at: new Date("2025-01-01T00:00:00Z"), id: "a" })).toBeUndefined();
    expect(await logs.delete({ source: "web", at: new Date("2025-01-01T00:00:00Z"), id: "a" })).toBe(false);
    const ghost = entry("2025-01-01T00:00:00Z", "g");
    expect(await rejectionOf(logs.update(ghost, { ifMatch: "*" }))).toBeInstanceOf(EntityNotFoundError);
    expect(await db.tablesOf(LogEntry)).toHaveLength(1);
  });

  it("drops every table wholly before an instant, one request per table, leaving later periods", async () => {
    const { db, counter, prefix } = await freshContext(kind, [LogEntry]);
    const logs = db.repository(LogEntry);
    const rows = [
      entry("2026-09-10T00:00:00.000Z", "sep"),
      entry("2026-10-31T23:59:59.999Z", "oct"),
      entry("2026-11-01T00:00:00.000Z", "nov1"),
      entry("2026-11-20T00:00:00.000Z", "nov2"),
    ];
    for (const row of rows) await logs.insert(row);
    counter.reset();

    // November is not wholly before Nov 15: it stays, with both its rows.
    const dropped = await db.dropTables(LogEntry, { before: new Date("2026-11-15T00:00:00Z") });
    expect(dropped).toEqual([`${prefix}Logs202609`, `${prefix}Logs202610`]);
    // The cut-off is stored first (TablekitPeriods: created, read, written), then the tables go.
    expect(counter.log.map((call) => call.method)).toEqual([
      "listTables",
      "createTable",
      "getEntity",
      "insert",
      "deleteTable",
      "deleteTable",
    ]);
    expect(await db.tablesOf(LogEntry)).toEqual([`${prefix}Logs202611`]);
    for (const row of rows.slice(2)) expect((await logs.get(row))?.text).toBe(row.text);
    expect(await logs.get(rows[0] as LogEntry)).toBeUndefined();

    // A bound exactly at a period's end drops it.
    expect(await db.dropTables(LogEntry, { before: new Date("2026-12-01T00:00:00Z") })).toEqual([
      `${prefix}Logs202611`,
    ]);
    expect(await db.tablesOf(LogEntry)).toEqual([]);
    await expect(db.dropTables(LogEntry, { before: "2026" as unknown as Date })).rejects.toBeInstanceOf(
      ValidationError,
    );
  });

  it("bulk writes and transactions go to each entity's period table", async () => {
    const { db, prefix } = await freshContext(kind, [LogEntry]);
    const logs = db.repository(LogEntry);
    const rows = [
      entry("2026-01-05T00:00:00.000Z", "j1"),
      entry("2026-02-05T00:00:00.000Z", "f1"),
      entry("2026-01-06T00:00:00.000Z", "j2"),
    ];
    const result = await logs.bulkInsert(rows);
    expect(result.failed).toEqual([]);
    expect(result.written).toBe(3);
    expect(await db.tablesOf(LogEntry)).toEqual([`${prefix}Logs202601`, `${prefix}Logs202602`]);
    for (const row of rows) expect((await logs.get(row))?.text).toBe(row.text);

    const march = [entry("2026-03-01T00:00:00.000Z", "m1"), entry("2026-03-02T00:00:00.000Z", "m2")];
    await logs.insert(march[0] as LogEntry);
    await db.transaction((tx) => {
      tx.upsert(march[1] as LogEntry);
      tx.delete(LogEntry, march[0] as LogEntry);
    });
    expect(await logs.get(march[0] as LogEntry)).toBeUndefined();
    expect((await logs.get(march[1] as LogEntry))?.id).toBe("m2");

    const deleted = await logs.bulkDelete(rows);
    expect(deleted.failed).toEqual([]);
    for (const row of rows) expect(await logs.get(row)).toBeUndefined();
  });
});

describe.each(stores)("writes meeting a period table that does not exist yet on %s", (_name, kind) => {
  it("a transaction creates the table and is sent once more; later transactions cost one request", async () => {
    const { db, counter, prefix } = await freshContext(kind, [LogEntry]);
    const logs = db.repository(LogEntry);
    const april = [entry("2026-04-01T00:00:00.000Z", "a1"), entry("2026-04-02T00:00:00.000Z", "a2")];
    counter.reset();
    await db.transaction((tx) => {
      tx.insert(april[0] as LogEntry);
      tx.upsert(april[1] as LogEntry);
    });
    expect(counter.log.map((call) => call.method)).toEqual([
      "submitTransaction",
      "getEntity",
      "createTable",
      "submitTransaction",
    ]);
    expect(counter.log[2]?.table).toBe(`${prefix}Logs202604`);
    for (const row of april) expect((await logs.get(row))?.text).toBe(row.text);

    counter.reset();
    await db.transaction((tx) => tx.upsert(entry("2026-04-03T00:00:00.000Z", "a3")));
    expect(counter.log.map((call) => call.method)).toEqual(["submitTransaction"]);
    // Deletes alone in a period without a table create nothing: the service's answer stands.
    counter.reset();
    const error = await rejectionOf(
      db.transaction((tx) => tx.delete(LogEntry, entry("2026-05-01T00:00:00.000Z", "m"), { ifMatch: "*" })),
    );
    expect(error).toBeInstanceOf(TransactionError);
    expect(counter.log.map((call) => call.method)).toEqual(["submitTransaction"]);
    expect(await db.tablesOf(LogEntry)).toEqual([`${prefix}Logs202604`]);
  });

  it("bulk writes create each new period's table on its first batch only, and bulk deletes of a missing period succeed", async () => {
    const { db, counter, prefix } = await freshContext(kind, [LogEntry]);
    const logs = db.repository(LogEntry);
    const rows = [
      entry("2026-06-05T00:00:00.000Z", "j1"),
      entry("2026-07-05T00:00:00.000Z", "l1"),
      entry("2026-06-06T00:00:00.000Z", "j2"),
      entry("2026-06-06T00:00:00.000Z", "j3", "api"),
    ];
    counter.reset();
    const result = await logs.bulkInsert(rows);
    expect(result.failed).toEqual([]);
    expect(result.written).toBe(4);
    const created = counter.log.filter((call) => call.method === "createTable").map((call) => call.table);
    // One table per new period; a batch of a period whose table another batch just created may create it again.
    expect([...new Set(created)].sort()).toEqual([`${prefix}Logs202606`, `${prefix}Logs202607`]);
    for (const row of rows) expect((await logs.get(row))?.text).toBe(row.text);

    counter.reset();
    const again = await logs.bulkUpsert(rows.slice(0, 3));
    expect(again.failed).toEqual([]);
    // Tables exist now: only the batches (June's two partitions hold one batch: same source "web").
    expect(counter.log.map((call) => call.method)).toEqual(["submitTransaction", "submitTransaction"]);

    counter.reset();
    const gone = await logs.bulkDelete([
      entry("2027-01-01T00:00:00.000Z", "x"),
      entry("2027-01-02T00:00:00.000Z", "y"),
    ]);
    expect(gone).toMatchObject({ written: 2, failed: [] });
    expect(counter.calls.createTable).toBe(0);
    expect(await db.tablesOf(LogEntry)).toEqual([`${prefix}Logs202606`, `${prefix}Logs202607`]);
  });
});

describe("fixed tables have no periods", () => {
  it("tablesOf and dropTables refuse a fixed table", async () => {
    @Entity({ table: "Fixed", partitionKey: "{id}", rowKey: "r" })
    class Fixed {
      @Column({ type: "String" }) id!: string;
    }
    const { db } = await freshContext(stores[0]![1], [Fixed]);
    await expect(db.tablesOf(Fixed)).rejects.toBeInstanceOf(ValidationError);
    await expect(db.dropTables(Fixed, { before: new Date() })).rejects.toBeInstanceOf(ValidationError);
  });
});

describe.each(stores)("period() on %s", (_name, kind) => {
  it("reads one period's table whole, in key order, without the period field", async () => {
    const { db } = await freshContext(kind, [LogEntry]);
    const logs = db.repository(LogEntry);
    const rows = [
      entry("2026-11-20T00:00:00.000Z", "n2"),
      entry("2026-10-31T23:59:59.999Z", "o1"),
      entry("2026-11-01T00:00:00.000Z", "n1"),
      entry("2026-12-01T00:00:00.000Z", "d1"),
      entry("2026-11-05T00:00:00.000Z", "other", "api"),
    ];
    for (const row of rows) await logs.insert(row);
    const november = logs.period(new Date("2026-11-15T00:00:00Z"));
    expect(november.table).toBe(logs.period(new Date("2026-11-01T00:00:00Z")).table);
    expect((await november.find({ source: "web" }).toArray()).map((r) => r.id)).toEqual(["n1", "n2"]);
    expect((await november.scan().toArray()).map((r) => r.id).sort()).toEqual(["n1", "n2", "other"]);

    // A range of periods in order: one find per period, oldest first.
    const ids: string[] = [];
    for (const month of ["2026-10-01", "2026-11-01", "2026-12-01", "2027-01-01"]) {
      for await (const row of logs.period(new Date(`${month}T00:00:00Z`)).find({ source: "web" }))
        ids.push(row.id);
    }
    expect(ids).toEqual(["o1", "n1", "n2", "d1"]);
    expect(() => logs.period(new Date(Number.NaN))).toThrow(ValidationError);
  });
});
