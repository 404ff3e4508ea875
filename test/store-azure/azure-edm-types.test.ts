import { TableClient } from "@azure/data-tables";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WireEntity } from "../../src/store/table-store.js";
import { azuriteConnectionString, createAzuriteStore } from "../support/azurite.js";
import { uniqueTableName } from "../support/table-names.js";

const store = createAzuriteStore();
const table = uniqueTableName("edm");
const GUID = "c9da6455-213d-42c9-9a79-3e9149a57833";

/** A raw SDK client that also records the body of every response it receives. */
function rawClient(): { client: TableClient; bodies: string[] } {
  const bodies: string[] = [];
  const client = TableClient.fromConnectionString(azuriteConnectionString(), table, {
    allowInsecureConnection: true,
  });
  client.pipeline.addPolicy({
    name: "recordBodies",
    async sendRequest(request, next) {
      const response = await next(request);
      if (response.bodyAsText) bodies.push(response.bodyAsText);
      return response;
    },
  });
  return { client, bodies };
}

const entity: WireEntity = {
  partitionKey: "p",
  rowKey: "all",
  str: "text",
  int32: 5,
  int32Typed: { type: "Int32", value: 7 },
  doubleWhole: { type: "Double", value: 5 },
  doubleFraction: { type: "Double", value: 5.25 },
  doubleNaN: { type: "Double", value: Number.NaN },
  doubleInf: { type: "Double", value: Number.POSITIVE_INFINITY },
  doubleNegInf: { type: "Double", value: Number.NEGATIVE_INFINITY },
  int64: 123n,
  int64Min: { type: "Int64", value: "-9223372036854775808" },
  int64Max: 9223372036854775807n,
  boolTrue: true,
  boolFalse: false,
  date: new Date("2024-01-02T03:04:05.678Z"),
  dateTicks: { type: "DateTime", value: "2024-01-02T03:04:05.6789012Z" },
  guid: { type: "Guid", value: GUID },
  binary: new Uint8Array([1, 2, 3]),
  // A view into a larger buffer: the SDK alone would serialize the whole backing buffer.
  binaryView: new Uint8Array([9, 9, 1, 2, 3, 9]).subarray(2, 5),
  binaryBuffer: Buffer.from([4, 5, 6]),
};

beforeAll(async () => {
  await store.createTable(table);
  await store.insert(table, entity);
});
afterAll(() => store.deleteTable(table));

describe("Edm types written through AzureStore (Azurite)", () => {
  it("are stored with their exact Edm types, as the raw SDK reads them", async () => {
    const { client } = rawClient();
    const raw = await client.getEntity("p", "all", { disableTypeConversion: true });
    expect(raw).toMatchObject({
      str: { type: "String", value: "text" },
      int32: { type: "Int32", value: "5" },
      int32Typed: { type: "Int32", value: "7" },
      doubleFraction: { type: "Double", value: "5.25" },
      doubleNaN: { type: "Double", value: "NaN" },
      doubleInf: { type: "Double", value: "Infinity" },
      doubleNegInf: { type: "Double", value: "-Infinity" },
      int64: { type: "Int64", value: "123" },
      int64Min: { type: "Int64", value: "-9223372036854775808" },
      int64Max: { type: "Int64", value: "9223372036854775807" },
      boolTrue: { type: "Boolean", value: "true" },
      boolFalse: { type: "Boolean", value: "false" },
      date: { type: "DateTime", value: "2024-01-02T03:04:05.678Z" },
      dateTicks: { type: "DateTime", value: "2024-01-02T03:04:05.6789012Z" },
      guid: { type: "Guid", value: GUID },
      binary: { type: "Binary", value: "AQID" },
      binaryView: { type: "Binary", value: "AQID" },
      binaryBuffer: { type: "Binary", value: "BAUG" },
    });
  });

  it("stores a whole Double as Edm.Double: the service sends it back as 5.0, an Int32 as 5", async () => {
    // The service does not annotate doubles; the JSON text keeps the type ("5.0"). The SDK's
    // disableTypeConversion guesses Int32 for it (see azurite-behaviour.test.ts), so check the wire.
    const { client, bodies } = rawClient();
    await client.getEntity("p", "all");
    const body = bodies.at(-1) ?? "";
    expect(body).toContain('"doubleWhole":5.0');
    expect(body).toContain('"int32":5,');
    expect(body).not.toContain("doubleWhole@odata.type");
  });

  it("reads back through AzureStore in the port's read forms", async () => {
    const read = await store.getEntity(table, "p", "all");
    expect(read).toMatchObject({
      str: "text",
      int32: 5,
      int32Typed: 7,
      doubleWhole: 5,
      doubleFraction: 5.25,
      int64: 123n,
      int64Min: -9223372036854775808n,
      int64Max: 9223372036854775807n,
      boolTrue: true,
      boolFalse: false,
      guid: { type: "Guid", value: GUID },
    });
    expect(read?.date).toEqual(new Date("2024-01-02T03:04:05.678Z"));
    // Date keeps milliseconds only.
    expect(read?.dateTicks).toEqual(new Date("2024-01-02T03:04:05.678Z"));
    for (const name of ["binary", "binaryView"]) {
      const bytes = read?.[name];
      expect(bytes).toBeInstanceOf(Uint8Array);
      expect([...(bytes as Uint8Array)]).toEqual([1, 2, 3]);
    }
    // The SDK returns the special doubles as their wire strings: the schema layer, which knows the
    // column is a Double, turns them back into numbers.
    expect(read).toMatchObject({ doubleNaN: "NaN", doubleInf: "Infinity", doubleNegInf: "-Infinity" });
  });

  it("writes a bare non-finite number as an Edm.Double instead of an invalid null", async () => {
    await store.upsert(table, { partitionKey: "p", rowKey: "nan", d: Number.NaN }, "replace");
    const { client } = rawClient();
    const raw = await client.getEntity("p", "nan", { disableTypeConversion: true });
    expect(raw.d).toEqual({ type: "Double", value: "NaN" });
  });

  it("does not modify the caller's entity when it fixes values", () => {
    expect(entity.binaryView).toBeInstanceOf(Uint8Array);
    expect(Buffer.isBuffer(entity.binaryView)).toBe(false);
    expect(entity.doubleNaN).toEqual({ type: "Double", value: Number.NaN });
  });
});
