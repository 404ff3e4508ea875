import { describe, expect, it } from "vitest";
import { Column, Entity } from "../../src/index.js";
import { stores } from "../fixtures/context.js";
import { expiryContext, Session, session } from "./expiry-fixture.js";

/** A log tail (newest first) whose entries expire: `latest` must skip the expired ones and still give n. */
@Entity({ table: "ExpEvents", partitionKey: "{stream}", rowKey: "{at:desc}_{id}", expiresAt: "until" })
class Event {
  @Column({ type: "String" }) stream!: string;
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "DateTime" }) until?: Date;
}

describe.each(stores)("expired entities are invisible to every read (%s)", (_name, kind) => {
  it("hides an entity from get, getMany, find, scan, index lookups and select from the moment it expires", async () => {
    const { db, advance } = await expiryContext(kind);
    const sessions = db.repository(Session);
    await sessions.insert(session("ann", "1", 1_000));
    await sessions.insert(session("ann", "2", 5_000));
    await sessions.insert(session("ann", "3", undefined));
    await advance(999);
    expect((await sessions.find({ user: "ann" }).toArray()).map((s) => s.id)).toEqual(["1", "2", "3"]);
    await advance(1); // now = 1000: session 1 expires at this very instant
    expect(await sessions.get({ user: "ann", id: "1" })).toBeUndefined();
    expect(
      (
        await sessions.getMany([
          { user: "ann", id: "1" },
          { user: "ann", id: "2" },
        ])
      ).map((s) => s?.id),
    ).toEqual([undefined, "2"]);
    expect((await sessions.find({ user: "ann" }).toArray()).map((s) => s.id)).toEqual(["2", "3"]);
    expect((await sessions.scan().toArray()).map((s) => s.id)).toEqual(["2", "3"]);
    expect(await sessions.index("byToken").get({ user: "ann", token: "t-ann-1" })).toBeUndefined();
    expect(await sessions.index("byDevice").get({ device: "d-1", user: "ann", id: "1" })).toBeUndefined();
    expect(await sessions.index("byDevice").find({ device: "d-1" }).toArray()).toEqual([]);
    expect((await sessions.index("byDevice").find({ device: "d-2" }).toArray()).map((s) => s.id)).toEqual([
      "2",
    ]);
    expect((await sessions.index("byKind").find({ kind: "web" }).toArray()).map((s) => s.id)).toEqual([
      "2",
      "3",
    ]);
    // A projection without the expiry column still hides, and does not return the column it did not ask for.
    const projected = await sessions.find({ user: "ann" }).select("token").toArray();
    expect(projected.map((s) => s.token)).toEqual(["t-ann-2", "t-ann-3"]);
    expect(projected.every((s) => !("validUntil" in s))).toBe(true);
    expect(await sessions.get({ user: "ann", id: "1" }, { select: ["token"] })).toBeUndefined();
    // db.query (several classes of one table) hides them too, projected or not.
    expect((await db.query(Session).find({ user: "ann" }).toArray()).map((s) => s.id)).toEqual(["2", "3"]);
    expect((await db.query(Session).find({ user: "ann" }).select("token").toArray()).length).toBe(2);
    await advance(4_000);
    expect((await sessions.find({ user: "ann" }).toArray()).map((s) => s.id)).toEqual(["3"]);
  });

  it("pages past expired entities with a right continuation", async () => {
    const { db, advance } = await expiryContext(kind);
    const sessions = db.repository(Session);
    for (let i = 0; i < 9; i++)
      await sessions.insert(session("bo", String(i), i % 3 === 0 ? 100 : undefined));
    await advance(100);
    const seen: string[] = [];
    let continuation: string | undefined;
    do {
      const page = await sessions
        .find({ user: "bo" })
        .page({ size: 2, ...(continuation ? { continuation } : {}) });
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((s) => s.id));
      continuation = page.continuation;
    } while (continuation);
    expect(seen).toEqual(["1", "2", "4", "5", "7", "8"]);
  });

  it("latest(n) skips expired entries and still gives the n newest live ones", async () => {
    const { db, advance } = await expiryContext(kind, [Event]);
    const events = db.repository(Event);
    for (let i = 0; i < 6; i++) {
      const until = i >= 3 ? new Date(50) : undefined; // the three newest expire first
      await events.insert(
        Object.assign(new Event(), { stream: "s", at: new Date(1_000 + i), id: `e${i}`, until }),
      );
    }
    await advance(50);
    expect((await events.latest({ stream: "s" }, 2).toArray()).map((e) => e.id)).toEqual(["e2", "e1"]);
  });
});
