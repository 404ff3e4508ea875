/**
 * Pauses after losing a race to another writer (list-index conflicts) come from the context's retry
 * policy, like fault retries: its injectable clock and jitter, so tests control them.
 */
import { describe, expect, it } from "vitest";
import { RetryPolicy } from "../../src/repository/pipeline/retry-policy.js";

describe("contention backoff", () => {
  it("sleeps on the policy's clock, a jittered share of a ceiling that grows with the round", async () => {
    const slept: number[] = [];
    const draws = [0.5, 1, 0, 0.25];
    const policy = new RetryPolicy(
      {},
      async (ms) => void slept.push(ms),
      () => draws.shift() ?? 0,
    );
    await policy.contend(1);
    await policy.contend(10);
    await policy.contend(3);
    await policy.contend(100);
    // Ceiling min(50, 2 * round) times the drawn jitter.
    expect(slept).toEqual([0.5 * 2, 1 * 20, 0 * 6, 0.25 * 50]);
  });
});
