import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StoredEntity, WireEntity } from "../../src/store/table-store.js";
import { createAzuriteStore } from "../support/azurite.js";
import { uniqueTableName } from "../support/table-names.js";

const store = createAzuriteStore();
const table = uniqueTableName("typed");

/** Every EDM type, each written with its type named (a whole Double, 7-digit DateTime, 64-bit Int64). */
const written: WireEntity = {
  partitionKey: "p",
  rowKey: "r",
  wholeDouble: { type: "Double", value: 5 },
  double: { type: "Double", value: 5.25 },
  nan: { type: "Double", value: "NaN" },
  int32: 7,
  int64: { type: "Int64", value: "9007199254740993" },
  guid: { type: "Guid", value: "c9da6455-213d-42c9-9a79-3e9149a57833" },
  dateTime: { type: "DateTime", value: "2024-02-29T23:59:59.1234567Z" },
  text: "t",
  flag: true,
};

describe("AzureStore.queryTypedPage on Azurite", () => {
  beforeAll(async () => {
    await store.createTable(table);
    await store.upsert(table, { ...written, binary: new Uint8Array([0, 255, 7]) }, "replace");
  });
  afterAll(async () => {
    await store.deleteTable(table);
  });

  it("answers every value with its EDM type, in the form a write stores back unchanged", async () => {
    const page = await store.queryTypedPage(table, { filter: "PartitionKey eq 'p'" });
    expect(page.items).toHaveLength(1);
    const { etag, timestamp, binary, ...rest } = page.items[0] as StoredEntity;
    expect(rest).toEqual(written);
    expect([...(binary as Uint8Array)]).toEqual([0, 255, 7]);
    expect(etag).toMatch(/^W\/"datetime'/);
    expect(timestamp).toBeInstanceOf(Date);
    // Written back, the row reads the same (the whole Double stays a Double).
    await store.upsert(table, { ...(rest as WireEntity), rowKey: "copy", binary }, "replace");
    const copy = await store.queryTypedPage(table, { filter: "RowKey eq 'copy'" });
    const { etag: _e, timestamp: _t, binary: copied, ...copiedRest } = copy.items[0] as StoredEntity;
    expect(copiedRest).toEqual({ ...written, rowKey: "copy" });
    expect([...(copied as Uint8Array)]).toEqual([0, 255, 7]);
  });
});
