import { TableClient } from "@azure/data-tables";
import { describe, expect, it } from "vitest";
import { TABLE_NAME } from "../../src/util/service-limits.js";
import { azuriteConnectionStringFor, startAzurite } from "./azurite-setup.js";
import { CountingStore } from "./counting-store.js";
import { storeKinds } from "./stores.js";
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

describe("startAzurite", () => {
  it("starts a second emulator on a free port and stops it", async () => {
    const azurite = await startAzurite(process.cwd());
    const client = TableClient.fromConnectionString(
      azuriteConnectionStringFor("127.0.0.1", azurite.port),
      "probe",
      {
        allowInsecureConnection: true,
        retryOptions: { maxRetries: 0 },
      },
    );
    await client.createTable();
    await azurite.stop();
    await expect(client.createTable()).rejects.toMatchObject({ code: "ECONNREFUSED" });
  });
});
