/**
 * The pace rule of one bucket, as the README states it: start at half the limit, double after each
 * quiet second (slow start); a throttle answer halves the pace at most once a second, never below a
 * tenth of the limit; afterwards each quiet second adds a tenth of the limit. Times are in ms.
 */
import { describe, expect, it } from "vitest";
import { PaceBucket } from "../../src/repository/pipeline/pacing/pace-bucket.js";

describe("PaceBucket: slow start", () => {
  it("starts at half the limit and doubles after a second with a success and no throttle", () => {
    const bucket = new PaceBucket(500, 0);
    expect(bucket.rate).toBe(250);
    expect(bucket.succeeded(999)).toBeUndefined();
    expect(bucket.succeeded(1000)).toEqual({ rate: 500, previousRate: 250, reason: "ramp-up" });
    // At the limit it stays there.
    expect(bucket.succeeded(5000)).toBeUndefined();
    expect(bucket.rate).toBe(500);
  });

  it("spaces requests by their cost at the current pace, and a batch larger than a second's worth still goes", () => {
    const bucket = new PaceBucket(100, 0);
    expect(bucket.readyAt).toBe(0);
    bucket.charge(100, 0); // 100 entities at 50/s: paid for after 2 s
    expect(bucket.readyAt).toBe(2000);
    bucket.charge(10, 500); // queued behind the earlier debt, not from "now"
    expect(bucket.readyAt).toBe(2200);
  });

  it("charges a late request from when it was due, at most 100 ms back, so late timers do not slow the pace", () => {
    const bucket = new PaceBucket(100, 0);
    bucket.charge(50, 0); // due at 1000
    bucket.charge(50, 1030); // ran 30 ms late: from 1000, not 1030
    expect(bucket.readyAt).toBe(2000);
    bucket.charge(50, 5000); // after an idle spell: from 4900
    expect(bucket.readyAt).toBe(5900);
  });

  it("re-prices debt still owed when the pace changes", () => {
    const bucket = new PaceBucket(100, 0);
    bucket.charge(100, 0); // due at 2000 at 50/s
    bucket.succeeded(1000); // doubles to 100/s at t=1000: the 1 s still owed becomes 0.5 s
    expect(bucket.rate).toBe(100);
    expect(bucket.readyAt).toBe(1500);
  });
});

describe("PaceBucket: back-off and recovery (AIMD)", () => {
  it("halves on a throttle answer, once per second, never below a tenth of the limit", () => {
    const bucket = new PaceBucket(1000, 0);
    bucket.succeeded(1000); // 1000
    expect(bucket.throttled(1100)).toEqual({ rate: 500, previousRate: 1000, reason: "throttled" });
    // Answers to requests sent at the old pace, within the same second: no second decrease.
    expect(bucket.throttled(1500)).toBeUndefined();
    expect(bucket.rate).toBe(500);
    expect(bucket.throttled(2100)?.rate).toBe(250);
    expect(bucket.throttled(3100)?.rate).toBe(125);
    expect(bucket.throttled(4100)?.rate).toBe(100);
    expect(bucket.throttled(5100)).toBeUndefined();
    expect(bucket.rate).toBe(100);
  });

  it("after a throttle, adds a tenth of the limit per quiet second instead of doubling", () => {
    const bucket = new PaceBucket(1000, 0);
    expect(bucket.throttled(0)?.rate).toBe(250); // slow start ends at the first throttle
    expect(bucket.succeeded(500)).toBeUndefined();
    expect(bucket.succeeded(1000)).toEqual({ rate: 350, previousRate: 250, reason: "recovered" });
    expect(bucket.succeeded(2000)?.rate).toBe(450);
  });

  it("a second with a throttle answer is not quiet: no increase at its end", () => {
    const bucket = new PaceBucket(1000, 0);
    bucket.throttled(0); // 250
    bucket.throttled(400); // within the second: counted, not applied
    expect(bucket.succeeded(1000)).toBeUndefined();
    expect(bucket.rate).toBe(250);
    expect(bucket.succeeded(2000)?.rate).toBe(350);
  });

  it("is idle only when it owes nothing and nothing is admitted", () => {
    const bucket = new PaceBucket(100, 0);
    bucket.charge(50, 0); // owes 1 s at 50/s
    expect(bucket.isIdle(500)).toBe(false);
    expect(bucket.isIdle(1000)).toBe(true);
    bucket.active++;
    expect(bucket.isIdle(1000)).toBe(false);
  });
});
