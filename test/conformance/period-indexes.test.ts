/**
 * Index copies of entities kept in a table per period (`Events{at:month}`): copies in the entity's
 * own period table, in a fixed table, and in a period table of the index's own; transactions,
 * verification and repair over every period table.
 */
import { describe, expect, it } from "vitest";
import { Column, Entity, TableContext, UniqueConstraintError } from "../../src/index.js";
import { freshContext, stores, uniquePrefix } from "../fixtures/context.js";
import { CrashStore } from "../indexes/crash-store.js";
import { rowsOf } from "../indexes/helpers.js";
import { rejectionOf } from "../support/rejection.js";

@Entity({
  table: "Events{at:month}",
  partitionKey: "{source}",
  rowKey: "e_{at:ticks}_{id}",
  indexes: {
    // A fixed table across all periods (unique: claims go through the intent log).
    byId: { table: "EventIds", partitionKey: "{id}", rowKey: "id" },
    // The entity's own period table and partition (atomic with the entity).
    byUser: { partitionKey: "{source}", rowKey: "u_{user}_{id}", unique: false },
    // A period table of the index's own, by day.
    byUserDay: {
      table: "EventsByUser{at:day}",
      partitionKey: "{user}",
      rowKey: "{id}",
      unique: false,
      project: ["source"],
    },
  },
})
class Event {
  @Column({ type: "String" }) source!: string;
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "String" }) user!: string;
  @Column({ type: "Int32" }) n!: number;
}

/** Only same-partition copies: it can join an entity group transaction. */
@Entity({
  table: "Marks{at:month}",
  partitionKey: "{source}",
  rowKey: "m_{id}",
  indexes: { byUser: { partitionKey: "{source}", rowKey: "u_{user}_{id}", unique: false } },
})
class Mark {
  @Column({ type: "String" }) source!: string;
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "String" }) user!: string;
}

const event = (iso: string, id: string, user: string, n = 1): Event =>
  Object.assign(new Event(), { source: "web", at: new Date(iso), id, user, n });

const noDrift = { missing: [], stale: [], orphans: [] };

describe.each(stores)("indexes of a table per period on %s", (_name, kind) => {
  it("keeps copies in the entity's period table, a fixed table and the index's own period tables", async () => {
    const { db, prefix } = await freshContext(kind, [Event]);
    const events = db.repository(Event);
    const a = event("2026-03-10T08:00:00.000Z", "a", "ann");
    const b = event("2026-04-02T09:00:00.000Z", "b", "ann");
    await events.insert(a);
    await events.insert(b);
    expect(await db.tablesOf(Event)).toEqual([`${prefix}Events202603`, `${prefix}Events202604`]);

    // Fixed table: found without the period.
    expect((await events.index("byId").get({ id: "b" }))?.at.toISOString()).toBe(b.at.toISOString());
    // The entity's own period table: the lookup names the period.
    const march = await events.index("byUser").find({ source: "web", user: "ann", at: a.at }).toArray();
    expect(march.map((e) => e.id)).toEqual(["a"]);
    // The index's own daily tables: projected copies still carry the period field and keys.
    const day = await events.index("byUserDay").find({ user: "ann", at: b.at }).toArray();
    expect(day.map((e) => [e.id, e.source, e.at.toISOString(), e.n])).toEqual([
      ["b", "web", b.at.toISOString(), undefined],
    ]);
    // A period nobody wrote to reads as empty.
    expect(
      await events
        .index("byUserDay")
        .find({ user: "ann", at: new Date("2020-01-01") })
        .toArray(),
    ).toEqual([]);
    expect(
      await events.index("byUser").get({ source: "web", user: "x", id: "z", at: new Date("2020-01-01") }),
    ).toBeUndefined();

    // Moving an indexed value moves its copies; a taken unique value is refused.
    const read = await events.getOrThrow(a);
    read.user = "bob";
    await events.update(read);
    expect(await events.index("byUser").find({ source: "web", user: "ann", at: a.at }).toArray()).toEqual([]);
    expect(
      (await events.index("byUserDay").find({ user: "bob", at: a.at }).toArray()).map((e) => e.id),
    ).toEqual(["a"]);
    const clash = await rejectionOf(events.insert(event("2026-05-01T00:00:00.000Z", "a", "cat")));
    expect(clash).toBeInstanceOf(UniqueConstraintError);
    expect(await db.verifyIndexes(Event)).toEqual(noDrift);

    expect(await events.delete(read)).toBe(true);
    expect(await events.index("byId").get({ id: "a" })).toBeUndefined();
    expect(await events.index("byUserDay").find({ user: "bob", at: a.at }).toArray()).toEqual([]);
    expect(await db.verifyIndexes(Event)).toEqual(noDrift);
    expect(await rowsOf(db.store, `${prefix}TablekitIntents`)).toEqual([]);
  });

  it("a transaction into a new period writes the entity and its same-partition copies", async () => {
    const { db, counter, prefix } = await freshContext(kind, [Mark]);
    const marks = db.repository(Mark);
    const m1 = Object.assign(new Mark(), {
      source: "web",
      at: new Date("2026-08-01T00:00:00Z"),
      id: "1",
      user: "ann",
    });
    const m2 = Object.assign(new Mark(), {
      source: "web",
      at: new Date("2026-08-02T00:00:00Z"),
      id: "2",
      user: "bob",
    });
    counter.reset();
    await db.transaction((tx) => {
      tx.insert(m1);
      tx.insert(m2);
    });
    expect(counter.log.map((call) => call.method)).toEqual([
      "submitTransaction",
      "getEntity",
      "createTable",
      "submitTransaction",
    ]);
    expect(await db.tablesOf(Mark)).toEqual([`${prefix}Marks202608`]);
    const found = await marks.index("byUser").find({ source: "web", user: "bob", at: m2.at }).toArray();
    expect(found.map((m) => m.id)).toEqual(["2"]);
    // An upsert by transaction reads the entity first: the table exists now.
    await db.transaction((tx) => tx.upsert(Object.assign(m1, { user: "cat" })));
    expect(
      (await marks.index("byUser").find({ source: "web", user: "cat", at: m1.at }).toArray()).map(
        (m) => m.id,
      ),
    ).toEqual(["1"]);
    expect(await db.verifyIndexes(Mark)).toEqual(noDrift);
  });

  it("a bulk write into new periods keeps every copy", async () => {
    const { db } = await freshContext(kind, [Event]);
    const events = db.repository(Event);
    const rows = [
      event("2026-01-31T23:00:00.000Z", "j", "ann"),
      event("2026-02-01T01:00:00.000Z", "f", "ann"),
      event("2026-02-01T02:00:00.000Z", "g", "bob"),
    ];
    const result = await events.bulkInsert(rows);
    expect(result).toMatchObject({ written: 3, failed: [] });
    for (const row of rows) expect((await events.index("byId").get({ id: row.id }))?.user).toBe(row.user);
    expect(await db.verifyIndexes(Event)).toEqual(noDrift);
  });

  it("verify and repair read every period table; dropped periods leave orphans in the fixed table that repair removes", async () => {
    const { db, prefix } = await freshContext(kind, [Event]);
    const events = db.repository(Event);
    for (const [iso, id] of [
      ["2026-01-05T00:00:00.000Z", "j"],
      ["2026-02-05T00:00:00.000Z", "f"],
      ["2026-03-05T00:00:00.000Z", "m"],
    ] as const) {
      await events.insert(event(iso, id, "ann"));
    }
    expect(await db.verifyIndexes(Event)).toEqual(noDrift);
    // Tamper in two periods: a local copy removed in February, a remote copy removed in March's day table.
    const raw = db.store;
    const febTicks = events.keyOf(event("2026-02-05T00:00:00.000Z", "f", "ann"));
    expect(febTicks.partitionKey).toBe("web");
    expect(await raw.delete(`${prefix}Events202602`, "web", "u_ann_f", "*")).toBe(true);
    expect(await raw.delete(`${prefix}EventsByUser20260305`, "ann", "m", "*")).toBe(true);
    const drift = await db.verifyIndexes(Event);
    expect(drift.missing.map((r) => `${r.index}:${r.table}`).sort()).toEqual([
      `byUser:${prefix}Events202602`,
      `byUserDay:${prefix}EventsByUser20260305`,
    ]);
    expect(drift.stale).toEqual([]);
    expect(drift.orphans).toEqual([]);
    expect(await db.repairIndexes(Event, { scan: true })).toMatchObject({
      copiesWritten: 2,
      copiesDeleted: 0,
    });
    expect(await db.verifyIndexes(Event)).toEqual(noDrift);

    // Dropping January drops its entity table and its index day table; its fixed-table copy is an orphan.
    const dropped = await db.dropTables(Event, { before: new Date("2026-02-01T00:00:00Z") });
    expect(dropped).toEqual([`${prefix}Events202601`, `${prefix}EventsByUser20260105`]);
    const orphaned = await db.verifyIndexes(Event);
    expect(orphaned.orphans).toEqual([
      { index: "byId", table: `${prefix}EventIds`, partitionKey: "j", rowKey: "id" },
    ]);
    expect(orphaned.missing).toEqual([]);
    expect(await db.repairIndexes(Event, { scan: true })).toMatchObject({ copiesDeleted: 1 });
    expect(await db.verifyIndexes(Event)).toEqual(noDrift);
    expect(await events.index("byId").get({ id: "j" })).toBeUndefined();
  });

  it("an insert that crashed after its claims is finished by repairIndexes from the intent log", async () => {
    const store = new CrashStore(kind.create());
    const prefix = uniquePrefix();
    const db = new TableContext({ store, tablePrefix: prefix, retry: false });
    await db.ensureTables(Event);
    const events = db.repository(Event);
    await events.insert(event("2026-06-01T00:00:00.000Z", "warm", "ann"));
    // The next insert: intent, claim of byId, copy into a new day table (404, create, again), ...
    store.arm(3, "crash");
    expect(await rejectionOf(events.insert(event("2026-06-02T00:00:00.000Z", "x", "zed")))).toBeDefined();
    store.reset();
    const intents = await rowsOf(store.inner, `${prefix}TablekitIntents`);
    expect(intents).toHaveLength(1);
    const result = await db.repairIndexes(Event);
    expect(result).toMatchObject({ intentsReplayed: 1, poisoned: 0 });
    expect(await rowsOf(store.inner, `${prefix}TablekitIntents`)).toEqual([]);
    expect(await db.verifyIndexes(Event)).toEqual(noDrift);
    // The entity was never written: its claim is gone too, so the id is free again.
    expect(await events.index("byId").get({ id: "x" })).toBeUndefined();
    await events.insert(event("2026-06-02T00:00:00.000Z", "x", "zed"));
    expect(await db.verifyIndexes(Event)).toEqual(noDrift);
  });
});
