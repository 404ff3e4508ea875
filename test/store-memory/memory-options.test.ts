/** MemoryStore's own options and identity; the port behaviour both stores share is in test/store-contract/. */
import { describe, expect, test } from "vitest";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { AZURE_TABLE_LIMITS } from "../../src/util/store-limits.js";
import { readAll, storeWithTable } from "./helpers.js";

describe("MemoryStore identity", () => {
  test("names itself and reports sorted results", () => {
    const store = new MemoryStore();
    expect(store.name).toBe("memory");
    expect(store.capabilities).toEqual({ sortedResults: true, limits: AZURE_TABLE_LIMITS });
  });
});

describe("pageBreaks option", () => {
  test("size-only page breaks (like Azurite) fill pages across partitions", async () => {
    const store = await storeWithTable("Things", { pageBreaks: "size-only" });
    for (const [pk, count] of Object.entries({ a: 1200, b: 300, c: 1000 })) {
      for (let i = 0; i < count; i++) {
        await store.insert("Things", { partitionKey: pk, rowKey: String(i).padStart(5, "0"), i });
      }
    }
    const { items, pages } = await readAll(store, "Things", { top: 1000 });
    expect(items).toHaveLength(2500);
    expect(pages.map((p) => p.items.length)).toEqual([1000, 1000, 500]);
  });
});
