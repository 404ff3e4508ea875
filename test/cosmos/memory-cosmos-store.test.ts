/**
 * `new MemoryStore({ flavor: "cosmos" })`: the Cosmos DB Table API's semantics offline. Results come
 * in a seeded, unspecified order (every entity once across pages, even with writes between pages),
 * and the Cosmos limits apply (255-byte RowKey, reserved property names, case-sensitive table names,
 * 2 MB batches), answered as the service's 400/413.
 */
import { createHttpHeaders, type HttpClient } from "@azure/core-rest-pipeline";
import { AzureNamedKeyCredential } from "@azure/data-tables";
import { describe, expect, it } from "vitest";
import { StoreError, TransactionError, ValidationError } from "../../src/errors.js";
import { AzureStore } from "../../src/store/azure/azure-store.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import type { StoreQuery, TableStore, TransactionAction } from "../../src/store/table-store.js";
import { AZURE_TABLE_LIMITS, COSMOS_TABLE_LIMITS } from "../../src/util/store-limits.js";
import { readAll } from "../store-memory/helpers.js";

const keysOf = (items: ReadonlyArray<{ partitionKey: string; rowKey: string }>) =>
  items.map((e) => `${e.partitionKey}/${e.rowKey}`);

async function filled(seed: number, count = 200): Promise<{ store: MemoryStore; keys: string[] }> {
  const store = new MemoryStore({ flavor: "cosmos", seed });
  await store.createTable("Things");
  const keys: string[] = [];
  for (let i = 0; i < count; i++) {
    const partitionKey = `p${i % 3}`;
    const rowKey = `r${String(i).padStart(4, "0")}`;
    await store.insert("Things", { partitionKey, rowKey, n: i });
    keys.push(`${partitionKey}/${rowKey}`);
  }
  return { store, keys: keys.sort() };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

describe("MemoryStore flavor cosmos: capabilities and options", () => {
  it("reports unsorted results, the Cosmos limits and its seed", () => {
    const store = new MemoryStore({ flavor: "cosmos", seed: 9 });
    expect(store.capabilities).toEqual({ sortedResults: false, limits: COSMOS_TABLE_LIMITS });
    expect(store.seed).toBe(9);
    expect(store.flavor).toBe("cosmos");
    expect(new MemoryStore().capabilities).toEqual({ sortedResults: true, limits: AZURE_TABLE_LIMITS });
    expect(new MemoryStore({ flavor: "cosmos" }).seed).toBe(1);
  });

  it("rejects an unknown flavour or a non-integer seed with a ValidationError", () => {
    expect(() => new MemoryStore({ flavor: "mongo" as "cosmos" })).toThrow(ValidationError);
    expect(() => new MemoryStore({ flavor: "cosmos", seed: 1.5 })).toThrow(ValidationError);
  });
});

describe("MemoryStore flavor cosmos: result order", () => {
  it.each([1, 2, 3, 12345])("seed %i: one query returns every match once, not in key order", async (seed) => {
    const { store, keys } = await filled(seed);
    const { items } = await readAll(store, "Things", { top: 1000 });
    const order = keysOf(items);
    expect([...order].sort()).toEqual(keys);
    expect(order).not.toEqual(keys);
  });

  it("the order is fixed by the seed: the same seed repeats it, another seed changes it", async () => {
    const one = keysOf((await readAll((await filled(5)).store, "Things")).items);
    const again = keysOf((await readAll((await filled(5)).store, "Things")).items);
    const other = keysOf((await readAll((await filled(6)).store, "Things")).items);
    expect(again).toEqual(one);
    expect(other).not.toEqual(one);
  });

  it.each([1, 7, 50, 1000])(
    "pages of %i concatenate to the one-page order, filters and ranges included",
    async (top) => {
      const { store } = await filled(3);
      for (const query of [
        {},
        { filter: "PartitionKey eq 'p1'" },
        { filter: "n ge 50 and n lt 120" },
      ] as StoreQuery[]) {
        const whole = keysOf((await store.queryPage("Things", { ...query, top: 1000 })).items);
        const paged = await readAll(store, "Things", { ...query, top });
        expect(keysOf(paged.items)).toEqual(whole);
        for (const page of paged.pages) expect(page.items.length).toBeLessThanOrEqual(top);
      }
    },
  );

  it("entities written or deleted between pages never make a continuation skip or repeat the others", async () => {
    const { store, keys } = await filled(4, 60);
    const seen: string[] = [];
    let continuation: StoreQuery["continuation"];
    let round = 0;
    do {
      const page = await store.queryPage("Things", { top: 8, continuation });
      seen.push(...keysOf(page.items));
      continuation = page.continuation;
      // Between pages: a new entity and the deletion of one not yet seen (or already seen).
      await store.insert("Things", { partitionKey: "p9", rowKey: `new${round}` });
      round++;
    } while (continuation !== undefined);
    const original = seen.filter((key) => !key.startsWith("p9/"));
    expect(new Set(original).size).toBe(original.length);
    expect([...original].sort()).toEqual(keys);
  });
});

describe("MemoryStore flavor cosmos: limits", () => {
  async function table(store: TableStore = new MemoryStore({ flavor: "cosmos" })) {
    await store.createTable("Things");
    return store;
  }

  it("accepts a RowKey of 255 UTF-8 bytes and rejects 256 (400 OutOfRangeInput)", async () => {
    const store = await table();
    await store.insert("Things", { partitionKey: "p", rowKey: "a".repeat(255) });
    // "é" is 2 UTF-8 bytes: 128 of them are 256 bytes though only 128 UTF-16 units.
    const error = await rejection(store.insert("Things", { partitionKey: "p", rowKey: "é".repeat(128) }));
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ statusCode: 400, serviceCode: "OutOfRangeInput" });
    // The Azure flavour takes the same key (its limit is 1 KiB).
    const azure = await table(new MemoryStore());
    await azure.insert("Things", { partitionKey: "p", rowKey: "é".repeat(128) });
  });

  // Lowercase "etag" is not among them: on the port it is the entity's ETag (metadata), never a property.
  it.each(["ID", "id", "rid", "Etag", "ETAG", "ResourceId", "resourceid"])(
    "rejects the reserved property name %s",
    async (name) => {
      const store = await table();
      const error = await rejection(
        store.upsert("Things", { partitionKey: "p", rowKey: "r", [name]: 1 }, "replace"),
      );
      expect(error).toMatchObject({ statusCode: 400, serviceCode: "PropertyNameInvalid" });
    },
  );

  it("keeps table names case-sensitive (two tables), where Azure folds them (one)", async () => {
    const cosmos = new MemoryStore({ flavor: "cosmos" });
    await cosmos.createTable("Things");
    await cosmos.createTable("things");
    await cosmos.insert("Things", { partitionKey: "p", rowKey: "r" });
    expect((await cosmos.queryPage("things", {})).items).toHaveLength(0);
    const azure = new MemoryStore();
    await azure.createTable("Things");
    await azure.insert("Things", { partitionKey: "p", rowKey: "r" });
    expect((await azure.queryPage("things", {})).items).toHaveLength(1);
  });

  it("rejects a transaction of 2 MiB or more (413), which Azure accepts up to 4 MiB", async () => {
    const body = "x".repeat(30_000);
    // 80 entities × ~30 KB of JSON: about 2.4 MB, under Azure's 4 MiB.
    const actions = Array.from({ length: 80 }, (_, i) => ({
      kind: "insert" as const,
      entity: { partitionKey: "p", rowKey: `r${i}`, body },
    }));
    const error = await rejection((await table()).submitTransaction("Things", "p", actions));
    expect(error).toBeInstanceOf(TransactionError);
    expect(error).toMatchObject({ statusCode: 413 });
    await (await table(new MemoryStore())).submitTransaction("Things", "p", actions);
  });

  it("sizes a transaction as the SDK sends it to a Cosmos DB account with the longest name: refused from the first byte over 2 MiB", async () => {
    // The body AzureStore sends (the SDK's Cosmos DB form: an x-ms-version line per operation, a merge
    // as POST + X-HTTP-Method: MERGE) to the longest Cosmos endpoint, and to an Azure one, measured.
    const sentBytes = async (url: string, actions: TransactionAction[]) => {
      const bodies: string[] = [];
      const recording: HttpClient = {
        async sendRequest(request) {
          bodies.push(String(request.body));
          return { request, status: 202, headers: createHttpHeaders({}), bodyAsText: "" };
        },
      };
      const sender = new AzureStore(url, new AzureNamedKeyCredential("a", "a2V5"), { httpClient: recording });
      await sender.submitTransaction("Things", "p", actions);
      return Buffer.byteLength(bodies[0] as string, "utf8");
    };
    const merges = (length: number): TransactionAction[] =>
      Array.from({ length: 100 }, (_, i) => ({
        kind: "upsert",
        mode: "merge",
        entity: { partitionKey: "p", rowKey: `r${i}`, body: "x".repeat(length) },
      }));
    const longest = `https://${"a".repeat(44)}.table.cosmos.azure.com`;
    const max = COSMOS_TABLE_LIMITS.maxTransactionBytes;
    // The shortest value length whose batch is over the limit on that endpoint.
    let low = 0;
    let high = 30_000;
    while (high - low > 1) {
      const mid = (low + high) >> 1;
      if ((await sentBytes(longest, merges(mid))) > max) high = mid;
      else low = mid;
    }
    expect(await sentBytes(longest, merges(low))).toBeLessThanOrEqual(max);
    expect(await sentBytes(longest, merges(high))).toBeGreaterThan(max);
    // As Azure Table storage's body the same batch is under 2 MiB: sized that way, it would pass.
    expect(await sentBytes("https://myaccount.table.core.windows.net", merges(high))).toBeLessThanOrEqual(
      max,
    );
    await (await table()).submitTransaction("Things", "p", merges(low));
    const error = await rejection((await table()).submitTransaction("Things", "p", merges(high)));
    expect(error).toMatchObject({ statusCode: 413, serviceCode: "RequestBodyTooLarge" });
  });

  it("names the operation with a reserved property in a transaction", async () => {
    const store = await table();
    const error = await rejection(
      store.submitTransaction("Things", "p", [
        { kind: "insert", entity: { partitionKey: "p", rowKey: "a" } },
        { kind: "insert", entity: { partitionKey: "p", rowKey: "b", rid: 1 } },
      ]),
    );
    expect(error).toBeInstanceOf(TransactionError);
    expect(error).toMatchObject({ index: 1, statusCode: 400 });
    expect((await store.queryPage("Things", {})).items).toHaveLength(0);
  });
});
