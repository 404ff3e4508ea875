import { describe, expect, it } from "vitest";
import type { TableKitEvent } from "../../src/index.js";
import { stores } from "../fixtures/context.js";
import { expiryContext, Session, session } from "./expiry-fixture.js";

type PassEvent = Extract<TableKitEvent, { type: "repair-pass" }>;

describe.each(stores)("db.repair and the repair worker sweep (%s)", (_name, kind) => {
  it("deletes what is due in a pass of db.repair and in each pass of the worker", async () => {
    let heard: ((event: PassEvent) => void) | undefined;
    const { db, advance } = await expiryContext(kind, [Session], {
      onEvent: (event) => {
        if (event.type === "repair-pass") heard?.(event);
      },
    });
    const sessions = db.repository(Session);
    for (let i = 0; i < 3; i++) await sessions.insert(session("wk", String(i), 100 * (i + 1)));
    await advance(100);
    expect((await db.repair()).expiry).toEqual({ deleted: 1 });
    await advance(200);
    // The worker's timers are injected: its first pass runs when the test fires it, not after real time.
    const scheduled: Array<() => void> = [];
    const worker = db.startRepairWorker({
      intervalMs: 60_000,
      timers: { setTimeout: (run) => scheduled.push(run), clearTimeout: () => {} },
    });
    const pass = new Promise<PassEvent>((resolve) => {
      heard = resolve;
    });
    scheduled.shift()?.();
    const event = await pass;
    await worker.stop();
    expect(event.errors).toEqual([]);
    expect(event.counts.expiry).toEqual({ deleted: 2 });
    expect(await sessions.find({ user: "wk" }).toArray()).toEqual([]);
  });
});
