import { describe, expect, it } from "vitest";
import { EntityNotFoundError } from "../../src/index.js";
import { stores } from "../fixtures/context.js";
import { rejectionOf } from "../support/rejection.js";
import { expiryContext, Session, session } from "./expiry-fixture.js";

describe.each(stores)("writes treat an expired entity as absent (%s)", (_name, kind) => {
  it("insert succeeds over an expired row; its copies and the summary hold the new entity alone", async () => {
    const { db, advance } = await expiryContext(kind);
    const sessions = db.repository(Session);
    await sessions.insert(Object.assign(session("cy", "1", 100), { token: "old", weight: 5 }));
    await advance(100);
    await sessions.insert(Object.assign(session("cy", "1", 10_000), { token: "new", weight: 2 }));
    const stored = await sessions.get({ user: "cy", id: "1" });
    expect(stored?.token).toBe("new");
    expect(stored?.validUntil?.getTime()).toBe(10_000);
    expect(await sessions.index("byToken").get({ user: "cy", token: "old" })).toBeUndefined();
    expect((await sessions.index("byToken").get({ user: "cy", token: "new" }))?.id).toBe("1");
    expect(await sessions.summary("perUser", { user: "cy" })).toEqual({ sessions: 1, weights: 2 });
    expect(await db.verifyIndexes(Session)).toMatchObject({ missing: [], stale: [], orphans: [] });
    // Its old expiry entry is gone with the old version: nothing is due until the new expiry.
    expect(await db.sweepExpired(Session)).toEqual({ deleted: 0 });
    expect((await sessions.get({ user: "cy", id: "1" }))?.token).toBe("new");
  });

  it("update and merge of an expired entity fail as for an absent one; a patch starts it afresh", async () => {
    const { db, advance } = await expiryContext(kind);
    const sessions = db.repository(Session);
    await sessions.insert(Object.assign(session("di", "1", 100), { token: "old", weight: 7 }));
    await advance(100);
    const again = Object.assign(session("di", "1", 10_000), { token: "upd" });
    expect(await rejectionOf(sessions.update(again, { ifMatch: "*" }))).toBeInstanceOf(EntityNotFoundError);
    expect(await rejectionOf(sessions.update(again, { ifMatch: "*", mode: "merge" }))).toBeInstanceOf(
      EntityNotFoundError,
    );
    expect(await sessions.get({ user: "di", id: "1" })).toBeUndefined();
    await sessions.patch(
      { user: "di", id: "1" },
      {
        token: "patched",
        device: "tablet",
        kind: "app",
        validUntil: new Date(10_000),
      },
    );
    const patched = await sessions.get({ user: "di", id: "1" });
    expect(patched?.token).toBe("patched");
    // Nothing of the expired version was merged into it.
    expect(patched?.weight).toBeUndefined();
    expect(await sessions.summary("perUser", { user: "di" })).toEqual({ sessions: 1, weights: 0 });
  });

  it("an update with the ETag of a version read before it expired fails as for an absent entity", async () => {
    const { db, advance } = await expiryContext(kind);
    const sessions = db.repository(Session);
    await sessions.insert(session("el", "1", 100));
    const read = await sessions.getOrThrow({ user: "el", id: "1" });
    await advance(100);
    read.validUntil = new Date(10_000);
    expect(await rejectionOf(sessions.update(read))).toBeInstanceOf(EntityNotFoundError);
    expect(await sessions.get({ user: "el", id: "1" })).toBeUndefined();
    // Before it expires, the same update of a fresh read goes through.
    await sessions.insert(session("el", "2", 200));
    const live = await sessions.getOrThrow({ user: "el", id: "2" });
    live.validUntil = new Date(10_000);
    await sessions.update(live);
    await advance(100);
    expect((await sessions.get({ user: "el", id: "2" }))?.validUntil?.getTime()).toBe(10_000);
  });

  it("every write form inserts over an expired row: a transaction, a bulk insert, db.eventually", async () => {
    const { db, advance } = await expiryContext(kind);
    const sessions = db.repository(Session);
    for (const id of ["tx", "bulk", "ev"])
      await sessions.insert(Object.assign(session("fo", id, 100), { weight: 9 }));
    await advance(100);
    await db.transaction((tx) => {
      tx.insert(Object.assign(session("fo", "tx", 5_000), { token: "tx2" }));
    });
    const bulk = await sessions.bulkInsert([Object.assign(session("fo", "bulk", 5_000), { token: "bulk2" })]);
    expect(bulk.failed).toEqual([]);
    await db.eventually((tx) => {
      tx.insert(Object.assign(session("fo", "ev", 5_000), { token: "ev2" }));
    });
    expect((await sessions.find({ user: "fo" }).toArray()).map((s) => s.token).sort()).toEqual([
      "bulk2",
      "ev2",
      "tx2",
    ]);
    expect(await sessions.summary("perUser", { user: "fo" })).toEqual({ sessions: 3, weights: 3 });
    expect(await db.verifyIndexes(Session)).toMatchObject({ missing: [], stale: [], orphans: [] });
    expect(await db.verifySummaries(Session)).toEqual([]);
    // A live row still refuses an insert, in a transaction too.
    await expect(
      db.transaction((tx) => {
        tx.insert(session("fo", "tx", 9_000));
      }),
    ).rejects.toThrow();
  });
});
