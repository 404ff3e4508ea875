/**
 * The default retry policy rides out storms of transient faults (503, 500, 429, 408, connection
 * resets) of at least 30 s, in few requests, and `maxElapsedMs` bounds the window. Time is virtual
 * (test/support/virtual-clock.ts): the storm ends at a virtual instant and no real time passes.
 */
import { describe, expect, it } from "vitest";
import { Column, Entity, MemoryStore, StoreError, TableContext } from "../../src/index.js";
import { DEFAULT_RETRY } from "../../src/repository/pipeline/retry-policy.js";
import { rejectionOf } from "../support/rejection.js";
import { seededRandom, testSeed } from "../support/seeded-random.js";
import { type StoreRequest, StoreWrapper } from "../support/store-wrapper.js";
import { VirtualClock } from "../support/virtual-clock.js";

@Entity({ table: "StrictStorm", partitionKey: "{id}", rowKey: "r" })
class Item {
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Int32" }) n!: number;
}

const FAULTS: Record<string, () => StoreError> = {
  "503": () => new StoreError("busy", { statusCode: 503, serviceCode: "ServerBusy" }),
  "500": () => new StoreError("internal", { statusCode: 500, serviceCode: "InternalError" }),
  "429": () => new StoreError("too many", { statusCode: 429, serviceCode: "TooManyRequests" }),
  "408": () => new StoreError("timeout", { statusCode: 408, serviceCode: "OperationTimedOut" }),
  reset: () => new StoreError("reset", { serviceCode: "ECONNRESET" }),
};

/** Fails every write request with `fault` until the virtual clock reaches `untilMs`; counts the requests. */
class StormStore extends StoreWrapper {
  requests = 0;
  lastAt = 0;
  constructor(
    inner: MemoryStore,
    readonly clock: VirtualClock,
    readonly untilMs: number,
    readonly fault: () => StoreError,
  ) {
    super(inner);
  }
  protected async around<T>(request: StoreRequest, send: () => Promise<T>): Promise<T> {
    if (request.method === "createTable") return send();
    this.requests++;
    this.lastAt = this.clock.now();
    if (this.clock.now() < this.untilMs) throw this.fault();
    return send();
  }
}

async function upsertThrough(
  untilMs: number,
  fault: () => StoreError,
  random: () => number,
  retry?: ConstructorParameters<typeof TableContext>[0]["retry"],
) {
  const clock = new VirtualClock();
  const inner = new MemoryStore();
  const storm = new StormStore(inner, clock, untilMs, fault);
  const db = new TableContext({
    store: storm,
    sleep: clock.sleep,
    now: clock.now,
    random,
    ...(retry === undefined ? {} : { retry }),
  });
  await db.ensureTables(Item);
  const outcome = await clock.run(() =>
    db
      .repository(Item)
      .upsert(Object.assign(new Item(), { id: "a", n: 1 }))
      .then(
        () => "ok" as const,
        (error: unknown) => error,
      ),
  );
  return { outcome, storm, inner };
}

const SEED = testSeed(19_0004);

describe(`retry defaults ride out storms (seed ${SEED})`, () => {
  it("documents its numbers: 10 retries, 0.5 s to 20 s, a 60 s window", () => {
    expect(DEFAULT_RETRY).toEqual({ retries: 10, minDelayMs: 500, maxDelayMs: 20_000, maxElapsedMs: 60_000 });
  });

  it.each(Object.keys(FAULTS))(
    "an upsert through an 8 s storm of %s succeeds in fewer than 20 requests",
    async (kind) => {
      for (let run = 0; run < 5; run++) {
        const { outcome, storm, inner } = await upsertThrough(8_000, FAULTS[kind]!, seededRandom(SEED + run));
        expect(outcome, `run ${run}`).toBe("ok");
        expect(storm.requests).toBeLessThan(20);
        expect(storm.lastAt).toBeGreaterThanOrEqual(8_000);
        expect((await inner.getEntity("StrictStorm", "a", "r"))?.n).toBe(1);
      }
    },
  );

  it("30 s storms of 503 and of resets are ridden out, whatever the jitter draws", async () => {
    for (const kind of ["503", "reset"]) {
      for (let run = 0; run < 5; run++) {
        const { outcome } = await upsertThrough(30_000, FAULTS[kind]!, seededRandom(SEED + 100 + run));
        expect(outcome, `${kind} run ${run}`).toBe("ok");
      }
      // The smallest draws: every delay at its floor still reaches past 30 s.
      const { outcome } = await upsertThrough(30_000, FAULTS[kind]!, () => 0);
      expect(outcome).toBe("ok");
    }
  });

  it("maxElapsedMs stops retrying: the last error, no attempt after the window", async () => {
    const { outcome, storm } = await upsertThrough(600_000, FAULTS["503"]!, seededRandom(SEED), {
      maxElapsedMs: 10_000,
    });
    expect(outcome).toBeInstanceOf(StoreError);
    expect(outcome).toMatchObject({ statusCode: 503 });
    expect(storm.lastAt).toBeLessThanOrEqual(10_000);
    expect(storm.requests).toBeGreaterThan(3);
    // The default window: a storm that never ends is given up after 60 s.
    const endless = await upsertThrough(600_000, FAULTS["500"]!, seededRandom(SEED));
    expect(await rejectionOf(Promise.reject(endless.outcome))).toMatchObject({ statusCode: 500 });
    expect(endless.storm.lastAt).toBeLessThanOrEqual(60_000);
    expect(endless.storm.lastAt).toBeGreaterThanOrEqual(30_000);
  });
});
