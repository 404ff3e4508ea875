/**
 * Waits longer than Node's timer limit (2^31 − 1 ms, about 24.8 days): Node sets such a `setTimeout` to
 * 1 ms, and vitest's fake timers do the same, so each test here fails on a plain `setTimeout`.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { startWorker } from "../../src/repository/core/repair-worker.js";
import { defaultSleep } from "../../src/repository/pipeline/retry-policy.js";
import { MAX_TIMER_MS, setLongTimeout } from "../../src/util/long-timeout.js";

const DAY_MS = 24 * 60 * 60 * 1000;

afterEach(() => {
  vi.useRealTimers();
});

describe("waits beyond Node's timer limit", () => {
  it("setLongTimeout runs once, after the whole delay, and clear() stops it between steps", () => {
    vi.useFakeTimers();
    let ran = 0;
    setLongTimeout(() => ran++, MAX_TIMER_MS + 10_000);
    vi.advanceTimersByTime(MAX_TIMER_MS);
    expect(ran).toBe(0);
    vi.advanceTimersByTime(9_999);
    expect(ran).toBe(0);
    vi.advanceTimersByTime(1);
    expect(ran).toBe(1);

    const cleared = setLongTimeout(() => ran++, 2 * MAX_TIMER_MS);
    vi.advanceTimersByTime(MAX_TIMER_MS + 1);
    cleared.clear();
    vi.runAllTimers();
    expect(ran).toBe(1);
  });

  it("defaultSleep (retries, change-feed polls) waits the whole delay, and an abort still ends it", async () => {
    vi.useFakeTimers();
    let woke = false;
    const slept = defaultSleep(MAX_TIMER_MS + 5_000).then(() => {
      woke = true;
    });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(woke).toBe(false);
    await vi.advanceTimersByTimeAsync(MAX_TIMER_MS);
    await slept;
    expect(woke).toBe(true);

    const controller = new AbortController();
    const aborted = defaultSleep(3 * MAX_TIMER_MS, controller.signal);
    await vi.advanceTimersByTimeAsync(MAX_TIMER_MS + 1);
    controller.abort(new Error("stopped"));
    await expect(aborted).rejects.toThrow("stopped");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a repair worker with a 30-day interval runs one pass, then the next 30 days after it", async () => {
    vi.useFakeTimers();
    let passes = 0;
    const worker = startWorker(
      { intervalMs: 30 * DAY_MS },
      async () => {
        passes++;
        return { counts: {}, errors: [] };
      },
      () => undefined,
    );
    await vi.advanceTimersByTimeAsync(60_000);
    expect(passes).toBe(1);
    await vi.advanceTimersByTimeAsync(30 * DAY_MS - 120_000);
    expect(passes).toBe(1);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(passes).toBe(2);
    await worker.stop();
    expect(vi.getTimerCount()).toBe(0);
  });
});
