/**
 * Consumers of one group share the work by leased slots (feed-leases.ts), on a virtual clock (the
 * context's `now` and `sleep`): time moves only when every consumer waits on its poll, so leases end
 * at exact virtual times and nothing waits for real time. Two consumers of a group over 8 partitions
 * both get a share and together deliver every change; one that hangs (renewing nothing, as a dead
 * process) is taken over once its lease has ended; another group gets everything.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type Change, type ChangeFeedConsumer, TableContext } from "../../src/index.js";
import { FEED_LEASE_MS } from "../../src/repository/feed/feed-leases.js";
import { FEED_LEASE_SLOTS, slotOf } from "../../src/repository/feed/feed-slots.js";
import { storeKinds } from "../support/stores.js";
import { uniquePrefix } from "../support/table-names.js";
import { unsortedStoreKinds } from "../support/unsorted-stores.js";
import { InFlightStore, VirtualClock } from "../support/virtual-clock.js";
import { declareOrder, type Order, order } from "./feed-models.js";

const START = Date.UTC(2026, 0, 1);
const POLL_MS = 2_000;
const CUSTOMERS = ["c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7"];
const STORES = [...storeKinds, ...unsortedStoreKinds].map((k) => [k.name, k] as const);

/** What one consumer was handed: `customer/order@version`, with the virtual time of each batch. */
function recorder(clock: VirtualClock) {
  const got: Array<{ change: string; at: number }> = [];
  let hang: Promise<void> | undefined;
  const handler = async (changes: Change<Order>[]) => {
    for (const c of changes)
      got.push({ change: `${c.key.partitionKey}/${c.key.rowKey}@${c.version}`, at: clock.now() });
    if (hang) await hang;
  };
  return {
    got,
    handler,
    changes: () => new Set(got.map((g) => g.change)),
    /** From now on the handler never returns until `resume` is called. */
    hangFromNow: () => {
      let resume: () => void = () => undefined;
      hang = new Promise<void>((resolve) => {
        resume = resolve;
      });
      return () => resume();
    },
  };
}

describe.each(STORES)("a consumer group shared by several consumers on %s", (_name, kind) => {
  const running: ChangeFeedConsumer[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((c) => c.stop()));
  });

  it("splits the partitions between two consumers, takes a hung one over after its lease, and gives another group everything", async () => {
    // The precondition of "both get a share": the partitions fall in both halves of the slots.
    const slots = CUSTOMERS.map((customer) => slotOf({ partitionKey: customer }));
    expect(slots.some((s) => s < FEED_LEASE_SLOTS / 2) && slots.some((s) => s >= FEED_LEASE_SLOTS / 2)).toBe(
      true,
    );

    const clock = new VirtualClock();
    const store = new InFlightStore(kind.create());
    const prefix = uniquePrefix("fs");
    const context = () =>
      new TableContext({ store, tablePrefix: prefix, now: () => START + clock.now(), sleep: clock.sleep });
    const db = context();
    const Order = declareOrder();
    const orders = db.repository(Order);
    await db.ensureTables(Order);
    const written: string[] = [];
    const writeRound = async (round: number) => {
      for (const customer of CUSTOMERS) {
        await orders.upsert(order(Order, customer, `o${round}`, round));
        written.push(`${customer}/o${round}@1`);
      }
    };
    const a = recorder(clock);
    const b = recorder(clock);
    const delivered = () => new Set([...a.changes(), ...b.changes()]);
    const debug = () => JSON.stringify({ written, a: [...a.changes()], b: [...b.changes()] });
    const allDelivered = (got: () => Set<string>) => () => written.every((w) => got().has(w));
    const until = (done: () => boolean) =>
      clock.run(async () => {
        const limit = clock.now() + 10 * FEED_LEASE_MS;
        while (!done()) {
          // A bound in virtual time: a consumer that never delivers fails here, not at vitest's timeout.
          if (clock.now() > limit) throw new Error(`not delivered by virtual ${limit} ms: ${debug()}`);
          await clock.sleep(POLL_MS / 4);
        }
      }, store);

    await writeRound(0);
    const consumerA = context()
      .changes(Order)
      .consume({ group: "billing", handler: a.handler, pollIntervalMs: POLL_MS });
    const consumerB = context()
      .changes(Order)
      .consume({ group: "billing", handler: b.handler, pollIntervalMs: POLL_MS });
    running.push(consumerB);
    await until(allDelivered(delivered));
    // The first to look may take every slot; it gives half back once it sees the other: new rounds split.
    const lastRound = () => written.slice(-CUSTOMERS.length);
    const split = () =>
      lastRound().some((w) => a.changes().has(w)) && lastRound().some((w) => b.changes().has(w));
    for (let round = 1; round <= 4; round++) {
      await writeRound(round);
      await until(allDelivered(delivered));
      if (split()) break;
    }
    // Both got a share of the last round, and shared it, not doubled: one consumer per partition.
    const last = lastRound();
    expect(last.filter((w) => a.changes().has(w)).length).toBeGreaterThan(0);
    expect(last.filter((w) => b.changes().has(w)).length).toBeGreaterThan(0);
    expect(last.filter((w) => a.changes().has(w) && b.changes().has(w))).toEqual([]);

    // A hangs in its handler: it renews nothing, as a dead process. B takes its slots once A's lease ends.
    const resumeA = a.hangFromNow();
    const hungAt = clock.now();
    // A's partitions are those it delivered last: a partition A read before the split may be B's now.
    const aPartitions = new Set(last.filter((w) => a.changes().has(w)).map((w) => w.split("/")[0]));
    await writeRound(9);
    const round9 = written.slice(-CUSTOMERS.length);
    await until(() => round9.every((w) => b.changes().has(w)));
    // A's partitions reach B only once A's lease has ended (A renewed it last when it took the batch).
    const ofA = round9.filter((w) => aPartitions.has(w.split("/")[0] as string));
    expect(ofA.length).toBeGreaterThan(0);
    for (const change of ofA) {
      expect(b.got.find((g) => g.change === change)?.at).toBeGreaterThanOrEqual(hungAt + FEED_LEASE_MS);
    }
    resumeA();
    await consumerA.stop();

    const audit = recorder(clock);
    running.push(
      context().changes(Order).consume({ group: "audit", handler: audit.handler, pollIntervalMs: POLL_MS }),
    );
    await until(allDelivered(audit.changes));
    expect([...audit.changes()].sort()).toEqual([...written].sort());
  });
});
