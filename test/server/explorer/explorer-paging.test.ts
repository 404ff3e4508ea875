import { describe, expect, test } from "vitest";
import { EXPLORER_PAGING_SCRIPT } from "../../../src/server/explorer/explorer-paging-script.js";

// The explorer's page filling, run alone (it uses none of the page script's helpers) against a table
// that answers as the service does: a page ends at a partition boundary with a continuation.

interface Continuation {
  partition: number;
  row: number;
}
interface Page {
  rows: string[];
  next: Continuation | null;
}
type FetchPage = (continuation: Continuation | null, top: number) => Promise<Page>;
interface Filled {
  rows: string[];
  next: Continuation | null;
  requests: number;
}

const { fillPage, pageSummary } = new Function(
  `${EXPLORER_PAGING_SCRIPT}\nreturn { fillPage: fillPage, pageSummary: pageSummary };`,
)() as {
  fillPage: (
    fetch: FetchPage,
    start: Continuation | null,
    top: number,
    maxRequests: number,
  ) => Promise<Filled>;
  pageSummary: (count: number, top: number, more: boolean, requests: number) => string;
};

/** A table of partitions (each a list of matching rows) read like the service: one partition per request at most. */
function partitioned(partitions: readonly number[]): { fetch: FetchPage; tops: number[] } {
  const tops: number[] = [];
  const fetch: FetchPage = async (continuation, top) => {
    tops.push(top);
    let { partition, row } = continuation ?? { partition: 0, row: 0 };
    const rows: string[] = [];
    while (partition < partitions.length && row < (partitions[partition] ?? 0) && rows.length < top) {
      rows.push(`p${partition}r${row}`);
      row++;
    }
    if (row < (partitions[partition] ?? 0)) return { rows, next: { partition, row } };
    partition++;
    return { rows, next: partition < partitions.length ? { partition, row: 0 } : null };
  };
  return { fetch, tops };
}

describe("explorer page filling", () => {
  test("follows continuations across partitions until the page holds top rows, asking each time for what is left", async () => {
    const { fetch, tops } = partitioned([0, 0, 4, 3, 15, 2]);
    const page = await fillPage(fetch, null, 10, 10);
    expect(page.rows).toEqual([
      "p2r0",
      "p2r1",
      "p2r2",
      "p2r3",
      "p3r0",
      "p3r1",
      "p3r2",
      "p4r0",
      "p4r1",
      "p4r2",
    ]);
    expect(page.next).toEqual({ partition: 4, row: 3 });
    expect(tops).toEqual([10, 10, 10, 6, 3]);
    expect(page.requests).toBe(5);
    // The next page starts where this one ended, and the last one has no continuation.
    const second = await fillPage(fetch, page.next, 10, 10);
    expect(second.rows).toEqual(Array.from({ length: 10 }, (_, i) => `p4r${i + 3}`));
    const last = await fillPage(fetch, second.next, 10, 10);
    expect(last).toEqual({ rows: ["p4r13", "p4r14", "p5r0", "p5r1"], next: null, requests: 2 });
  });

  test("stops after the request bound, keeping the continuation: more rows follow", async () => {
    const { fetch } = partitioned([...new Array(12).fill(0), 3]);
    const page = await fillPage(fetch, null, 20, 10);
    expect(page).toEqual({ rows: [], next: { partition: 10, row: 0 }, requests: 10 });
    expect(await fillPage(fetch, page.next, 20, 10)).toEqual({
      rows: ["p12r0", "p12r1", "p12r2"],
      next: null,
      requests: 3,
    });
  });

  test("a failed request fails the page", async () => {
    const failing: FetchPage = async (continuation) => {
      if (continuation !== null) throw new Error("400 InvalidInput: bad filter");
      return { rows: [], next: { partition: 1, row: 0 } };
    };
    await expect(fillPage(failing, null, 5, 10)).rejects.toThrow("400 InvalidInput");
  });

  test("the status line says when a short page is not the last", () => {
    expect(pageSummary(7, 20, true, 10)).toMatch(
      /^7 entities on this page; more may follow in later partitions/,
    );
    expect(pageSummary(0, 20, true, 10)).toMatch(
      /^No matching entities in the first 10 requests; more rows may follow/,
    );
    // A full page, or the last one, needs no hint (Next is enabled or not).
    expect(pageSummary(20, 20, true, 2)).toBe("20 entities on this page");
    expect(pageSummary(1, 20, false, 1)).toBe("1 entity on this page");
    expect(pageSummary(0, 20, false, 4)).not.toMatch(/follow/);
  });
});
