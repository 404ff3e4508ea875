import { TableClient } from "@azure/data-tables";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AzureStore } from "../../src/store/azure/azure-store.js";
import type { StoredEntity } from "../../src/store/table-store.js";
import { azuriteConnectionString, createAzuriteStore } from "../support/azurite.js";
import { uniqueTableName } from "../support/table-names.js";

const store = createAzuriteStore();
const table = uniqueTableName("crud");

beforeAll(() => store.createTable(table));
afterAll(() => store.deleteTable(table));

describe("AzureStore basics (Azurite)", () => {
  it("identifies itself", () => {
    expect(store.name).toBe("azure");
    expect(store.capabilities.sortedResults).toBe(true);
  });

  it("creates and deletes tables idempotently", async () => {
    const name = uniqueTableName("idem");
    await store.createTable(name);
    await store.createTable(name);
    await store.deleteTable(name);
    await store.deleteTable(name);
  });

  it("inserts and reads back exactly { partitionKey, rowKey, etag, timestamp, ...props }", async () => {
    const { etag } = await store.insert(table, { partitionKey: "p", rowKey: "shape", name: "x", n: 1 });
    const got = await store.getEntity(table, "p", "shape");
    expect(got).toBeDefined();
    const entity = got as StoredEntity;
    expect(Object.keys(entity).sort()).toEqual(["etag", "n", "name", "partitionKey", "rowKey", "timestamp"]);
    expect(entity.etag).toBe(etag);
    expect(entity.timestamp).toBeInstanceOf(Date);
    expect(entity.timestamp?.getTime()).not.toBeNaN();

    const page = await store.queryPage(table, { filter: "RowKey eq 'shape'" });
    expect(page.items).toHaveLength(1);
    expect(page.continuation).toBeUndefined();
    expect(page.items[0]).toEqual(entity);
    expect(Object.keys(page.items[0] as object).sort()).toEqual(Object.keys(entity).sort());
  });

  it("returns undefined for a missing entity and false when deleting one", async () => {
    expect(await store.getEntity(table, "p", "missing")).toBeUndefined();
    expect(await store.delete(table, "p", "missing", "*")).toBe(false);
  });

  it("projects with select, keeping the etag (Timestamp only when selected)", async () => {
    await store.insert(table, { partitionKey: "p", rowKey: "sel", a: 1, b: "two", c: true });
    const got = await store.getEntity(table, "p", "sel", ["b"]);
    expect(got).toEqual({ etag: expect.any(String), b: "two" });
    const page = await store.queryPage(table, {
      filter: "RowKey eq 'sel'",
      select: ["PartitionKey", "RowKey", "c"],
    });
    expect(page.items).toEqual([{ etag: expect.any(String), partitionKey: "p", rowKey: "sel", c: true }]);
    const withTimestamp = await store.queryPage(table, { filter: "RowKey eq 'sel'", select: ["Timestamp"] });
    expect(withTimestamp.items).toEqual([{ etag: expect.any(String), timestamp: expect.any(Date) }]);
  });

  it("upserts with replace and merge semantics", async () => {
    await store.upsert(table, { partitionKey: "p", rowKey: "up", a: 1, b: 2 }, "replace");
    await store.upsert(table, { partitionKey: "p", rowKey: "up", c: 3 }, "merge");
    expect(await store.getEntity(table, "p", "up")).toMatchObject({ a: 1, b: 2, c: 3 });
    await store.upsert(table, { partitionKey: "p", rowKey: "up", d: 4 }, "replace");
    const replaced = await store.getEntity(table, "p", "up");
    expect(replaced).toMatchObject({ d: 4 });
    expect(replaced).not.toHaveProperty("a");
  });

  it("updates only when the ETag matches and returns the new ETag", async () => {
    const first = await store.insert(table, { partitionKey: "p", rowKey: "upd", v: 1 });
    const second = await store.update(
      table,
      { partitionKey: "p", rowKey: "upd", v: 2 },
      "replace",
      first.etag,
    );
    expect(second.etag).not.toBe(first.etag);
    const third = await store.update(table, { partitionKey: "p", rowKey: "upd", w: 3 }, "merge", "*");
    expect(await store.getEntity(table, "p", "upd")).toMatchObject({ v: 2, w: 3, etag: third.etag });
    expect(await store.delete(table, "p", "upd", third.etag)).toBe(true);
    expect(await store.getEntity(table, "p", "upd")).toBeUndefined();
  });

  it("round-trips keys with quotes, URL syntax and non-ASCII characters", async () => {
    const keys = ["y'q", "a b", "a+b", "a%20b", "日本", "a&b=c", "a;b", '~!@$^*()[]{}|:",.<>', "''", "é😀"];
    for (const key of keys) {
      const { etag } = await store.insert(table, { partitionKey: key, rowKey: key, v: 1 });
      expect(await store.getEntity(table, key, key)).toMatchObject({ partitionKey: key, rowKey: key, v: 1 });
      const updated = await store.update(table, { partitionKey: key, rowKey: key, v: 2 }, "merge", etag);
      await store.submitTransaction(table, key, [
        { kind: "insert", entity: { partitionKey: key, rowKey: `${key}2` } },
        { kind: "delete", partitionKey: key, rowKey: key, ifMatch: updated.etag },
      ]);
      const escaped = key.replace(/'/g, "''");
      const page = await store.queryPage(table, { filter: `PartitionKey eq '${escaped}'` });
      expect(page.items.map((e) => e.rowKey)).toEqual([`${key}2`]);
    }
  });

  it("does not send etag/timestamp of a stored entity back as properties", async () => {
    await store.insert(table, { partitionKey: "p", rowKey: "rt", a: 1 });
    const read = (await store.getEntity(table, "p", "rt")) as StoredEntity;
    await store.upsert(table, { ...read, a: 2 }, "replace");
    const raw = TableClient.fromConnectionString(azuriteConnectionString(), table, {
      allowInsecureConnection: true,
    });
    const again = await raw.getEntity("p", "rt");
    expect(Object.keys(again).sort()).toEqual([
      "a",
      "etag",
      "odata.metadata",
      "partitionKey",
      "rowKey",
      "timestamp",
    ]);
  });

  it("connects through UseDevelopmentStorage=true and loopback http without options", () => {
    expect(() => AzureStore.fromConnectionString("UseDevelopmentStorage=true")).not.toThrow();
    expect(() => AzureStore.fromConnectionString(azuriteConnectionString())).not.toThrow();
  });
});
