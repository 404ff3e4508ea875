import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  FAN_OUT_READS_AT_ONCE,
  type FanOut,
  type FanOutExecutor,
  iterateFanOut,
  pageFanOut,
} from "../../src/query/fan-out.js";
import type { StoreContinuation } from "../../src/wire/wire-entity.js";
import { testSeed } from "../support/seeded-random.js";

/**
 * A sorted in-memory executor over buckets of RowKeys that answers with short and empty pages (as the
 * service may), understands the one filter shape the fan-out sends (`PartitionKey eq 'b<i>'`, optionally
 * `and RowKey gt '<key>'`), and counts the results it holds out at once.
 */
function fakeExecutor(buckets: string[][], pageCut: number): FanOutExecutor<string> {
  return {
    async fetchPage(_table, filter, _select, top, continuation: StoreContinuation | undefined) {
      const match = /^PartitionKey eq 'b(\d+)'(?: and RowKey gt '(.*)')?$/.exec(filter);
      if (!match) throw new Error(`unexpected filter ${filter}`);
      const rows = [...(buckets[Number(match[1])] ?? [])]
        .sort()
        .filter((k) => match[2] === undefined || k > match[2]);
      const start = continuation === undefined ? 0 : Number(continuation.nextRowKey);
      // Some pages are cut short or empty although more follows, as the service's are.
      // Never two empty pages in a row, so every request after an empty one makes progress.
      const empty = continuation?.nextPartitionKey !== "empty" && (start + pageCut) % 3 === 0;
      const take = empty ? 0 : Math.min(top, 1 + ((start * 7 + pageCut) % top));
      const end = Math.min(rows.length, start + take);
      const items = rows.slice(start, end);
      return end < rows.length
        ? { items, continuation: { nextPartitionKey: empty ? "empty" : "x", nextRowKey: String(end) } }
        : { items };
    },
  };
}

function fanOut(buckets: string[][], pageCut: number): FanOut<string> {
  return {
    executor: fakeExecutor(buckets, pageCut),
    table: "t",
    filters: buckets.map((_, i) => `PartitionKey eq 'b${i}'`),
    select: undefined,
    rowKeyOf: (item) => item,
    fingerprint: "fp",
  };
}

// Distinct lowercase keys spread over 1..6 buckets (some empty).
const bucketsArb = fc.uniqueArray(fc.stringMatching(/^[a-z]{1,4}$/), { maxLength: 60 }).chain((keys) =>
  fc.integer({ min: 1, max: 6 }).chain((n) =>
    fc
      .array(fc.integer({ min: 0, max: n - 1 }), { minLength: keys.length, maxLength: keys.length })
      .map((where) => {
        const buckets: string[][] = Array.from({ length: n }, () => []);
        for (const [i, key] of keys.entries()) buckets[where[i] as number]?.push(key);
        return { keys, buckets };
      }),
  ),
);

describe("fan-out merge (sorted stores)", () => {
  it("iterates every key once in order, whatever the page shapes", async () => {
    await fc.assert(
      fc.asyncProperty(bucketsArb, fc.integer({ min: 0, max: 5 }), async ({ keys, buckets }, cut) => {
        const seen: string[] = [];
        for await (const key of iterateFanOut(fanOut(buckets, cut), undefined)) seen.push(key);
        expect(seen).toEqual([...keys].sort());
      }),
      { seed: testSeed(3), numRuns: 150 },
    );
  });

  it("pages with one continuation resume exactly, under take too", async () => {
    await fc.assert(
      fc.asyncProperty(
        bucketsArb,
        fc.integer({ min: 1, max: 9 }),
        fc.option(fc.integer({ min: 0, max: 70 }), { nil: undefined }),
        fc.integer({ min: 0, max: 5 }),
        async ({ keys, buckets }, size, take, cut) => {
          const fan = fanOut(buckets, cut);
          const paged: string[] = [];
          let continuation: string | undefined;
          let pages = 0;
          do {
            const page = await pageFanOut(fan, size, take, continuation);
            expect(page.items.length).toBeLessThanOrEqual(size);
            paged.push(...page.items);
            continuation = page.continuation;
            pages++;
            expect(pages).toBeLessThanOrEqual(keys.length + 2);
          } while (continuation !== undefined);
          expect(paged).toEqual([...keys].sort().slice(0, take ?? keys.length));
        },
      ),
      { seed: testSeed(4), numRuns: 150 },
    );
  });
});

describe("fan-out parallelism", () => {
  /** An executor over `count` empty buckets that records the most reads it ever had in flight. */
  function countingFan(count: number, sorted: boolean) {
    const seen = { inFlight: 0, max: 0, reads: 0 };
    const read = async () => {
      seen.reads++;
      seen.max = Math.max(seen.max, ++seen.inFlight);
      // One macrotask: every read the fan-out started in the same turn is in flight together.
      await new Promise((resolve) => setImmediate(resolve));
      seen.inFlight--;
    };
    const executor: FanOutExecutor<string> = {
      async fetchPage() {
        await read();
        return { items: [] };
      },
      ...(sorted
        ? {}
        : {
            async fetchFirst() {
              await read();
              return [];
            },
          }),
    };
    const fan: FanOut<string> = {
      executor,
      table: "t",
      filters: Array.from({ length: count }, (_, i) => `PartitionKey eq 'b${i}'`),
      select: undefined,
      rowKeyOf: (item) => item,
      fingerprint: "fp",
    };
    return { fan, seen };
  }

  it(`reads at most ${FAN_OUT_READS_AT_ONCE} of 1,024 buckets at a time, sorted or not`, async () => {
    expect(FAN_OUT_READS_AT_ONCE).toBe(32);
    const merged = countingFan(1_024, true);
    expect(await pageFanOut(merged.fan, 10, undefined, undefined)).toEqual({ items: [] });
    expect(merged.seen).toMatchObject({ reads: 1_024, max: FAN_OUT_READS_AT_ONCE });
    const unsorted = countingFan(1_024, false);
    const all: string[] = [];
    for await (const item of iterateFanOut(unsorted.fan, 5)) all.push(item);
    expect(all).toEqual([]);
    expect(unsorted.seen).toMatchObject({ reads: 1_024, max: FAN_OUT_READS_AT_ONCE });
  });
});
