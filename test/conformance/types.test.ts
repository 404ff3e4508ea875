import { TableClient } from "@azure/data-tables";
import { describe, expect, inject, it } from "vitest";
import { freshContext, stores } from "../fixtures/context.js";
import { AllTypes } from "../fixtures/models.js";
import { azuriteSelected } from "../support/stores.js";

function sample(id: string): AllTypes {
  return Object.assign(new AllTypes(), {
    group: "g",
    id,
    text: "héllo 😀 'quoted'",
    int32: -2_147_483_648,
    int64: 9_223_372_036_854_775_807n,
    double: 5,
    flag: false,
    at: new Date("2024-02-29T23:59:59.123Z"),
    guid: "0f8fad5b-d9cb-469f-a165-70867728950e",
    bytes: new Uint8Array([0, 1, 2, 253, 254, 255]),
    json: { nested: [1, "two", { three: true }], n: null },
  });
}

describe.each(stores)("every column type round-trips on %s", (_name, kind) => {
  it("reads back exactly what was written", async () => {
    const { db } = await freshContext(kind, [AllTypes]);
    const repo = db.repository(AllTypes);
    const written = sample("a");
    await repo.insert(written);
    const read = await repo.getOrThrow({ group: "g", id: "a" });
    expect(read).toBeInstanceOf(AllTypes);
    expect({ ...read, bytes: [...(read.bytes ?? [])] }).toEqual({
      ...written,
      bytes: [...(written.bytes ?? [])],
    });
    expect(typeof read.int64).toBe("bigint");
    const viaQuery = await repo.find({ group: "g" }).toArray();
    expect(viaQuery).toHaveLength(1);
    expect(viaQuery[0]?.int64).toBe(written.int64);
  });

  // The Azure SDK sends JSON.stringify's text, which has no -0 (see src/util/stored-double.ts): every
  // store keeps a negative zero Double as 0, so a test on MemoryStore sees what Azure stores.
  it("a negative zero Double reads back as 0, by every write form", async () => {
    const { db } = await freshContext(kind, [AllTypes]);
    const repo = db.repository(AllTypes);
    const zero = (id: string) => Object.assign(new AllTypes(), { group: "g", id, double: -0 });
    await repo.insert(zero("insert"));
    await repo.upsert(zero("upsert"));
    await repo.bulkUpsert([zero("bulk")]);
    await db.transaction((tx) => tx.insert(zero("transaction")));
    await repo.insert(Object.assign(new AllTypes(), { group: "g", id: "patch", double: 1 }));
    await repo.patch({ group: "g", id: "patch" }, { double: -0 });
    const read = await repo.find({ group: "g" }).toArray();
    expect(read.map((e) => [e.id, Object.is(e.double, 0)])).toEqual(
      ["bulk", "insert", "patch", "transaction", "upsert"].map((id) => [id, true]),
    );
  });

  it("reads rows written by the plain SDK conventions", async () => {
    const { db } = await freshContext(kind, [AllTypes]);
    const repo = db.repository(AllTypes);
    // What a plain SDK user writes: no discriminator, key fields only in the keys, Int64 as bigint.
    await db.store.upsert(
      repo.table,
      {
        partitionKey: "g",
        rowKey: "plain",
        text: "t",
        int32: 3,
        int64: 42n,
        double: 2.5,
        at: new Date(0),
        flag: true,
      },
      "replace",
    );
    const read = await repo.getOrThrow({ group: "g", id: "plain" });
    expect(read).toMatchObject({
      group: "g",
      id: "plain",
      text: "t",
      int32: 3,
      int64: 42n,
      double: 2.5,
      flag: true,
    });
    expect(read.at?.getTime()).toBe(0);
  });
});

// The raw SDK can only look at what a real service stored, so this one runs on Azurite alone.
describe.skipIf(!azuriteSelected)(
  "wire types on Azurite (needs Azurite: TABLEKIT_STORES leaves it out)",
  () => {
    const azurite = stores.find(([name]) => name === "azurite")?.[1] as (typeof stores)[number][1];
    it("is stored with the exact EDM types, as the raw SDK sees them", async () => {
      const { db } = await freshContext(azurite, [AllTypes]);
      const repo = db.repository(AllTypes);
      await repo.insert(sample("b"));
      const client = TableClient.fromConnectionString(inject("azuriteConnectionString"), repo.table, {
        allowInsecureConnection: true,
      });
      let body = "";
      const raw = await client.getEntity<Record<string, { type: string; value: unknown }>>("g", "b", {
        disableTypeConversion: true,
        onResponse: (response) => {
          body = response.bodyAsText ?? "";
        },
      });
      expect(raw.int32).toEqual({ type: "Int32", value: "-2147483648" });
      expect(raw.int64).toEqual({ type: "Int64", value: "9223372036854775807" });
      // A whole Double must keep its type (written with the Edm.Double annotation). Azurite does not
      // annotate whole doubles when reading, so the SDK guesses Int32; the service's JSON still says 5.0.
      expect(body).toContain('"double":5.0');
      expect(body).not.toContain('"double":5,');
      expect(raw.flag?.type).toBe("Boolean");
      expect(raw.at?.type).toBe("DateTime");
      expect(new Date(String(raw.at?.value)).toISOString()).toBe("2024-02-29T23:59:59.123Z");
      expect(raw.guid).toEqual({ type: "Guid", value: "0f8fad5b-d9cb-469f-a165-70867728950e" });
      expect(raw.bytes).toEqual({
        type: "Binary",
        value: Buffer.from([0, 1, 2, 253, 254, 255]).toString("base64"),
      });
      expect(raw.json).toEqual({ type: "String", value: JSON.stringify(sample("b").json) });
      expect(raw.EntityType).toEqual({ type: "String", value: "AllTypes@1" });
    });
  },
);
