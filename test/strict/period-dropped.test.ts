/**
 * A period dropped by `db.dropTables(Entity, { before })` stays dropped: its cut-off is stored in the
 * account (`TablekitPeriods`), so a late write into it, from this or any other context, is a
 * `PeriodDroppedError` naming the table, and the table is never re-created. Creating a period table
 * whose name the service still holds (409 `TableBeingDeleted`, about 40 s on Azure) is retried.
 */
import { describe, expect, it } from "vitest";
import { Column, Entity, PeriodDroppedError, StoreError, TableContext } from "../../src/index.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { CountingStore } from "../support/counting-store.js";
import { expectRejection } from "../support/rejection.js";
import { storeKinds } from "../support/stores.js";
import { uniquePrefix } from "../support/table-names.js";

@Entity({ table: "StrictLogs{at:month}", partitionKey: "{source}", rowKey: "{at:ticks}_{id}" })
class Line {
  @Column({ type: "String" }) source!: string;
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "String" }) id!: string;
}

function line(iso: string, id: string): Line {
  return Object.assign(new Line(), { source: "web", at: new Date(iso), id });
}

describe.each(storeKinds.map((k) => [k.name, k] as const))("dropped periods on %s", (_name, kind) => {
  it("a late write into a dropped month is PeriodDroppedError here and in another context; the table is not re-created", async () => {
    const store = kind.create();
    const prefix = uniquePrefix();
    const db = new TableContext({ store, tablePrefix: prefix });
    const lines = db.repository(Line);
    await lines.insert(line("2024-01-10T00:00:00Z", "a"));
    await lines.insert(line("2024-02-10T00:00:00Z", "b"));
    await lines.insert(line("2024-03-10T00:00:00Z", "c"));
    const dropped = await db.dropTables(Line, { before: new Date("2024-03-01T00:00:00Z") });
    expect(dropped).toEqual([`${prefix}StrictLogs202401`, `${prefix}StrictLogs202402`]);

    const here = await expectRejection(
      lines.upsert(line("2024-01-20T00:00:00Z", "late")),
      PeriodDroppedError,
      {
        code: "PERIOD_DROPPED",
        table: `${prefix}StrictLogs202401`,
      },
    );
    expect(here.message).toContain(`${prefix}StrictLogs202401`);
    expect(here.cutoff.toISOString()).toBe("2024-03-01T00:00:00.000Z");

    // A fresh context (another process) knows nothing but what the store holds.
    const counter = new CountingStore(store);
    const other = new TableContext({ store: counter, tablePrefix: prefix });
    await expectRejection(
      other.repository(Line).insert(line("2024-02-28T00:00:00Z", "late")),
      PeriodDroppedError,
      {
        table: `${prefix}StrictLogs202402`,
      },
    );
    expect(counter.calls.createTable).toBe(0);
    // A bulk batch into the dropped month fails the same way (reported, as bulk failures are); the month after the cut-off is written.
    const bulk = await other.repository(Line).bulkUpsert([line("2024-02-01T00:00:00Z", "bulk")]);
    expect(bulk.written).toBe(0);
    expect(bulk.failed[0]?.error).toBeInstanceOf(PeriodDroppedError);
    await other.repository(Line).insert(line("2024-03-20T00:00:00Z", "d"));
    await other.repository(Line).insert(line("2024-04-01T00:00:00Z", "e"));

    const tables = await store.listTables(`${prefix}StrictLogs`);
    expect(tables.sort()).toEqual([`${prefix}StrictLogs202403`, `${prefix}StrictLogs202404`]);
  });

  it("a later dropTables with an earlier cut-off keeps the later one", async () => {
    const store = kind.create();
    const prefix = uniquePrefix();
    const db = new TableContext({ store, tablePrefix: prefix });
    await db.repository(Line).insert(line("2024-05-10T00:00:00Z", "a"));
    await db.dropTables(Line, { before: new Date("2024-06-01T00:00:00Z") });
    await db.dropTables(Line, { before: new Date("2024-02-01T00:00:00Z") });
    const other = new TableContext({ store, tablePrefix: prefix });
    const error = await expectRejection(
      other.repository(Line).insert(line("2024-04-10T00:00:00Z", "late")),
      PeriodDroppedError,
    );
    expect(error.cutoff.toISOString()).toBe("2024-06-01T00:00:00.000Z");
  });
});

describe("a period table whose name is still held (409 TableBeingDeleted)", () => {
  it("is retried until the name is free; past the retry window the write fails with the typed 409", async () => {
    // The store's clock moves 100 ms at each reading, so the 300 ms hold ends after a few retries
    // whatever the machine's speed (no wall-clock dependence).
    let clock = Date.UTC(2024, 6, 1);
    const store = new MemoryStore({ tableDeleteDelayMs: 300, now: () => (clock += 100) });
    const db = new TableContext({ store, retry: { minDelayMs: 20, maxDelayMs: 100 } });
    await db.repository(Line).insert(line("2024-07-10T00:00:00Z", "a"));
    // Deleted by hand (not dropTables): no cut-off, so the next write re-creates it once the name is free.
    await store.deleteTable("StrictLogs202407");
    await db.repository(Line).insert(line("2024-07-11T00:00:00Z", "b"));
    const back = await db
      .repository(Line)
      .get({ source: "web", at: new Date("2024-07-11T00:00:00Z"), id: "b" });
    expect(back?.id).toBe("b");

    const held = new MemoryStore({ tableDeleteDelayMs: 600_000 });
    const short = new TableContext({ store: held, retry: { retries: 2, minDelayMs: 1, maxDelayMs: 1 } });
    await short.repository(Line).insert(line("2024-08-10T00:00:00Z", "a"));
    await held.deleteTable("StrictLogs202408");
    await expectRejection(short.repository(Line).insert(line("2024-08-11T00:00:00Z", "b")), StoreError, {
      statusCode: 409,
      serviceCode: "TableBeingDeleted",
    });
  });
});
