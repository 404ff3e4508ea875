import { connect } from "node:net";
import { TableClient } from "@azure/data-tables";
import { describe, expect, it } from "vitest";
import { startAzurite } from "../../scripts/azurite-process.js";
import { TABLE_NAME } from "../../src/util/service-limits.js";
import { CountingStore } from "./counting-store.js";
import { hashToUnit, seededRandom, shuffled, testSeed } from "./seeded-random.js";
import { selectedStoreNames } from "./store-selection.js";
import { azuriteSelected, storeKinds } from "./stores.js";
import { uniqueTableName } from "./table-names.js";

describe("uniqueTableName", () => {
  it("makes valid, distinct table names", () => {
    const names = Array.from({ length: 1_000 }, () => uniqueTableName());
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(TABLE_NAME);
    const long = uniqueTableName(`p${"x".repeat(70)}`);
    expect(long).toMatch(TABLE_NAME);
    expect(long).not.toBe(uniqueTableName(`p${"x".repeat(70)}`));
  });

  it("rejects a prefix that cannot start a table name", () => {
    expect(() => uniqueTableName("1a")).toThrow();
    expect(() => uniqueTableName("a-b")).toThrow();
  });
});

describe("CountingStore", () => {
  it.each(storeKinds)("counts calls per method on $name", async (kind) => {
    const store = new CountingStore(kind.create());
    const table = uniqueTableName("count");
    await store.createTable(table);
    await store.insert(table, { partitionKey: "p", rowKey: "a" });
    await store.upsert(table, { partitionKey: "p", rowKey: "b" }, "merge");
    await store.getEntity(table, "p", "a");
    await store.queryPage(table, {});
    expect(store.calls).toMatchObject({ createTable: 1, insert: 1, upsert: 1, getEntity: 1, queryPage: 1 });
    expect(store.requests).toBe(5);
    expect(store.largestPage).toBe(2);
    expect(store.log.at(-1)).toEqual({ method: "queryPage", table });
    expect(store.name).toBe(store.inner.name);
    store.reset();
    expect(store.requests).toBe(0);
    expect(store.calls.insert).toBe(0);
    expect(store.largestPage).toBe(0);
    await store.deleteTable(table);
  });
});

/** The error code of a fresh TCP connection to `port` (undefined when it connects). */
function connectError(port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code));
  });
}

describe.skipIf(!azuriteSelected)("startAzurite (needs Azurite: TABLEKIT_STORES leaves it out)", () => {
  it("starts a second emulator on a free port and stops it", async () => {
    const azurite = await startAzurite();
    const client = TableClient.fromConnectionString(azurite.connectionString, "probe", {
      allowInsecureConnection: true,
      retryOptions: { maxRetries: 0 },
    });
    await client.createTable();
    await azurite.stop();
    // A fresh connection, not the client's pooled one: a kept-alive socket could see a reset instead.
    expect(await connectError(azurite.port)).toBe("ECONNREFUSED");
  });
});

describe("selectedStoreNames", () => {
  it("defaults to every store and reads a comma-separated list", () => {
    expect(selectedStoreNames(" ")).toEqual(["memory", "azurite", "serve"]);
    expect(selectedStoreNames("")).toEqual(["memory", "azurite", "serve"]);
    expect(selectedStoreNames("memory")).toEqual(["memory"]);
    expect(selectedStoreNames(" Azurite , memory ")).toEqual(["memory", "azurite"]);
  });

  it("rejects an unknown store instead of silently running nothing", () => {
    expect(() => selectedStoreNames("memroy")).toThrow(/unknown store 'memroy'/);
  });
});

describe("seeded randomness", () => {
  it("replays from its seed", () => {
    const draw = (seed: number) => Array.from({ length: 100 }, seededRandom(seed));
    expect(draw(5)).toEqual(draw(5));
    expect(draw(5)).not.toEqual(draw(6));
    expect(shuffled([1, 2, 3, 4, 5, 6, 7, 8], 3)).toEqual(shuffled([1, 2, 3, 4, 5, 6, 7, 8], 3));
    expect([...shuffled([1, 2, 3, 4, 5, 6, 7, 8], 3)].sort()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it("hashes parts to a fixed unit value, sensitive to every part", () => {
    const value = hashToUnit(1, "a", 2);
    expect(value).toBe(hashToUnit(1, "a", 2));
    expect(value).toBeGreaterThanOrEqual(0);
    expect(value).toBeLessThan(1);
    expect(new Set([hashToUnit(2, "a", 2), hashToUnit(1, "b", 2), hashToUnit(1, "a", 3), value]).size).toBe(
      4,
    );
    // Parts are delimited: ("ab", "") is not ("a", "b").
    expect(hashToUnit(1, "ab", "")).not.toBe(hashToUnit(1, "a", "b"));
  });

  it("testSeed is the fallback unless TABLEKIT_TEST_SEED is set", () => {
    const saved = process.env.TABLEKIT_TEST_SEED;
    try {
      delete process.env.TABLEKIT_TEST_SEED;
      expect(testSeed(42)).toBe(42);
      process.env.TABLEKIT_TEST_SEED = "7";
      expect(testSeed(42)).toBe(testSeed(42));
      expect(testSeed(42)).not.toBe(testSeed(43));
      process.env.TABLEKIT_TEST_SEED = "x";
      expect(() => testSeed(42)).toThrow(/integer/);
    } finally {
      if (saved === undefined) delete process.env.TABLEKIT_TEST_SEED;
      else process.env.TABLEKIT_TEST_SEED = saved;
    }
  });
});
