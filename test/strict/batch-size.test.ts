/**
 * Transactions and bulk batches near the service's 4 MiB `$batch` body limit, with multi-byte keys
 * (`日` is 9 bytes percent-encoded in each request line). On Azurite and `tablekit serve` every
 * request goes through an HTTP client that records the body the SDK really sends; on MemoryStore the
 * same transactions are sized on the nominal account URL. A transaction one byte-step over the limit
 * is a `ValidationError` before any request; one at the limit is sent and applied.
 */

import { createDefaultHttpClient, createHttpHeaders, type HttpClient } from "@azure/core-rest-pipeline";
import { AzureNamedKeyCredential } from "@azure/data-tables";
import { describe, expect, it } from "vitest";
import { Column, Entity, TableContext, ValidationError } from "../../src/index.js";
import { AzureStore } from "../../src/store/azure/azure-store.js";
import { NOMINAL_ACCOUNT_URL } from "../../src/store/batch-body-size.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import type { TableStore } from "../../src/store/table-store.js";
import { ServiceLimits } from "../../src/util/service-limits.js";
import { azuriteConnectionString, serveConnectionString } from "../support/azurite.js";
import { CountingStore } from "../support/counting-store.js";
import { expectRejection } from "../support/rejection.js";
import { storeKinds } from "../support/stores.js";
import { uniquePrefix } from "../support/table-names.js";

const LIMIT = ServiceLimits.maxTransactionBytes;

@Entity({ table: "StrictBatch", partitionKey: "{pk}", rowKey: "{rk}" })
class Row {
  @Column({ type: "String" }) pk!: string;
  @Column({ type: "String" }) rk!: string;
  @Column({ type: "String" }) a!: string;
  @Column({ type: "String" }) b!: string;
}

const PK = "日".repeat(400);
function row(i: number, b: number): Row {
  return Object.assign(new Row(), {
    pk: PK,
    rk: `${"日".repeat(400)}${String(i).padStart(3, "0")}`,
    a: "x".repeat(16_000),
    b: "y".repeat(b),
  });
}

/** Keeps the size of every `$batch` body sent; forwards to `inner`, or answers 202 itself (sizing only). */
function recordingClient(sizes: number[], inner?: HttpClient): HttpClient {
  return {
    async sendRequest(request) {
      if (request.url.includes("$batch") && typeof request.body === "string")
        sizes.push(Buffer.byteLength(request.body, "utf8"));
      if (inner) return inner.sendRequest(request);
      return { request, status: 202, headers: createHttpHeaders({}), bodyAsText: "" };
    },
  };
}

interface Target {
  store: TableStore;
  /** Body sizes the SDK sent (remote stores only). */
  sent: number[];
  /** The account URL batches are sized for. */
  accountUrl: string;
}

function target(name: string): Target {
  const sent: number[] = [];
  if (name === "memory") return { store: new MemoryStore(), sent, accountUrl: NOMINAL_ACCOUNT_URL };
  const connectionString = name === "azurite" ? azuriteConnectionString() : serveConnectionString();
  const store = AzureStore.fromConnectionString(connectionString, {
    httpClient: recordingClient(sent, createDefaultHttpClient()),
  });
  return { store, sent, accountUrl: store.capabilities.limits?.accountUrl ?? "" };
}

/** The body size the SDK gives `rows` in one transaction on `accountUrl`, measured on a store that sends nothing. */
async function measuredBody(accountUrl: string, prefix: string, rows: Row[]): Promise<number> {
  const sizes: number[] = [];
  const store = new AzureStore(accountUrl, new AzureNamedKeyCredential("a", "a2V5"), {
    httpClient: recordingClient(sizes),
    allowInsecureConnection: true,
  });
  const db = new TableContext({ store, tablePrefix: prefix });
  await db.transaction((tx) => {
    for (const r of rows) tx.upsert(r);
  });
  expect(sizes).toHaveLength(1);
  return sizes[0]!;
}

describe.each(storeKinds.map((k) => [k.name] as const))("$batch bodies near 4 MiB on %s", (name) => {
  it("92 upserts with 日 keys: the largest body that fits is sent and applied, one more byte-step is refused before sending", async () => {
    const { store, sent, accountUrl } = target(name);
    const counter = new CountingStore(store);
    const prefix = uniquePrefix();
    const db = new TableContext({ store: counter, tablePrefix: prefix });
    await db.ensureTables(Row);
    // Each character of `b` adds one byte to each of the 92 operations.
    const base = await measuredBody(
      accountUrl,
      prefix,
      Array.from({ length: 92 }, (_, i) => row(i, 0)),
    );
    const fit = Math.floor((LIMIT - base) / 92);
    expect(fit).toBeGreaterThan(0);
    expect(fit).toBeLessThan(32_000);

    counter.reset();
    const over = await expectRejection(
      db.transaction((tx) => {
        for (let i = 0; i < 92; i++) tx.upsert(row(i, fit + 1));
      }),
      ValidationError,
    );
    expect(over.message).toContain(String(base + 92 * (fit + 1)));
    expect(counter.requests).toBe(0);

    await db.transaction((tx) => {
      for (let i = 0; i < 92; i++) tx.upsert(row(i, fit));
    });
    if (name !== "memory") expect(sent).toEqual([base + 92 * fit]);
    const stored = await db.repository(Row).get({ pk: PK, rk: row(91, 0).rk });
    expect(stored?.b.length).toBe(fit);
  });

  it("bulkUpsert of 300 rows with multi-byte keys: every batch body is at most 4 MiB", async () => {
    const { store, sent } = target(name);
    const db = new TableContext({ store, tablePrefix: uniquePrefix() });
    await db.ensureTables(Row);
    const rows = Array.from({ length: 300 }, (_, i) =>
      Object.assign(row(i, 0), { pk: "é😀日".repeat(100), a: "é".repeat(16_000), b: "日".repeat(i % 7) }),
    );
    const result = await db.repository(Row).bulkUpsert(rows);
    expect(result.written).toBe(300);
    expect(result.failed).toEqual([]);
    if (name !== "memory") {
      expect(sent.length).toBeGreaterThan(1);
      for (const size of sent) expect(size).toBeLessThanOrEqual(LIMIT);
      // Batches are cut by the exact size, not a loose estimate: the first one is within two operations (~45 KB each) of full.
      expect(sent[0]!).toBeGreaterThan(LIMIT - 100_000);
    }
  });
});
