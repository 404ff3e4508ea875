import { describe, expect, it } from "vitest";
import { Column, Entity, MemoryStore, TableContext } from "../../src/index.js";
import { stores } from "../fixtures/context.js";
import { CountingStore } from "../support/counting-store.js";
import { HoldingStore } from "../support/holding-store.js";
import { uniquePrefix } from "../support/table-names.js";
import { VirtualClock } from "../support/virtual-clock.js";
import { advance, expiryContext, Session, session } from "./expiry-fixture.js";

describe.each(stores)("db.sweepExpired (%s)", (_name, kind) => {
  it("deletes exactly the due entities (10, then 0), with their copies and summary counts", async () => {
    const { db, advance } = await expiryContext(kind);
    const sessions = db.repository(Session);
    for (let i = 0; i < 10; i++) await sessions.insert(session(`u${i % 3}`, `due${i}`, 1_000 + i));
    for (let i = 0; i < 4; i++) await sessions.insert(session(`u${i % 3}`, `later${i}`, 60_000));
    await sessions.insert(session("u0", "never", undefined));
    expect((await sessions.summary("perUser", { user: "u0" })).sessions).toBe(7);
    await advance(1_009);
    expect(await db.sweepExpired(Session)).toEqual({ deleted: 10 });
    expect(await db.sweepExpired(Session)).toEqual({ deleted: 0 });
    // The rows are gone from the table itself, not only hidden; the live ones and their copies stay.
    const rows = await db.dynamic("ExpSessions").find("u0").toArray();
    expect(rows.filter((row) => String(row.rowKey).startsWith("s_")).map((row) => row.rowKey)).toEqual([
      "s_later0",
      "s_later3",
      "s_never",
    ]);
    expect((await sessions.summary("perUser", { user: "u0" })).sessions).toBe(3);
    expect((await sessions.index("byDevice").find({ device: "d-due0" }).toArray()).length).toBe(0);
    expect((await sessions.index("byKind").find({ kind: "web" }).toArray()).map((s) => s.id).sort()).toEqual([
      "later0",
      "later1",
      "later2",
      "later3",
      "never",
    ]);
    expect(await db.verifyIndexes(Session)).toMatchObject({ missing: [], stale: [], orphans: [] });
  });

  it("caps the deletes of one call with limit", async () => {
    const { db, advance } = await expiryContext(kind);
    const sessions = db.repository(Session);
    for (let i = 0; i < 5; i++) await sessions.insert(session("cap", String(i), 10));
    await advance(10);
    expect(await db.sweepExpired(Session, { limit: 2 })).toEqual({ deleted: 2 });
    expect(await db.sweepExpired(Session, { limit: 2 })).toEqual({ deleted: 2 });
    expect(await db.sweepExpired(Session, { limit: 2 })).toEqual({ deleted: 1 });
    await expect(db.sweepExpired(Session, { limit: 0 })).rejects.toMatchObject({ code: "VALIDATION" });
  });

  it("spares an entity rewritten with a later expiry between its index read and its delete", async () => {
    const holding = new HoldingStore(kind.create());
    const clock = new VirtualClock();
    const db = new TableContext({ store: holding, tablePrefix: uniquePrefix(), now: clock.now });
    await db.ensureTables(Session);
    const sessions = db.repository(Session);
    await sessions.insert(session("rw", "1", 100));
    await advance(clock, 100);
    // The sweep has read the due entry and the entity; its first write waits until the rewrite is done.
    const hold = holding.hold((request) => request.method !== "queryPage" && request.method !== "getEntity");
    const sweep = db.sweepExpired(Session);
    await hold.reached;
    await sessions.upsert(session("rw", "1", 5_000));
    hold.release();
    expect(await sweep).toEqual({ deleted: 0 });
    expect((await sessions.get({ user: "rw", id: "1" }))?.validUntil?.getTime()).toBe(5_000);
    // Its index entry now points to the new time: due then, and swept then.
    expect(await db.sweepExpired(Session)).toEqual({ deleted: 0 });
    await advance(clock, 4_900);
    expect(await db.sweepExpired(Session)).toEqual({ deleted: 1 });
    expect(await db.verifyIndexes(Session)).toMatchObject({ missing: [], stale: [], orphans: [] });
  });
});

/** An entity with nothing but an expiry: what a sweep costs apart from other indexes. */
@Entity({ table: "ExpPings", partitionKey: "{group}", rowKey: "{id}", expiresAt: "until" })
class Ping {
  @Column({ type: "String" }) group!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "DateTime" }) until?: Date;
}

const ping = (group: string, id: string, at?: number) =>
  Object.assign(new Ping(), { group, id, ...(at === undefined ? {} : { until: new Date(at) }) });

// 2,000 rows on MemoryStore only: what is asserted is which requests a sweep sends, the same on every
// store, and writing 2,000 rows with their expiry copies to Azurite would cost the suite minutes.
describe("a sweep reads only what is due", () => {
  it("sends a few requests per due entity among 2,000 live ones, never a query of the entity's table", async () => {
    const clock = new VirtualClock();
    const counter = new CountingStore(new MemoryStore());
    const db = new TableContext({ store: counter, tablePrefix: uniquePrefix(), now: clock.now });
    await db.ensureTables(Ping);
    const pings = db.repository(Ping);
    // Half expire much later (each has an expiry entry), half never (no entry).
    await pings.bulkInsert(
      Array.from({ length: 2_000 }, (_, i) => ping(`g${i % 4}`, `live${i}`, i % 2 === 0 ? 1e9 : undefined)),
    );
    for (let i = 0; i < 3; i++) await pings.insert(ping(`g${i}`, `due${i}`, 50));
    await advance(clock, 50);
    counter.reset();
    expect(await db.sweepExpired(Ping)).toEqual({ deleted: 3 });
    const entityTable = pings.table;
    expect(counter.log.filter((call) => call.method === "queryPage" && call.table === entityTable)).toEqual(
      [],
    );
    // The due range of the expiry index (a page per due entry at most: each is its own partition), then per
    // due entity its read and its delete (intent, row, expiry entry, settle read, intent removed).
    expect(counter.calls.queryPage).toBeLessThanOrEqual(3 + 1);
    expect(counter.requests).toBeLessThanOrEqual(3 * 8 + 1);
    expect(await db.sweepExpired(Ping)).toEqual({ deleted: 0 });
  });
});
