import { describe, expect, test } from "vitest";
import type { TableStore } from "../../src/store/table-store.js";
import {
  expectStoreError,
  keysOf,
  readAll,
  skipAzuriteDeviations,
  storeKinds,
  storeWithTable,
} from "./contract.js";

describe.each(storeKinds)("store contract (paging) on $name", (kind) => {
  skipAzuriteDeviations(kind);

  async function fill(store: TableStore, partitions: Record<string, number>): Promise<void> {
    for (const [pk, count] of Object.entries(partitions)) {
      for (let i = 0; i < count; i++) {
        await store.insert("Things", { partitionKey: pk, rowKey: String(i).padStart(5, "0"), i });
      }
    }
  }

  describe("order", () => {
    test("results come by PartitionKey then RowKey, ordinally (UTF-16 code units, case-sensitive)", async () => {
      const store = await storeWithTable(kind);
      const keys: [string, string][] = [
        ["b", "1"],
        ["a", "z"],
        ["a", "Z"],
        ["ab", "0"],
        ["a", ""],
        ["é", "x"],
        ["😀", "x"],
        ["\uffff", "x"],
        ["A", "x"],
        ["a b", "x"],
        ["a", "é"],
        ["a", "😀"],
        ["a", "\ufb01"],
        ["", "x"],
      ];
      for (const [partitionKey, rowKey] of keys) await store.insert("Things", { partitionKey, rowKey });
      const { items } = await readAll(store, "Things");
      const expected = [...keys]
        .sort(([p1, r1], [p2, r2]) => (p1 !== p2 ? (p1 < p2 ? -1 : 1) : r1 < r2 ? -1 : r1 > r2 ? 1 : 0))
        .map(([p, r]) => `${p}/${r}`);
      expect(keysOf(items)).toEqual(expected);
      // A PartitionKey that is a prefix of another sorts first, whatever the RowKeys.
      expect(keysOf(items).indexOf("a/😀")).toBeLessThan(keysOf(items).indexOf("a b/x"));
      // Astral characters (surrogate pairs) sort below U+FFFF, as in UTF-16 order.
      expect(keysOf(items).indexOf("😀/x")).toBeLessThan(keysOf(items).indexOf("\uffff/x"));
    });
  });

  describe("paging", () => {
    test("2,500 entities over 3 partitions: pages never exceed top and break at partitions", async () => {
      const store = await storeWithTable(kind);
      await fill(store, { a: 1200, b: 300, c: 1000 });
      const { items, pages } = await readAll(store, "Things", { top: 1000 });
      expect(items).toHaveLength(2500);
      expect(pages.map((p) => p.items.length)).toEqual([1000, 200, 300, 1000]);
      for (const page of pages) {
        expect(page.items.length).toBeLessThanOrEqual(1000);
        expect(new Set(page.items.map((e) => e.partitionKey)).size).toBe(1);
      }
      expect(pages[0]!.continuation).toEqual({ nextPartitionKey: "a", nextRowKey: "01000" });
      expect(pages[1]!.continuation).toEqual({ nextPartitionKey: "b", nextRowKey: "00000" });
      expect(pages.at(-1)!.continuation).toBeUndefined();
      expect(keysOf(items)).toEqual([...keysOf(items)].sort());
    });

    test("default top is 1,000", async () => {
      const store = await storeWithTable(kind);
      await fill(store, { a: 1001 });
      const page = await store.queryPage("Things", {});
      expect(page.items).toHaveLength(1000);
      expect(page.continuation).toEqual({ nextPartitionKey: "a", nextRowKey: "01000" });
    });

    test("a page that reaches top exactly at the end has no continuation; one more row gives one", async () => {
      const store = await storeWithTable(kind);
      await fill(store, { a: 10 });
      expect((await store.queryPage("Things", { top: 10 })).continuation).toBeUndefined();
      const page = await store.queryPage("Things", { top: 9 });
      expect(page.continuation).toEqual({ nextPartitionKey: "a", nextRowKey: "00009" });
    });

    test("a filtered scan over partitions without matches yields empty pages with continuations and ends", async () => {
      const store = await storeWithTable(kind);
      await fill(store, { a: 50, b: 50, c: 50, d: 50 });
      await store.insert("Things", { partitionKey: "d", rowKey: "zzz", wanted: true });
      const first = await store.queryPage("Things", { filter: "wanted eq true" });
      expect(first.items).toEqual([]);
      expect(first.continuation).toEqual({ nextPartitionKey: "b", nextRowKey: "00000" });
      const { items, pages } = await readAll(store, "Things", { filter: "wanted eq true" });
      expect(keysOf(items)).toEqual(["d/zzz"]);
      expect(pages.map((p) => p.items.length)).toEqual([0, 0, 0, 1]);
    });

    test("a single-partition query never breaks early", async () => {
      const store = await storeWithTable(kind);
      await fill(store, { a: 30, b: 30, c: 30 });
      const page = await store.queryPage("Things", { filter: "PartitionKey eq 'b'", top: 1000 });
      expect(page.items).toHaveLength(30);
      expect(page.continuation).toBeUndefined();
    });

    test("continuations resume at the first key at or after the token despite concurrent changes", async () => {
      const store = await storeWithTable(kind);
      await fill(store, { a: 20 });
      const first = await store.queryPage("Things", { top: 5 });
      expect(keysOf(first.items).at(-1)).toBe("a/00004");
      // Between pages: insert before and after the token, delete the entity the token names.
      await store.insert("Things", { partitionKey: "a", rowKey: "00002x" }); // before: not returned again
      await store.insert("Things", { partitionKey: "a", rowKey: "00005x" }); // after: returned
      await store.delete("Things", "a", "00005", "*"); // the token's own entity disappears
      const { items } = await readAll(store, "Things", { top: 5 });
      const rest = await (async () => {
        const out: string[] = [];
        let continuation = first.continuation;
        while (continuation) {
          const page = await store.queryPage("Things", { top: 5, continuation });
          out.push(...keysOf(page.items));
          continuation = page.continuation;
        }
        return out;
      })();
      expect(rest[0]).toBe("a/00005x");
      expect(rest).not.toContain("a/00002x");
      expect(rest).toHaveLength(15); // 00005x, 00006..00019
      expect(items).toHaveLength(21);
    });

    test("a continuation carried into a deleted partition moves on to the next one", async () => {
      const store = await storeWithTable(kind);
      await fill(store, { a: 3, b: 3, c: 3 });
      const first = await store.queryPage("Things", {});
      expect(first.continuation).toEqual({ nextPartitionKey: "b", nextRowKey: "00000" });
      for (let i = 0; i < 3; i++) await store.delete("Things", "b", String(i).padStart(5, "0"), "*");
      const second = await store.queryPage("Things", { continuation: first.continuation });
      expect(keysOf(second.items)).toEqual(["c/00000", "c/00001", "c/00002"]);
    });

    test("a continuation without nextRowKey starts at the partition's beginning", async () => {
      const store = await storeWithTable(kind);
      await fill(store, { a: 2, b: 2 });
      const page = await store.queryPage("Things", { continuation: { nextPartitionKey: "b" } });
      expect(keysOf(page.items)).toEqual(["b/00000", "b/00001"]);
    });

    test.each([-1, 1001, 1.5, Number.NaN])("top %s is 400 InvalidInput", async (top) => {
      const store = await storeWithTable(kind);
      await expectStoreError(store.queryPage("Things", { top }), 400, "InvalidInput");
    });

    // Azure answers $top=0 with 200 and no entities (Azurite #1428: "inconsistent with the platform,
    // which returns zero entities"). That issue, about Azurite 3.16 ignoring a zero $top, is still open,
    // but the Azurite this suite runs (its getMaxResultsOption keeps a 0) answers none too: no skip.
    test("top 0 answers no entities, and a continuation it gives skips nothing", async () => {
      const store = await storeWithTable(kind);
      await fill(store, { a: 3 });
      const page = await store.queryPage("Things", { filter: "PartitionKey eq 'a'", top: 0 });
      expect(page.items).toEqual([]);
      const rest = await store.queryPage("Things", {
        filter: "PartitionKey eq 'a'",
        ...(page.continuation === undefined ? {} : { continuation: page.continuation }),
      });
      expect(keysOf(rest.items)).toEqual(["a/00000", "a/00001", "a/00002"]);
    });

    test("a malformed continuation is 400 InvalidInput", async () => {
      const store = await storeWithTable(kind);
      await expectStoreError(
        store.queryPage("Things", { continuation: { nextPartitionKey: 5 as unknown as string } }),
        400,
        "InvalidInput",
      );
    });

    test("top and filter together count matches, not scanned rows", async () => {
      const store = await storeWithTable(kind);
      await fill(store, { a: 100 });
      const page = await store.queryPage("Things", { filter: "i ge 90", top: 5 });
      expect(page.items.map((e) => e.i)).toEqual([90, 91, 92, 93, 94]);
      expect(page.continuation).toEqual({ nextPartitionKey: "a", nextRowKey: "00095" });
    });

    test("an empty table yields one empty page without continuation", async () => {
      const store = await storeWithTable(kind);
      expect(await store.queryPage("Things", {})).toEqual({ items: [] });
    });
  });
});
