/**
 * Optimistic concurrency with `repository.mutate`: concurrent read-modify-write loops on one
 * entity lose no update, on both stores.
 */
import { describe, expect, it } from "vitest";
import { ConcurrencyError, TableContext } from "../../src/index.js";
import { CountingStore } from "../support/counting-store.js";
import { storeKinds } from "../support/stores.js";
import { FAST_RETRY, faultyContext, faultyStores, freshPrefix, rejectionOf, storeNames } from "./harness.js";
import { Counter } from "./models.js";

const WORKERS = 16;
const INCREMENTS = 50;

describe.each(storeKinds.map((kind) => [kind.name, kind] as const))("mutate on %s", (_name, kind) => {
  async function counters() {
    const counter = new CountingStore(kind.create());
    const retried = { count: 0 };
    const db = new TableContext({
      store: counter,
      tablePrefix: freshPrefix(),
      retry: FAST_RETRY,
      onEvent: (event) => {
        if (event.type === "retry") retried.count++;
      },
    });
    await db.ensureTables(Counter);
    counter.reset();
    return { repository: db.repository(Counter), counter, retried };
  }

  it(`${WORKERS} concurrent workers × ${INCREMENTS} increments end at exactly ${WORKERS * INCREMENTS}`, async () => {
    const { repository, counter, retried } = await counters();
    await repository.insert(Object.assign(new Counter(), { name: "visits", count: 0 }));
    counter.reset();
    retried.count = 0;
    // Enough rounds for the unluckiest worker to lose to every other one on every increment.
    const attempts = WORKERS * INCREMENTS + 1;
    const worker = async () => {
      for (let i = 0; i < INCREMENTS; i++) {
        const written = await repository.mutate(
          { name: "visits" },
          (current) => {
            current.count += 1;
          },
          { attempts },
        );
        expect(written).toBeDefined();
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, worker));
    const final = await repository.getOrThrow({ name: "visits" });
    expect(final.count).toBe(WORKERS * INCREMENTS);
    // Each round reads once and writes once; exactly 800 writes won. A request retried after a
    // transient fault (a timeout on a loaded machine) is sent twice, and a write whose answer was lost
    // is settled by a read: each retry moves the balance of reads and writes by at most one.
    expect(counter.calls.update).toBeGreaterThanOrEqual(WORKERS * INCREMENTS);
    const balance = counter.calls.getEntity - (counter.calls.update + 1);
    expect(Math.abs(balance), `${retried.count} retries`).toBeLessThanOrEqual(retried.count);
    expect(counter.calls.insert).toBe(0);
  });

  it("creates nothing when the entity is absent, unless asked", async () => {
    const { repository, counter } = await counters();
    const change = (current: Counter) => {
      current.count += 1;
    };
    expect(await repository.mutate({ name: "absent" }, change)).toBeUndefined();
    expect(counter.calls).toMatchObject({ insert: 0, update: 0, upsert: 0 });
    expect(await repository.get({ name: "absent" })).toBeUndefined();
    const created = await repository.mutate({ name: "absent" }, change, {
      create: () => Object.assign(new Counter(), { name: "absent", count: 10 }),
    });
    expect(created?.count).toBe(11);
    expect((await repository.getOrThrow({ name: "absent" })).count).toBe(11);
  });

  it("gives up with ConcurrencyError after `attempts` lost races", async () => {
    const { repository } = await counters();
    await repository.insert(Object.assign(new Counter(), { name: "hot", count: 0 }));
    let rounds = 0;
    const error = await rejectionOf(
      repository.mutate(
        { name: "hot" },
        async (current) => {
          rounds += 1;
          // Another writer gets in between every read and write.
          await repository.upsert(Object.assign(new Counter(), { name: "hot", count: 1000 + rounds }));
          current.count += 1;
        },
        { attempts: 3 },
      ),
    );
    expect(error).toBeInstanceOf(ConcurrencyError);
    expect(rounds).toBe(3);
    expect((await repository.getOrThrow({ name: "hot" })).count).toBe(1003);
  });
});

describe.each(storeNames)("mutate with a lost answer on %s", (name) => {
  // An update whose answer was lost is retried; its 412 is checked against the stored entity. When
  // another writer changed the entity in between, nobody can tell whether our change was applied, so
  // mutate reports ConcurrencyError.outcomeUnknown instead of applying a non-idempotent change again.
  it("never applies one change twice: an unknowable outcome is reported, not retried", async () => {
    const stores = await faultyStores(name);
    try {
      const { db, prefix } = await faultyContext(stores, [Counter]);
      const other = new TableContext({ store: stores.direct, tablePrefix: prefix }).repository(Counter);
      const counters = db.repository(Counter);
      await counters.insert(Object.assign(new Counter(), { name: "c", count: 0 }));
      const increment = (current: Counter) => {
        current.count += 1;
      };
      stores.plan.faultNext({
        method: "update",
        kind: "lost",
        // Our increment is stored (count 1) but we do not know it; another writer increments it to 2.
        onFault: async () => void (await other.mutate({ name: "c" }, increment)),
      });
      const error = await counters.mutate({ name: "c" }, increment, { attempts: 5 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConcurrencyError);
      expect(error).toMatchObject({ outcomeUnknown: true });
      expect((await counters.getOrThrow({ name: "c" })).count).toBe(2);
    } finally {
      await stores.close();
    }
  });
});
