/** MemoryStore's own options and identity; the port behaviour both stores share is in test/store-contract/. */
import { describe, expect, test } from "vitest";
import { StoreError, ValidationError } from "../../src/errors.js";
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

describe("tableDeleteDelayMs option", () => {
  test("a deleted table's name answers 409 TableBeingDeleted until the delay has passed", async () => {
    let now = Date.UTC(2026, 0, 1);
    const store = new MemoryStore({ tableDeleteDelayMs: 40_000, now: () => now });
    await store.createTable("Orders");
    await store.insert("Orders", { partitionKey: "p", rowKey: "r" });
    await store.deleteTable("Orders");
    now += 39_999;
    // Table names are case-insensitive: any spelling of the name is held.
    const error = await store.createTable("ORDERS").then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ statusCode: 409, serviceCode: "TableBeingDeleted" });
    expect(await store.listTables()).toEqual([]);
    now += 1;
    await store.createTable("Orders");
    expect((await readAll(store, "Orders")).items).toEqual([]);
    // The injected clock dates the writes too.
    const written = await store.insert("Orders", { partitionKey: "p", rowKey: "r" });
    expect(written.etag).toContain("2026-01-01T00%3A00%3A40");
  });

  test("defaults to 0 (re-created at once); a bad value is a ValidationError", async () => {
    const store = new MemoryStore();
    await store.createTable("Orders");
    await store.deleteTable("Orders");
    await store.createTable("Orders");
    expect(await store.listTables()).toEqual(["Orders"]);
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, "5"]) {
      expect(() => new MemoryStore({ tableDeleteDelayMs: bad as number })).toThrow(ValidationError);
    }
  });
});
