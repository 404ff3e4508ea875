/**
 * The pacer on its own, on a virtual clock: order and fairness of waiting requests, charging a query's
 * rows after its page, account-wide throttles, and the memory bound (idle partition buckets dropped).
 */
import { describe, expect, it } from "vitest";
import { StoreError } from "../../src/errors.js";
import { throttleOf } from "../../src/repository/pipeline/pacing/paced-store.js";
import { IDLE_BUCKET_MS, type PaceReport, Pacer } from "../../src/repository/pipeline/pacing/pacer.js";
import { pinnedPartition } from "../../src/repository/pipeline/pacing/pinned-partition.js";
import { VirtualClock } from "../support/virtual-clock.js";

function pacerOn(
  clock: VirtualClock,
  limits: { perPartition?: number; perAccount?: number },
  reports: PaceReport[] = [],
): Pacer {
  return new Pacer(
    { perPartition: limits.perPartition, perAccount: limits.perAccount },
    { now: clock.now, sleep: clock.sleep },
    (report) => reports.push(report),
  );
}

describe("Pacer: order and fairness", () => {
  it("sends one partition's requests in arrival order, each after the previous one's entities are paid for", async () => {
    const clock = new VirtualClock();
    const pacer = pacerOn(clock, { perPartition: 100 }); // starts at 50/s
    const sent: Array<{ id: number; at: number }> = [];
    await clock.run(() =>
      Promise.all(
        [0, 1, 2, 3].map(async (id) => {
          const ticket = await pacer.admit("t", "p", 10);
          sent.push({ id, at: clock.now() });
          ticket.done();
        }),
      ),
    );
    expect(sent.map((s) => s.id)).toEqual([0, 1, 2, 3]);
    // 10 entities at no more than 100/s: at least 100 ms apart.
    for (let i = 1; i < sent.length; i++) expect(sent[i]!.at - sent[i - 1]!.at).toBeGreaterThanOrEqual(100);
  });

  it("under a context-wide limit, a partition with a backlog does not make another partition wait behind it", async () => {
    const clock = new VirtualClock();
    const pacer = pacerOn(clock, { perAccount: 100 });
    const order: string[] = [];
    const request = async (partitionKey: string) => {
      const ticket = await pacer.admit("t", partitionKey, 10);
      order.push(partitionKey);
      ticket.done();
    };
    await clock.run(() => {
      const hot = Array.from({ length: 20 }, () => request("hot"));
      // Arrives after the whole backlog of "hot", yet goes next: the partition served longest ago first.
      const cold = request("cold");
      return Promise.all([...hot, cold]);
    });
    expect(order).toHaveLength(21);
    expect(order.indexOf("cold")).toBe(1);
  });

  it("every partition with waiting requests is served in turn (round robin), none starves", async () => {
    const clock = new VirtualClock();
    const pacer = pacerOn(clock, { perAccount: 1000 });
    const order: string[] = [];
    await clock.run(() =>
      Promise.all(
        ["a", "b", "c"].flatMap((partitionKey) =>
          Array.from({ length: 5 }, async () => {
            const ticket = await pacer.admit("t", partitionKey, 50);
            order.push(partitionKey);
            ticket.done();
          }),
        ),
      ),
    );
    // Any three consecutive sends cover all three partitions.
    for (let i = 0; i + 3 <= order.length; i += 3) expect(new Set(order.slice(i, i + 3)).size).toBe(3);
  });
});

describe("Pacer: charging and back-off", () => {
  it("charges a query's rows once its page has arrived", async () => {
    const clock = new VirtualClock();
    const pacer = pacerOn(clock, { perPartition: 100 });
    let second = -1;
    await clock.run(async () => {
      const first = await pacer.admit("t", "p", 0);
      first.done(80); // the page brought 80 rows
      await pacer.admit("t", "p", 0);
      second = clock.now();
    });
    // 80 entities at no more than 100/s.
    expect(second).toBeGreaterThanOrEqual(800);
  });

  it("an answer saying the account is over its limit lowers the context's pace, not the partition's", async () => {
    const clock = new VirtualClock();
    const reports: PaceReport[] = [];
    const pacer = pacerOn(clock, { perPartition: 100, perAccount: 1000 }, reports);
    await clock.run(async () => {
      (await pacer.admit("t", "p", 1)).failed("account");
      (await pacer.admit("t", "p", 1)).failed("partition");
    });
    expect(reports.map(({ scope, reason }) => ({ scope, reason }))).toEqual([
      { scope: "account", reason: "throttled" },
      { scope: "partition", reason: "throttled" },
    ]);
    expect(reports[0]).toMatchObject({ limit: 1000, previousRate: 500, rate: 250 });
    expect(reports[0]?.partitionKey).toBeUndefined();
    expect(reports[1]).toMatchObject({
      limit: 100,
      table: "t",
      partitionKey: "p",
      previousRate: 50,
      rate: 25,
    });
  });

  it("classifies throttle answers: 503, 429 and 500 OperationTimedOut; 'account limit' messages are account-wide", () => {
    const busy = new StoreError("503 ServerBusy", { statusCode: 503, serviceCode: "ServerBusy" });
    const cosmos = new StoreError("429", { statusCode: 429, serviceCode: "TooManyRequests" });
    const timedOut = new StoreError("500", { statusCode: 500, serviceCode: "OperationTimedOut" });
    const account = new StoreError("Operations per second is over the account limit.", {
      statusCode: 503,
      serviceCode: "ServerBusy",
    });
    expect([busy, cosmos, timedOut].map(throttleOf)).toEqual(["partition", "partition", "partition"]);
    expect(throttleOf(account)).toBe("account");
    expect(
      throttleOf(new StoreError("500", { statusCode: 500, serviceCode: "InternalError" })),
    ).toBeUndefined();
    expect(throttleOf(new StoreError("408", { statusCode: 408, serviceCode: "Timeout" }))).toBeUndefined();
    expect(throttleOf(new Error("not a store error"))).toBeUndefined();
  });
});

describe("Pacer: memory", () => {
  it("drops buckets of partitions idle for a while, but never one with a request in flight", async () => {
    const clock = new VirtualClock();
    const pacer = pacerOn(clock, { perPartition: 100 });
    await clock.run(async () => {
      const busy = await pacer.admit("t", "busy", 1); // never answered in this test
      for (let i = 0; i < 1000; i++) (await pacer.admit("t", `p${i}`, 1)).done();
      expect(pacer.bucketCount).toBe(1001);
      await clock.sleep(IDLE_BUCKET_MS);
      (await pacer.admit("t", "fresh", 1)).done();
      expect(pacer.bucketCount).toBe(2); // "busy" (in flight) and "fresh"
      busy.done();
    });
  });
});

describe("pinnedPartition", () => {
  it("finds the partition a planned filter is confined to", () => {
    expect(pinnedPartition("PartitionKey eq 'a'")).toBe("a");
    expect(pinnedPartition("PartitionKey eq 'it''s' and RowKey ge 'x'")).toBe("it's");
    expect(pinnedPartition("PartitionKey eq 'a' and (x eq 1 or y eq 2)")).toBe("a");
    expect(pinnedPartition("PartitionKey eq 'a' and x eq 'b or c'")).toBe("a");
  });

  it("does not pin a filter that may reach other partitions", () => {
    expect(pinnedPartition(undefined)).toBeUndefined();
    expect(pinnedPartition("x eq 1")).toBeUndefined();
    expect(pinnedPartition("PartitionKey eq 'a' or PartitionKey eq 'b'")).toBeUndefined();
    expect(pinnedPartition("PartitionKey eq 'a' and x eq 1 or y eq 2")).toBeUndefined();
    expect(pinnedPartition("PartitionKey eq 'a' and x eq 1 or(y eq 2)")).toBeUndefined();
    expect(pinnedPartition("PartitionKey eq 'ab'x")).toBeUndefined();
    expect(pinnedPartition("PartitionKey ge 'a'")).toBeUndefined();
  });
});
