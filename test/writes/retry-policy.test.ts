/**
 * Retry delays and observability, with an injected clock and random source (no real waiting):
 * exponential backoff with jitter within [minDelayMs, maxDelayMs], Retry-After honoured as given
 * within the retry window, an immediate first retry after a connection reset, and the context's events.
 */
import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import {
  EntityNotFoundError,
  MemoryStore,
  StoreError,
  TableContext,
  type TableKitEvent,
  ValidationError,
} from "../../src/index.js";
import {
  type AttemptContext,
  defaultSleep,
  RetryPolicy,
} from "../../src/repository/pipeline/retry-policy.js";
import { CountingStore } from "../support/counting-store.js";
import { FaultyStore } from "../support/faulty-store.js";
import { freshPrefix, rejectionOf } from "./harness.js";
import { Reading, reading } from "./models.js";

const busy = () => new StoreError("busy", { statusCode: 503, serviceCode: "ServerBusy" });
const internal = () => new StoreError("internal", { statusCode: 500, serviceCode: "InternalError" });
const timeout = () => new StoreError("timeout", { statusCode: 408 });
const clientTimeout = () => new StoreError("no response", { serviceCode: "Timeout" });
const reset = () => new StoreError("reset", { serviceCode: "ECONNRESET" });
const refused = () => new StoreError("refused", { serviceCode: "ECONNREFUSED" });
const throttledFor = (retryAfterMs: number) =>
  new StoreError("busy", { statusCode: 503, serviceCode: "ServerBusy", retryAfterMs });

/** A policy whose sleeps are recorded, not waited. */
function recordingPolicy(options: ConstructorParameters<typeof RetryPolicy>[0], random: () => number) {
  const sleeps: number[] = [];
  const policy = new RetryPolicy(options, async (ms) => void sleeps.push(ms), random);
  return { policy, sleeps };
}

/** An operation failing with `errors` in turn, then resolving "done"; it records what each attempt knew. */
function failing(...errors: Error[]) {
  const attempts: AttemptContext[] = [];
  const operation = async (context: AttemptContext) => {
    attempts.push({ ...context });
    const error = errors[attempts.length - 1];
    if (error) throw error;
    return "done";
  };
  return { operation, attempts };
}

describe("RetryPolicy delays", () => {
  const options = { retries: 8, minDelayMs: 100, maxDelayMs: 1_000 };

  it("grow exponentially from minDelayMs up to maxDelayMs at the top of the jitter range", async () => {
    const { policy, sleeps } = recordingPolicy(options, () => 1);
    const { operation } = failing(busy(), busy(), internal(), timeout(), busy(), busy(), busy());
    await expect(policy.run(operation)).resolves.toBe("done");
    expect(sleeps).toEqual([100, 200, 400, 800, 1_000, 1_000, 1_000]);
  });

  it("at the bottom of the jitter range are half the exponential ceiling, never below minDelayMs", async () => {
    const { policy, sleeps } = recordingPolicy(options, () => 0);
    await policy.run(failing(busy(), busy(), busy(), busy(), busy(), busy()).operation);
    expect(sleeps).toEqual([100, 100, 200, 400, 500, 500]);
  });

  it("stay within [minDelayMs, the exponential ceiling] for any jitter", async () => {
    for (const jitter of [0.1, 0.37, 0.5, 0.99]) {
      const { policy, sleeps } = recordingPolicy(options, () => jitter);
      await policy.run(failing(...Array.from({ length: 8 }, busy)).operation);
      expect(sleeps).toHaveLength(8);
      sleeps.forEach((delay, i) => {
        expect(delay).toBeGreaterThanOrEqual(options.minDelayMs);
        expect(delay).toBeLessThanOrEqual(Math.min(options.maxDelayMs, options.minDelayMs * 2 ** i));
      });
      // With a fixed jitter the delays never shrink.
      for (let i = 1; i < sleeps.length; i++) expect(sleeps[i]).toBeGreaterThanOrEqual(sleeps[i - 1]!);
    }
  });

  it("honour the service's Retry-After as given, above maxDelayMs too, within the window", async () => {
    const { policy, sleeps } = recordingPolicy({ ...options, maxElapsedMs: 10_000 }, () => 0);
    await policy.run(failing(throttledFor(350), throttledFor(6_000), throttledFor(0)).operation);
    expect(sleeps).toEqual([350, 6_000, 0]);
  });

  it("fail at once, saying so, when Retry-After is longer than what is left of the window", async () => {
    const { policy, sleeps } = recordingPolicy({ ...options, maxElapsedMs: 10_000 }, () => 0);
    const last = throttledFor(4_000);
    const { operation, attempts } = failing(throttledFor(7_000), last, busy());
    const error = await rejectionOf(policy.run(operation));
    // 7 s slept, 3 s left: a 4 s Retry-After is not waited, and no third attempt is made.
    expect(sleeps).toEqual([7_000]);
    expect(attempts).toHaveLength(2);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({
      statusCode: 503,
      serviceCode: "ServerBusy",
      retryAfterMs: 4_000,
      cause: last,
    });
    expect((error as Error).message).toMatch(
      /retry after 4000 ms, more than the 3000 ms left of the 10000 ms retry window/,
    );
  });

  it("without a retry count, retry until the window ends: the last backoff is shortened to end with it", async () => {
    const { policy, sleeps } = recordingPolicy(
      { minDelayMs: 100, maxDelayMs: 1_000, maxElapsedMs: 5_000 },
      () => 1,
    );
    const { operation, attempts } = failing(...Array.from({ length: 100 }, busy));
    expect(await rejectionOf(policy.run(operation))).toMatchObject({ statusCode: 503 });
    // 100 + 200 + 400 + 800 + 1,000 × 3 = 4,500 ms, then the 500 ms left; the attempt at 5 s is the last.
    expect(sleeps).toEqual([100, 200, 400, 800, 1_000, 1_000, 1_000, 500]);
    expect(sleeps.reduce((a, b) => a + b)).toBe(5_000);
    expect(attempts).toHaveLength(9);
  });

  it("retry a connection reset at once the first time, then back off", async () => {
    const { policy, sleeps } = recordingPolicy(options, () => 1);
    await policy.run(failing(reset(), reset(), reset()).operation);
    expect(sleeps[0]).toBe(0);
    expect(sleeps[1]).toBeGreaterThanOrEqual(options.minDelayMs);
    expect(sleeps[2]).toBeGreaterThan(sleeps[1]!);
    expect(sleeps[2]).toBeLessThanOrEqual(options.maxDelayMs);
  });

  it("attempt retries + 1 times, then surface the last error with its status", async () => {
    const { policy, sleeps } = recordingPolicy({ ...options, retries: 3 }, () => 0.5);
    const { operation, attempts } = failing(busy(), internal(), timeout(), busy(), busy());
    const error = await rejectionOf(policy.run(operation));
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4]);
    expect(sleeps).toHaveLength(3);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ statusCode: 503 });
  });

  it.each([
    ["400", () => new StoreError("bad", { statusCode: 400, serviceCode: "InvalidInput" })],
    ["403", () => new StoreError("no", { statusCode: 403, serviceCode: "AuthorizationFailure" })],
    ["404", () => new EntityNotFoundError({ table: "t", partitionKey: "p", rowKey: "r" })],
    ["409", () => new StoreError("conflict", { statusCode: 409, serviceCode: "EntityAlreadyExists" })],
    ["412", () => new StoreError("precondition", { statusCode: 412 })],
    ["413", () => new StoreError("large", { statusCode: 413, serviceCode: "RequestBodyTooLarge" })],
    ["a ValidationError", () => new ValidationError("rule", "bad input")],
    ["a TypeError", () => new TypeError("bug")],
  ])("never retry %s: one attempt, no sleep, the error itself", async (_name, make) => {
    const { policy, sleeps } = recordingPolicy(options, () => 0.5);
    const thrown = make();
    const { operation, attempts } = failing(thrown);
    expect(await rejectionOf(policy.run(operation))).toBe(thrown);
    expect(attempts).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it("tells later attempts whether an earlier one may have been applied", async () => {
    const { policy } = recordingPolicy(options, () => 0);
    const notProcessed = failing(refused(), busy(), timeout());
    await policy.run(notProcessed.operation);
    // A refused connection never reached the service; 503 and 408 are answered without processing it.
    expect(notProcessed.attempts.map((a) => a.possiblyApplied)).toEqual([false, false, false, false]);
    for (const error of [reset(), internal(), clientTimeout()]) {
      const after = failing(error);
      await policy.run(after.operation);
      expect(after.attempts.map((a) => a.possiblyApplied)).toEqual([false, true]);
    }
  });

  it("retries: 0 makes exactly one attempt", async () => {
    const { policy, sleeps } = recordingPolicy({ retries: 0 }, () => 0);
    const { operation, attempts } = failing(busy());
    expect(await rejectionOf(policy.run(operation))).toMatchObject({ statusCode: 503 });
    expect(attempts).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });
});

describe("TableContext retries and events", () => {
  async function context(options: { onEvent?: (event: TableKitEvent) => void; retries?: number } = {}) {
    const faulty = new FaultyStore(new MemoryStore());
    const counter = new CountingStore(faulty);
    const sleeps: number[] = [];
    const db = new TableContext({
      store: counter,
      tablePrefix: freshPrefix(),
      retry: { retries: options.retries ?? 6, minDelayMs: 10, maxDelayMs: 80 },
      sleep: async (ms) => void sleeps.push(ms),
      ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    });
    await db.ensureTables(Reading);
    counter.reset();
    return { db, counter, plan: faulty.plan, sleeps };
  }

  it("sleeps through the injected clock, within bounds, and reports each attempt and retry", async () => {
    const events: TableKitEvent[] = [];
    const { db, plan, sleeps, counter } = await context({ onEvent: (event) => events.push(event) });
    events.length = 0;
    plan.faultNext({ method: "upsert", kind: "busy", count: 2 });
    plan.faultNext({ method: "upsert", kind: "internal" });
    plan.faultNext({ method: "upsert", kind: "busyRetryAfter" });
    plan.faultNext({ method: "upsert", kind: "reset" });
    const readings = db.repository(Reading);
    await readings.upsert(reading(1, 1, 1));
    expect(counter.calls.upsert).toBe(6);
    expect(sleeps).toHaveLength(5);
    for (const delay of sleeps.slice(0, 3)) {
      expect(delay).toBeGreaterThanOrEqual(10);
      expect(delay).toBeLessThanOrEqual(80);
    }
    // Retry-After of a second, waited as given (maxDelayMs bounds the backoff only).
    expect(sleeps[3]).toBe(1_000);
    // A reset after four other faults is not a first retry: it backs off like any transient fault.
    expect(sleeps[4]).toBeGreaterThanOrEqual(10);

    const requests = events.filter((e) => e.type === "request");
    const retries = events.filter((e) => e.type === "retry");
    expect(requests.map((e) => [e.operation, e.attempt])).toEqual(
      [1, 2, 3, 4, 5, 6].map((attempt) => ["upsert", attempt]),
    );
    expect(requests.every((e) => e.table === readings.table)).toBe(true);
    expect(retries.map((e) => e.delayMs)).toEqual(sleeps);
    expect(retries.map((e) => [e.attempt, (e.cause as StoreError).statusCode])).toEqual([
      [1, 503],
      [2, 503],
      [3, 500],
      [4, 503],
      [5, undefined],
    ]);
    expect(retries[4]).toMatchObject({ cause: { serviceCode: "ECONNRESET" } });
  });

  it("retries a reset at once when it is the first fault", async () => {
    const { db, plan, sleeps } = await context();
    plan.faultNext({ method: "getEntity", kind: "reset" });
    plan.faultNext({ method: "getEntity", kind: "reset" });
    await db.repository(Reading).get({ sensor: "s001", seq: 1 });
    expect(sleeps[0]).toBe(0);
    expect(sleeps[1]).toBeGreaterThanOrEqual(10);
  });

  it("reports committed and failed batches", async () => {
    const events: TableKitEvent[] = [];
    const { db, plan } = await context({ onEvent: (event) => events.push(event), retries: 1 });
    const readings = db.repository(Reading);
    const items = [0, 1, 2].flatMap((sensor) =>
      Array.from({ length: 150 }, (_, seq) => reading(sensor, seq, 1)),
    );
    await readings.bulkUpsert(items, { concurrency: 1 });
    const committed = events.filter((e) => e.type === "batch-committed");
    expect(committed.map((e) => e.operations).sort((a, b) => a - b)).toEqual([50, 50, 50, 100, 100, 100]);
    events.length = 0;
    plan.faultNext({ method: "submitTransaction", kind: "internal", count: 2 });
    await expect(db.transaction((tx) => void tx.upsert(reading(7, 1, 1)))).rejects.toMatchObject({
      statusCode: 500,
    });
    expect(events.filter((e) => e.type === "batch-failed")).toMatchObject([
      { partitionKey: "s007", operations: 1, error: { statusCode: 500 } },
    ]);
  });

  it("a throwing listener changes nothing", async () => {
    let calls = 0;
    const { db, plan, counter } = await context({
      onEvent: () => {
        calls += 1;
        throw new Error("listener failure");
      },
    });
    plan.faultNext({ method: "insert", kind: "busy", count: 2 });
    const readings = db.repository(Reading);
    await readings.insert(reading(2, 2, 2));
    await readings.bulkUpsert([reading(2, 3, 2), reading(2, 4, 2)]);
    await db.transaction((tx) => void tx.upsert(reading(2, 5, 2)));
    expect(await readings.find({ sensor: "s002" }).toArray()).toHaveLength(4);
    expect(counter.calls.insert).toBe(3);
    expect(calls).toBeGreaterThanOrEqual(3 + 2 + 1);
  });

  it("is silent by default and retry: false makes one attempt", async () => {
    const faulty = new FaultyStore(new MemoryStore());
    const counter = new CountingStore(faulty);
    const db = new TableContext({ store: counter, retry: false });
    await db.ensureTables(Reading);
    faulty.plan.faultNext({ method: "upsert", kind: "busy" });
    counter.reset();
    expect(await rejectionOf(db.repository(Reading).upsert(reading(1, 1, 1)))).toMatchObject({
      statusCode: 503,
    });
    expect(counter.calls.upsert).toBe(1);
  });
});

describe("retry options", () => {
  // Found at HEAD eae5eae: retry options were not checked ({ retries: -1 } built a context whose every
  // request then failed with p-retry's TypeError; 2.5 and minDelayMs > maxDelayMs were accepted, the latter
  // giving delays outside [minDelayMs, maxDelayMs]). Bad input must be a ValidationError before any request.
  it.each([
    { retries: -1 },
    { retries: Number.NaN },
    { retries: 2.5 },
    { minDelayMs: -1 },
    { minDelayMs: 500, maxDelayMs: 10 },
  ])("%o is a ValidationError", (retry) => {
    expect(() => new TableContext({ store: new MemoryStore(), retry })).toThrow(ValidationError);
  });

  it("valid options are accepted, including no retries", () => {
    for (const retry of [{}, { retries: 0 }, { retries: 3, minDelayMs: 5, maxDelayMs: 5 }]) {
      expect(new TableContext({ store: new MemoryStore(), retry }).store).toBeInstanceOf(MemoryStore);
    }
  });
});

describe("defaultSleep", () => {
  it("leaves no abort listener on a long-lived signal once each sleep has ended", async () => {
    const controller = new AbortController();
    // A change-feed consumer sleeps between polls on one signal: each sleep must take its listener away.
    for (let poll = 0; poll < 12; poll++) await defaultSleep(1, controller.signal);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("still ends early, rejecting with the signal's reason, when the signal aborts", async () => {
    const controller = new AbortController();
    const slept = defaultSleep(60_000, controller.signal);
    controller.abort(new Error("stopped"));
    await expect(slept).rejects.toThrow("stopped");
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });
});
