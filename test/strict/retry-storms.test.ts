/**
 * The default retry policy rides out storms of transient faults (503, 500, 429, 408, connection
 * resets) of at least 30 s, in few requests, and `maxElapsedMs` bounds the window, counted from the
 * first attempt. The service's Retry-After (`Retry-After` in seconds, `x-ms-retry-after-ms`) is waited
 * as given within the window, for as many retries as it takes. Time is virtual
 * (test/support/virtual-clock.ts): the storm ends at a virtual instant and no real time passes.
 */
import type { HttpClient } from "@azure/core-rest-pipeline";
import { createHttpHeaders } from "@azure/core-rest-pipeline";
import { describe, expect, it } from "vitest";
import { azuriteConnectionStringFor } from "../../scripts/azurite-process.js";
import { Column, Entity, MemoryStore, StoreError, TableContext } from "../../src/index.js";
import { DEFAULT_RETRY } from "../../src/repository/pipeline/retry-policy.js";
import { AzureStore } from "../../src/store/azure/azure-store.js";
import { rejectionOf } from "../support/rejection.js";
import { seededRandom, testSeed } from "../support/seeded-random.js";
import { type StoreRequest, StoreWrapper } from "../support/store-wrapper.js";
import { InFlightStore, VirtualClock } from "../support/virtual-clock.js";

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
  it("documents its numbers: no retry count, 0.5 s to 20 s, a 60 s window", () => {
    expect(DEFAULT_RETRY).toEqual({ minDelayMs: 500, maxDelayMs: 20_000, maxElapsedMs: 60_000 });
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

/**
 * An HTTP client in front of no server: every request before `untilMs` on the virtual clock is answered
 * `status` with `headers` (the service's hint), every later one 204 with an ETag (an upsert's answer).
 */
function stormingHttp(clock: VirtualClock, untilMs: number, status: number, headers: Record<string, string>) {
  const times: number[] = [];
  const httpClient: HttpClient = {
    async sendRequest(request) {
      times.push(clock.now());
      const storming = clock.now() < untilMs;
      return {
        request,
        status: storming ? status : 204,
        headers: createHttpHeaders(
          storming
            ? { "content-type": "application/json", ...headers }
            : { etag: `W/"datetime'2026-01-01T00%3A00%3A00.0000000Z'"` },
        ),
        bodyAsText: storming
          ? JSON.stringify({ "odata.error": { code: "ServerBusy", message: { value: "busy" } } })
          : "",
      };
    },
  };
  return { httpClient, times };
}

/** An upsert through the AzureStore while `stormingHttp` answers, on the default retry settings unless given. */
async function upsertThroughHttp(
  untilMs: number,
  status: number,
  headers: Record<string, string>,
  retry?: ConstructorParameters<typeof TableContext>[0]["retry"],
) {
  const clock = new VirtualClock();
  const { httpClient, times } = stormingHttp(clock, untilMs, status, headers);
  // The client answers every request, so nothing listens on this endpoint.
  const store = new InFlightStore(
    AzureStore.fromConnectionString(azuriteConnectionStringFor("127.0.0.1", 9), { httpClient }),
  );
  const db = new TableContext({
    store,
    sleep: clock.sleep,
    now: clock.now,
    random: seededRandom(SEED),
    ...(retry === undefined ? {} : { retry }),
  });
  const outcome = await clock.run(
    () =>
      db
        .repository(Item)
        .upsert(Object.assign(new Item(), { id: "a", n: 1 }))
        .then(
          () => "ok" as const,
          (error: unknown) => error,
        ),
    store,
  );
  return { outcome, times };
}

describe("storms with the service's Retry-After, through the AzureStore's headers", () => {
  it("25 s of 503 with Retry-After: 1 are ridden out, one request a second (not 10 retries)", async () => {
    const { outcome, times } = await upsertThroughHttp(25_000, 503, { "retry-after": "1" });
    expect(outcome).toBe("ok");
    // Attempts at 0, 1, …, 25 s: the 26th succeeds.
    expect(times).toEqual(Array.from({ length: 26 }, (_, i) => i * 1_000));
  });

  it("25 s of 429 with x-ms-retry-after-ms: 50 are ridden out, one request each 50 ms", async () => {
    const { outcome, times } = await upsertThroughHttp(25_000, 429, { "x-ms-retry-after-ms": "50" });
    expect(outcome).toBe("ok");
    expect(times).toHaveLength(501);
    expect(times.at(-1)).toBe(25_000);
    expect(times.every((at, i) => at === i * 50)).toBe(true);
  });

  it("the window counts from the first attempt: a storm longer than maxElapsedMs is given up at its end", async () => {
    const { outcome, times } = await upsertThroughHttp(
      600_000,
      503,
      { "retry-after": "1" },
      { maxElapsedMs: 5_000 },
    );
    expect(outcome).toBeInstanceOf(StoreError);
    expect(outcome).toMatchObject({ statusCode: 503 });
    expect(times).toEqual([0, 1_000, 2_000, 3_000, 4_000, 5_000]);
  });

  it("a Retry-After longer than what is left of the window fails at once, saying so", async () => {
    const { outcome, times } = await upsertThroughHttp(600_000, 503, { "retry-after": "120" });
    expect(times).toEqual([0]);
    expect(outcome).toBeInstanceOf(StoreError);
    expect(outcome).toMatchObject({ statusCode: 503, retryAfterMs: 120_000 });
    expect((outcome as Error).message).toMatch(/retry after 120000 ms, more than the 60000 ms left/);
  });

  it("a retry count the caller sets caps the attempts", async () => {
    const { outcome, times } = await upsertThroughHttp(
      25_000,
      429,
      { "x-ms-retry-after-ms": "50" },
      { retries: 3 },
    );
    expect(outcome).toMatchObject({ statusCode: 429, retryAfterMs: 50 });
    expect(times).toEqual([0, 50, 100, 150]);
  });
});
