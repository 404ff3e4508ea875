/**
 * tablekit validates against the store's own limits (`capabilities.limits`) before any request: on a
 * Cosmos DB store (here the Cosmos-flavoured memory store behind a request counter) a 256-byte RowKey
 * or a reserved property name is a `ValidationError` with nothing sent, on every write path; batches
 * are sized for Cosmos's 2 MB; and Cosmos endpoints (including the emulator's) are detected.
 */
import { AzureNamedKeyCredential } from "@azure/data-tables";
import { describe, expect, it } from "vitest";
import {
  AZURE_TABLE_LIMITS,
  AzureStore,
  COSMOS_TABLE_LIMITS,
  Column,
  Entity,
  MemoryStore,
  SchemaError,
  TableContext,
  ValidationError,
} from "../../src/index.js";
import { uniquePrefix } from "../fixtures/context.js";
import { CountingStore } from "../support/counting-store.js";

@Entity({ table: "BlNotes", partitionKey: "{owner}", rowKey: "{key}" })
class Note {
  @Column({ type: "String" }) owner!: string;
  @Column({ type: "String" }) key!: string;
  @Column({ type: "String" }) body?: string;
}

@Entity({ table: "BlTagged", partitionKey: "{owner}", rowKey: "{key}" })
class Tagged {
  @Column({ type: "String" }) owner!: string;
  @Column({ type: "String" }) key!: string;
  // Stored as "ID", which the Cosmos DB Table API reserves.
  @Column({ type: "String", name: "ID" }) tag!: string;
}

const note = (key: string, body = "text") => Object.assign(new Note(), { owner: "ann", key, body });

async function cosmosContext(...entities: Array<typeof Note | typeof Tagged>) {
  const counter = new CountingStore(new MemoryStore({ flavor: "cosmos" }));
  const db = new TableContext({ store: counter, tablePrefix: uniquePrefix() });
  await db.ensureTables(...entities);
  counter.reset();
  return { db, counter };
}

function expectRule(error: unknown, rule: string): void {
  expect(error).toBeInstanceOf(ValidationError);
  expect((error as ValidationError).rule).toBe(rule);
}

describe("writes checked against the Cosmos DB limits before any request", () => {
  const longKey = "é".repeat(128); // 256 UTF-8 bytes, 128 UTF-16 units: fine on Azure, too long on Cosmos.

  it("insert, upsert, update and delete refuse a RowKey over 255 bytes and send nothing", async () => {
    const { db, counter } = await cosmosContext(Note);
    const notes = db.repository(Note);
    for (const write of [
      () => notes.insert(note(longKey)),
      () => notes.upsert(note(longKey)),
      () => notes.update(note(longKey), { ifMatch: "*" }),
      () => notes.delete({ owner: "ann", key: longKey }),
    ]) {
      expectRule(await write().catch((e: unknown) => e), "backend-key-size");
    }
    expect(counter.requests).toBe(0);
    await notes.insert(note("é".repeat(127)));
  });

  it("a reserved property name is refused on single writes, transactions and bulk writes", async () => {
    const { db, counter } = await cosmosContext(Tagged);
    const tagged = Object.assign(new Tagged(), { owner: "ann", key: "k1", tag: "x" });
    expectRule(
      await db
        .repository(Tagged)
        .insert(tagged)
        .catch((e: unknown) => e),
      "backend-reserved-property",
    );
    expectRule(
      await db.transaction((tx) => void tx.insert(tagged)).catch((e: unknown) => e),
      "backend-reserved-property",
    );
    expectRule(
      await db
        .repository(Tagged)
        .bulkInsert([tagged])
        .catch((e: unknown) => e),
      "backend-reserved-property",
    );
    expect(counter.requests).toBe(0);
  });

  it("a bulk array with one bad item sends nothing", async () => {
    const { db, counter } = await cosmosContext(Note);
    const items = [note("a"), note("b"), note(longKey), note("c")];
    expectRule(
      await db
        .repository(Note)
        .bulkInsert(items)
        .catch((e: unknown) => e),
      "backend-key-size",
    );
    expect(counter.requests).toBe(0);
  });

  it("bulk batches stay under Cosmos's 2 MB where Azure's 4 MiB would put them in one", async () => {
    // 90 notes of ~30 KB in one partition: about 2.8 MB, one batch on Azure, at least two on Cosmos.
    const items = Array.from({ length: 90 }, (_, i) =>
      note(`n${String(i).padStart(2, "0")}`, "y".repeat(30_000)),
    );
    const { db, counter } = await cosmosContext(Note);
    const result = await db.repository(Note).bulkInsert(items);
    expect(result.failed).toEqual([]);
    expect(result.written).toBe(90);
    expect(counter.calls.submitTransaction).toBeGreaterThanOrEqual(2);

    const azure = new CountingStore(new MemoryStore());
    const onAzure = new TableContext({ store: azure, tablePrefix: uniquePrefix() });
    await onAzure.ensureTables(Note);
    azure.reset();
    await onAzure.repository(Note).bulkInsert(items);
    expect(azure.calls.submitTransaction).toBe(1);
  });

  it("a multi-type query over tables whose names differ only in case is refused on Cosmos (two tables there)", async () => {
    @Entity({ table: "BlMixed", partitionKey: "{owner}", rowKey: "a_{key}", type: "A" })
    class A {
      @Column({ type: "String" }) owner!: string;
      @Column({ type: "String" }) key!: string;
    }
    @Entity({ table: "blmixed", partitionKey: "{owner}", rowKey: "b_{key}", type: "B" })
    class B {
      @Column({ type: "String" }) owner!: string;
      @Column({ type: "String" }) key!: string;
    }
    const { db } = await cosmosContext();
    expect(() => db.query(A, B)).toThrow(SchemaError);
    const azure = new TableContext({ store: new MemoryStore(), tablePrefix: uniquePrefix() });
    expect(() => azure.query(A, B)).not.toThrow();
  });
});

describe("Cosmos endpoints", () => {
  const key = new AzureNamedKeyCredential("acct", "a2V5");

  it.each([
    ["https://acct.table.core.windows.net", true],
    ["http://127.0.0.1:10002/devstoreaccount1", true],
    ["https://acct.table.cosmos.azure.com", false],
    ["http://localhost:8902/", false],
    ["http://127.0.0.1:8902/", false],
    ["https://example.com:8902/", true],
  ])("%s: sortedResults %s, with the matching limits", (url, sorted) => {
    const { capabilities } = new AzureStore(url, key, { allowInsecureConnection: true });
    expect(capabilities.sortedResults).toBe(sorted);
    expect(capabilities.limits).toEqual({
      ...(sorted ? AZURE_TABLE_LIMITS : COSMOS_TABLE_LIMITS),
      accountUrl: expect.stringMatching(/^https?:\/\//),
    });
  });

  it("detects the emulator from a connection string naming its Table endpoint", () => {
    const store = AzureStore.fromConnectionString(
      "DefaultEndpointsProtocol=http;AccountName=localhost;AccountKey=a2V5;TableEndpoint=http://localhost:8902/;",
    );
    expect(store.capabilities).toEqual({
      sortedResults: false,
      limits: { ...COSMOS_TABLE_LIMITS, accountUrl: "http://localhost:8902/" },
    });
  });
});
