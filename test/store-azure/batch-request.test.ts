/**
 * AzureStore writes a transaction's `$batch` body itself (batch-request.ts) instead of having
 * `TableClient.submitTransaction` assemble it. These tests hold the two to the same bytes: random
 * transactions are handed to the SDK (its whole pipeline, with an HTTP client that records the body)
 * and to `batchBody` with the SDK's boundary ids, on Azure, Azurite and Cosmos DB URLs. Where the SDK
 * itself sends what the service would refuse or misread (an unconditional delete for a conditional one,
 * `null` for a NaN Double), the expected form is the service's, stated here.
 */
import { createHttpHeaders, type HttpClient, type PipelineRequest } from "@azure/core-rest-pipeline";
import {
  AzureNamedKeyCredential,
  type TransactionAction as SdkAction,
  TableClient,
} from "@azure/data-tables";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { batchBody, batchResults, batchUrlOf, entityJson } from "../../src/store/azure/batch-request.js";
import { batchTableUrl, sdkBatchesAsCosmos } from "../../src/store/batch-body-size.js";
import type { TransactionAction } from "../../src/store/table-store.js";
import { failureOf } from "../support/rejection.js";
import { testSeed } from "../support/seeded-random.js";
import { action, transaction, wireProperties, wireValue } from "../support/wire-arbitraries.js";

const SEED = testSeed(30_0101);
const key = new AzureNamedKeyCredential("devstoreaccount1", "a2V5");

function recording(requests: PipelineRequest[]): HttpClient {
  return {
    async sendRequest(request) {
      requests.push(request);
      return { request, status: 202, headers: createHttpHeaders({}), bodyAsText: "" };
    },
  };
}

// Values the SDK serialises as the service reads them; no `etag` or `timestamp` property (never sent).
const sdkProperties = wireProperties(wireValue({ sdkSerialisable: true }), { withMetadataNames: false });

function toSdk(action: TransactionAction): SdkAction {
  switch (action.kind) {
    case "insert":
      return ["create", action.entity as never];
    case "upsert":
      return ["upsert", action.entity as never, action.mode === "merge" ? "Merge" : "Replace"];
    case "update":
      return [
        "update",
        action.entity as never,
        action.mode === "merge" ? "Merge" : "Replace",
        { etag: action.ifMatch },
      ];
    case "delete":
      return ["delete", { partitionKey: action.partitionKey, rowKey: action.rowKey }];
  }
}

const accountUrls = fc.constantFrom(
  "http://127.0.0.1:10002/devstoreaccount1",
  "http://localhost:10002/devstoreaccount1/",
  "https://myaccount.table.core.windows.net",
  "https://MyAccount.table.core.windows.net:443/",
  "https://myaccount.table.cosmos.azure.com",
  "http://localhost:8902/",
);

/** The SDK's body for `actions`, and the boundary ids it drew. */
async function sdkBody(url: string, table: string, actions: readonly TransactionAction[]) {
  const requests: PipelineRequest[] = [];
  const client = new TableClient(url, table, key, {
    httpClient: recording(requests),
    allowInsecureConnection: true,
  });
  await client.submitTransaction(actions.map(toSdk));
  const request = requests[0] as PipelineRequest;
  const body = String(request.body);
  const batchId = /^--batch_([0-9a-f-]{36})\r\n/.exec(body)?.[1] as string;
  const changesetId = /boundary=changeset_([0-9a-f-]{36})\r\n/.exec(body)?.[1] as string;
  return { body, batchId, changesetId, url: request.url, contentType: request.headers.get("content-type") };
}

describe(`batchBody (seed ${SEED})`, () => {
  test("is byte for byte the body the SDK assembles, for random transactions on every kind of endpoint", async () => {
    await fc.assert(
      fc.asyncProperty(
        accountUrls,
        fc.stringMatching(/^[A-Za-z][A-Za-z0-9]{2,20}$/),
        // The SDK drops a delete's ETag (sends If-Match: *): deletes here are unconditional.
        transaction((pk) => action(pk, sdkProperties, fc.constant("*"))),
        async (url, table, [, actions]) => {
          const sent = await sdkBody(url, table, actions);
          const target = { tableUrl: batchTableUrl(url, table), cosmos: sdkBatchesAsCosmos(url) };
          expect(batchBody(target, actions, sent.batchId, sent.changesetId)).toBe(sent.body);
          expect(batchUrlOf(url)).toBe(sent.url);
          expect(sent.contentType).toBe(`multipart/mixed; boundary=batch_${sent.batchId}`);
        },
      ),
      { seed: SEED, numRuns: 150 },
    );
  });

  test("gives a conditional delete and a conditional update their ETags", () => {
    const target = { tableUrl: "https://a.table.core.windows.net/T", cosmos: false };
    const etag = `W/"datetime'2024-01-01T00%3A00%3A00.0000000Z'"`;
    const body = batchBody(
      target,
      [
        { kind: "delete", partitionKey: "p", rowKey: "d", ifMatch: etag },
        { kind: "update", entity: { partitionKey: "p", rowKey: "u" }, mode: "merge", ifMatch: etag },
      ],
      "b",
      "c",
    );
    expect(body).toContain(
      `DELETE https://a.table.core.windows.net/T(PartitionKey='p',RowKey='d') HTTP/1.1\r\nAccept: application/json;odata=minimalmetadata\r\nDataServiceVersion: 3.0\r\nIf-Match: ${etag}\r\n\r\n`,
    );
    expect(body).toContain(
      `PATCH https://a.table.core.windows.net/T(PartitionKey='p',RowKey='u') HTTP/1.1\r\n`,
    );
    expect(body.split(`If-Match: ${etag}\r\n`)).toHaveLength(3);
  });

  test("keeps the account URL's SAS on the $batch URL only", () => {
    expect(batchUrlOf("https://a.table.core.windows.net/?sv=2019&sig=x")).toBe(
      "https://a.table.core.windows.net/$batch?sv=2019&sig=x",
    );
    expect(batchTableUrl("https://a.table.core.windows.net/?sv=2019&sig=x", "T")).toBe(
      "https://a.table.core.windows.net/T",
    );
  });
});

describe("entityJson", () => {
  test("writes non-finite Doubles in the service's string form, annotated", () => {
    // "NaN", "INF" and "-INF" in Azure's docs of Edm.Double; the service (and Azurite) accept these strings.
    const json = JSON.parse(
      entityJson({
        partitionKey: "p",
        rowKey: "r",
        a: Number.NaN,
        b: { type: "Double", value: Number.POSITIVE_INFINITY },
        c: Number.NEGATIVE_INFINITY,
      }),
    );
    expect(json).toEqual({
      PartitionKey: "p",
      RowKey: "r",
      a: "NaN",
      "a@odata.type": "Edm.Double",
      b: "Infinity",
      "b@odata.type": "Edm.Double",
      c: "-Infinity",
      "c@odata.type": "Edm.Double",
    });
  });

  test("encodes the bytes a view shows, not its whole buffer; leaves out etag, timestamp and undefined", () => {
    const buffer = new Uint8Array([9, 1, 2, 3, 9]);
    const json = JSON.parse(
      entityJson({
        partitionKey: "p",
        rowKey: "r",
        bytes: buffer.subarray(1, 4),
        etag: 'W/"x"',
        timestamp: new Date(0),
        gone: undefined,
      }),
    );
    expect(json).toEqual({
      PartitionKey: "p",
      RowKey: "r",
      bytes: Buffer.from([1, 2, 3]).toString("base64"),
      "bytes@odata.type": "Edm.Binary",
    });
  });

  test("refuses a value of no EDM type, as the SDK does", () => {
    expect(() =>
      entityJson({ partitionKey: "p", rowKey: "r", x: { type: "Decimal", value: 1 } as never }),
    ).toThrow(/Unknown EDM type/);
    expect(() => entityJson({ partitionKey: "p", rowKey: "r", x: { nested: true } as never })).toThrow(
      /Unknown EDM type/,
    );
  });
});

describe("batchResults", () => {
  const request = { url: "https://a/$batch" } as PipelineRequest;
  const part = (status: string, extra: string) =>
    `--changesetresponse_1\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nHTTP/1.1 ${status}\r\nDataServiceVersion: 1.0;\r\n${extra}\r\n`;
  const answer = (parts: string[], status = 202) => ({
    request,
    status,
    headers: createHttpHeaders({}),
    bodyAsText: `--batchresponse_1\r\nContent-Type: multipart/mixed; boundary=changesetresponse_1\r\n\r\n${parts.join("")}--changesetresponse_1--\r\n--batchresponse_1--\r\n`,
  });

  test("reads each operation's ETag in order (none for a delete), one result per operation", () => {
    const results = batchResults(
      answer([
        part("204 No Content", 'ETag: W/"a"\r\n'),
        part("204 No Content", ""),
        part("204 No Content", 'ETag: W/"c"\r\n'),
      ]),
      4,
    );
    expect(results).toEqual([{ etag: 'W/"a"' }, { etag: "" }, { etag: 'W/"c"' }, { etag: "" }]);
  });

  test("raises the refused operation's status, code and message, as the SDK does", async () => {
    const refusal = part(
      "409 Conflict",
      `Content-Type: application/json\r\n\r\n{"odata.error":{"code":"EntityAlreadyExists","message":{"lang":"en-US","value":"1:The specified entity already exists."}}}\r\n`,
    );
    const error = await failureOf(() => batchResults(answer([refusal]), 2));
    expect(error).toMatchObject({
      name: "RestError",
      statusCode: 409,
      code: "EntityAlreadyExists",
      message: "1:The specified entity already exists.",
    });
  });

  test("raises a failed batch with its status", () => {
    expect(() => batchResults(answer([], 413), 1)).toThrow(expect.objectContaining({ statusCode: 413 }));
  });
});
