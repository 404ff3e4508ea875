/**
 * `batchBodyBytes` against the body sent: AzureStore submits random transactions through the table
 * client's pipeline with an HTTP client that records the `$batch` body it is handed and answers 202;
 * the recorded body's UTF-8 length must equal the computed size exactly. (AzureStore writes the body
 * as `@azure/data-tables` does: test/store-azure/batch-request.test.ts compares the two.)
 */

import { createHttpHeaders, type HttpClient } from "@azure/core-rest-pipeline";
import { AzureNamedKeyCredential } from "@azure/data-tables";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { AzureStore } from "../../src/store/azure/azure-store.js";
import {
  BATCH_ENVELOPE_BYTES,
  batchBodyBytes,
  batchBodyBytesOver,
  batchOperationBytes,
  batchOperationBytesBound,
  batchTableUrlFor,
  NOMINAL_ACCOUNT_URL,
} from "../../src/store/batch-body-size.js";
import type { TransactionAction } from "../../src/store/table-store.js";
import { AZURE_TABLE_LIMITS } from "../../src/util/store-limits.js";
import { testSeed } from "../support/seeded-random.js";
import { transaction } from "../support/wire-arbitraries.js";

const SEED = testSeed(19_0001);

/** An HTTP client that keeps each request body and answers an empty 202 (a batch with no sub-responses). */
function recordingClient(bodies: string[]): HttpClient {
  return {
    async sendRequest(request) {
      bodies.push(typeof request.body === "string" ? request.body : "");
      return { request, status: 202, headers: createHttpHeaders({}), bodyAsText: "" };
    },
  };
}

const key = new AzureNamedKeyCredential("devstoreaccount1", "a2V5");

const accountUrls = fc.constantFrom(
  "http://127.0.0.1:10002/devstoreaccount1",
  "http://127.0.0.1:10002/devstoreaccount1/",
  "https://myaccount.table.core.windows.net",
  "https://myaccount.table.core.windows.net/",
  "https://MyAccount.table.core.windows.net:443",
  NOMINAL_ACCOUNT_URL,
  // The Cosmos DB form of the body (an x-ms-version line per operation, a merge as POST + X-HTTP-Method).
  "https://myaccount.table.cosmos.azure.com",
  "http://localhost:8902/",
);

describe(`batchBodyBytes (seed ${SEED})`, () => {
  test("equals the byte length of the $batch body the SDK sends, for random transactions", async () => {
    await fc.assert(
      fc.asyncProperty(
        accountUrls,
        fc.stringMatching(/^[A-Za-z][A-Za-z0-9]{2,20}$/),
        transaction(),
        async (url, table, [partitionKey, drafted]) => {
          // One operation per RowKey, as a transaction requires.
          const seen = new Set<string>();
          const actions = drafted.filter((a) => {
            const rowKey = a.kind === "delete" ? a.rowKey : a.entity.rowKey;
            if (seen.has(rowKey)) return false;
            seen.add(rowKey);
            return true;
          });
          const bodies: string[] = [];
          const store = new AzureStore(url, key, {
            httpClient: recordingClient(bodies),
            allowInsecureConnection: true,
          });
          await store.submitTransaction(table, partitionKey, actions);
          expect(bodies).toHaveLength(1);
          const limits = store.capabilities.limits ?? AZURE_TABLE_LIMITS;
          expect(batchBodyBytes(limits, table, actions)).toBe(Buffer.byteLength(bodies[0]!, "utf8"));
          // batchBodyBytesOver (the client's check) answers the exact size exactly when it is over a
          // limit, whatever the limit: just under, at and just over this body, and far above it.
          const exact = batchBodyBytes(limits, table, actions);
          for (const max of [exact - 1, exact, exact + 1, limits.maxTransactionBytes])
            expect(batchBodyBytesOver(limits, table, actions, max)).toBe(exact > max ? exact : undefined);
          // MemoryStore skips the exact count while this bound stays under the limit.
          const tableUrl = batchTableUrlFor(limits, table);
          for (const a of actions)
            expect(batchOperationBytesBound(tableUrl, a)).toBeGreaterThanOrEqual(
              batchOperationBytes(tableUrl, a),
            );
        },
      ),
      { seed: SEED, numRuns: 200 },
    );
  });

  test("a store without an account URL sizes on the nominal endpoint; an empty batch is the envelope", () => {
    const del: TransactionAction = { kind: "delete", partitionKey: "p", rowKey: "r", ifMatch: "*" };
    const nominal = batchBodyBytes({ ...AZURE_TABLE_LIMITS, accountUrl: NOMINAL_ACCOUNT_URL }, "Orders", [
      del,
    ]);
    expect(batchBodyBytes(AZURE_TABLE_LIMITS, "Orders", [del])).toBe(nominal);
    expect(batchBodyBytes(AZURE_TABLE_LIMITS, "Orders", [])).toBe(BATCH_ENVELOPE_BYTES);
  });
});
