/**
 * Consumer groups and retention, with the context's clock injected (`now`): a handler that throws
 * gets the same changes again, a new consumer of the group resumes after the checkpoint, another
 * group gets everything, a consumer whose lease ran out is taken over, and after `db.repair()` trims
 * past retention an old position is a `ChangeFeedGapError` and a deleted entity's count starts over.
 * Polls wait 1 ms of real time; every assertion waits on a handler's call, never on time.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  type Change,
  type ChangeFeedConsumer,
  ChangeFeedGapError,
  TableContext,
  type TableStore,
  ValidationError,
} from "../../src/index.js";
import { rejectionOf } from "../support/rejection.js";
import { storeKinds } from "../support/stores.js";
import { uniquePrefix } from "../support/table-names.js";
import { unsortedStoreKinds } from "../support/unsorted-stores.js";
import { declareOrder, type Order, order } from "./feed-models.js";

const RETENTION_MS = 60_000;
const LEASE_MS = 30_000;

function world(kind: { create(): TableStore }) {
  const clock = { ms: Date.UTC(2026, 0, 1) };
  const store = kind.create();
  const prefix = uniquePrefix("fc");
  const context = () => new TableContext({ store, tablePrefix: prefix, now: () => clock.ms });
  const db = context();
  const Order = declareOrder(RETENTION_MS);
  return { db, context, clock, Order, orders: db.repository(Order) };
}

/** Batches handed to a handler, and a wait for the first call that satisfies `until`. */
function recorder(fail: (call: number) => boolean = () => false) {
  const batches: string[][] = [];
  const waiters: Array<{ until: () => boolean; resolve: () => void }> = [];
  const handler = async (changes: Change<Order>[]) => {
    batches.push(changes.map((c) => `${c.key.rowKey}@${c.version}`));
    for (const waiter of waiters.splice(0)) {
      if (waiter.until()) waiter.resolve();
      else waiters.push(waiter);
    }
    if (fail(batches.length)) throw new Error("handler failed");
  };
  const seen = (until: () => boolean) =>
    until() ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ until, resolve }));
  return { batches, handler, seen, flat: () => batches.flat() };
}

/** Every store of the run, and the Cosmos-flavoured reference store (results unsorted) once per seed. */
const STORES = [...storeKinds, ...unsortedStoreKinds].map((k) => [k.name, k] as const);

describe.each(STORES)("change feed consumers on %s", (_name, kind) => {
  const running: ChangeFeedConsumer[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((c) => c.stop()));
  });

  it("redelivers after a throw, resumes after the checkpoint, and gives another group everything", async () => {
    const { db, Order, orders } = world(kind);
    await db.ensureTables(Order);
    for (const id of ["a", "b", "c"]) await orders.insert(order(Order, "alice", id, 1));
    const feed = db.changes(Order);

    const first = recorder((call) => call === 1);
    const one = feed.consume({ group: "billing", handler: first.handler, pollIntervalMs: 1 });
    running.push(one);
    await first.seen(() => first.batches.length >= 2);
    await one.stop();
    // The throwing call's batch came again, whole.
    expect(first.batches.slice(0, 2)).toEqual([
      ["a@1", "b@1", "c@1"],
      ["a@1", "b@1", "c@1"],
    ]);

    await orders.upsert(order(Order, "alice", "a", 2));
    const second = recorder();
    running.push(feed.consume({ group: "billing", handler: second.handler, pollIntervalMs: 1 }));
    await second.seen(() => second.flat().length >= 1);
    expect(second.flat()).toEqual(["a@2"]);

    const other = recorder();
    running.push(feed.consume({ group: "audit", handler: other.handler, pollIntervalMs: 1, batchSize: 2 }));
    await other.seen(() => other.flat().length >= 4);
    expect(other.flat()).toEqual(["a@1", "b@1", "c@1", "a@2"]);
    expect(other.batches[0]).toHaveLength(2);
  });

  it("takes over the group from a consumer whose lease ran out (the context's clock)", async () => {
    const { db, context, clock, Order, orders } = world(kind);
    await db.ensureTables(Order);
    await orders.insert(order(Order, "alice", "a", 1));
    let release: () => void = () => undefined;
    const stuck = recorder();
    // A consumer that hangs in its handler: as a dead process, it renews nothing.
    const dead = db.changes(Order).consume({
      group: "billing",
      pollIntervalMs: 1,
      handler: async (changes) => {
        await stuck.handler(changes);
        await new Promise<void>((resolve) => {
          release = resolve;
        });
      },
    });
    await stuck.seen(() => stuck.batches.length === 1);

    const other = context();
    const live = recorder();
    const taker = other
      .changes(Order)
      .consume({ group: "billing", handler: live.handler, pollIntervalMs: 1 });
    running.push(taker);
    clock.ms += LEASE_MS + 1;
    await live.seen(() => live.flat().length >= 1);
    expect(live.flat()).toEqual(["a@1"]);
    await taker.stop();
    release();
    await dead.stop();
    expect(stuck.batches).toEqual([["a@1"]]);
  });

  it("refuses a bad group before any request", async () => {
    const { db, Order } = world(kind);
    expect(() => db.changes(Order).consume({ group: "a/b", handler: () => undefined })).toThrow(
      ValidationError,
    );
  });

  it("trims past retention in repair: an older position is a gap, a deleted entity's count starts over", async () => {
    const { db, clock, Order, orders } = world(kind);
    await db.ensureTables(Order);
    await orders.insert(order(Order, "alice", "a", 1));
    await orders.insert(order(Order, "alice", "b", 1));
    await orders.delete({ customer: "alice", orderId: "b" });
    const old = await db.changes(Order).read();
    expect(old.changes.map((c) => c.version)).toEqual([1, 1, 2]);
    const start = (old.changes[0] as Change<Order>).position;

    clock.ms += RETENTION_MS + 1;
    await orders.upsert(order(Order, "alice", "a", 2));
    const report = await db.repair();
    expect(report.changeFeed).toEqual({ changesTrimmed: 3, tombstonesTrimmed: 1 });

    expect(await rejectionOf(db.changes(Order).read({ from: start }))).toBeInstanceOf(ChangeFeedGapError);
    // A position that had seen every trimmed change reads on.
    const after = await db.changes(Order).read({ from: old.next });
    expect(after.changes.map((c) => `${c.key.rowKey}@${c.version}`)).toEqual(["a@2"]);
    const fresh = await db.changes(Order).read();
    expect(fresh.changes.map((c) => `${c.key.rowKey}@${c.version}`)).toEqual(["a@2"]);

    await orders.insert(order(Order, "alice", "b", 3));
    const again = await db.changes(Order).read({ from: fresh.next });
    expect(again.changes.map((c) => `${c.key.rowKey}@${c.version}`)).toEqual(["b@1"]);
  });
});
