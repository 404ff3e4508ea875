/**
 * AzureStore sends a single insert, upsert, update or delete as a request it builds itself (entity-writes.ts)
 * through the table client's pipeline, instead of calling the SDK's method. These tests hold it to the
 * request the SDK sends for the same write: method, URL, body and headers (those the pipeline stamps
 * per request, the date, signature, request id and user agent, left aside), on Azure, Azurite and
 * Cosmos DB URLs (where the SDK's pipeline turns a merge into a POST with `X-HTTP-Method: MERGE`).
 */
import { createHttpHeaders, type HttpClient, type PipelineRequest } from "@azure/core-rest-pipeline";
import { AzureNamedKeyCredential, TableClient } from "@azure/data-tables";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { AzureStore } from "../../src/store/azure/azure-store.js";
import { writeAnswer } from "../../src/store/azure/entity-writes.js";
import type { WireEntity } from "../../src/store/table-store.js";
import { failureOf } from "../support/rejection.js";
import { testSeed } from "../support/seeded-random.js";
import { text } from "../support/wire-arbitraries.js";

const SEED = testSeed(30_0102);
const key = new AzureNamedKeyCredential("devstoreaccount1", "a2V5");
const PER_REQUEST = new Set(["x-ms-client-request-id", "x-ms-date", "authorization", "user-agent"]);

function recording(requests: PipelineRequest[]): HttpClient {
  return {
    async sendRequest(request) {
      requests.push(request);
      return { request, status: 204, headers: createHttpHeaders({ etag: 'W/"e"' }), bodyAsText: "" };
    },
  };
}

function sent(request: PipelineRequest) {
  const headers = [...request.headers].filter(([name]) => !PER_REQUEST.has(name.toLowerCase()));
  return { method: request.method, url: request.url, body: request.body, headers };
}

type Write =
  | { kind: "insert" }
  | { kind: "upsert"; mode: "merge" | "replace" }
  | { kind: "update"; mode: "merge" | "replace"; ifMatch: string }
  | { kind: "delete"; ifMatch: string };

const writes: fc.Arbitrary<Write> = fc.oneof(
  fc.constant({ kind: "insert" as const }),
  fc.constantFrom("merge" as const, "replace" as const).map((mode) => ({ kind: "upsert" as const, mode })),
  fc
    .tuple(fc.constantFrom("merge" as const, "replace" as const), fc.constantFrom("*", 'W/"x"'))
    .map(([mode, ifMatch]) => ({ kind: "update" as const, mode, ifMatch })),
  fc.constantFrom("*", 'W/"x"').map((ifMatch) => ({ kind: "delete" as const, ifMatch })),
);

const urls = fc.constantFrom(
  "http://127.0.0.1:10002/devstoreaccount1",
  "https://myaccount.table.core.windows.net/",
  "https://myaccount.table.cosmos.azure.com",
);

describe(`AzureStore's single writes (seed ${SEED})`, () => {
  test("send the SDK's request for the same write", async () => {
    await fc.assert(
      fc.asyncProperty(urls, writes, text(12), text(12), fc.integer(), async (url, write, pk, rk, n) => {
        const entity: WireEntity = {
          partitionKey: pk,
          rowKey: rk,
          n,
          when: new Date(0),
          big: 7n,
          d: { type: "Double", value: 1 },
        };
        const ours: PipelineRequest[] = [];
        const theirs: PipelineRequest[] = [];
        const store = new AzureStore(url, key, {
          httpClient: recording(ours),
          allowInsecureConnection: true,
        });
        const client = new TableClient(url, "Orders", key, {
          httpClient: recording(theirs),
          allowInsecureConnection: true,
        });
        const mode =
          write.kind === "insert" || write.kind === "delete"
            ? "Replace"
            : write.mode === "merge"
              ? "Merge"
              : "Replace";
        if (write.kind === "delete") {
          expect(await store.delete("Orders", pk, rk, write.ifMatch)).toBe(true);
          await client.deleteEntity(pk, rk, { etag: write.ifMatch });
        } else if (write.kind === "insert") {
          expect(await store.insert("Orders", entity)).toEqual({ etag: 'W/"e"' });
          await client.createEntity(entity as never);
        } else if (write.kind === "upsert") {
          expect(await store.upsert("Orders", entity, write.mode)).toEqual({ etag: 'W/"e"' });
          await client.upsertEntity(entity as never, mode);
        } else {
          expect(await store.update("Orders", entity, write.mode, write.ifMatch)).toEqual({ etag: 'W/"e"' });
          await client.updateEntity(entity as never, mode, { etag: write.ifMatch });
        }
        expect(sent(ours[0] as PipelineRequest)).toEqual(sent(theirs[0] as PipelineRequest));
      }),
      { seed: SEED, numRuns: 60 },
    );
  });
});

describe("writeAnswer", () => {
  const request = { url: "https://a/T" } as PipelineRequest;

  test("puts a refusal's code and odata.error where the SDK's error mapper does", async () => {
    const body = `{"odata.error":{"code":"UpdateConditionNotSatisfied","message":{"lang":"en-US","value":"The update condition specified in the request was not satisfied."}}}`;
    const error = await failureOf(() =>
      writeAnswer({
        request,
        status: 412,
        headers: createHttpHeaders({ "x-ms-error-code": "UpdateConditionNotSatisfied" }),
        bodyAsText: body,
      }),
    );
    expect(error).toMatchObject({
      name: "RestError",
      statusCode: 412,
      code: "UpdateConditionNotSatisfied",
      details: {
        errorCode: "UpdateConditionNotSatisfied",
        odataError: { code: "UpdateConditionNotSatisfied" },
      },
    });
  });

  test("reads an XML refusal's Message (a failed authentication answers in XML)", () => {
    const body = `<?xml version="1.0" encoding="utf-8"?><Error><Code>AuthenticationFailed</Code><Message>Server failed to authenticate the request.</Message></Error>`;
    expect(() =>
      writeAnswer({ request, status: 403, headers: createHttpHeaders({}), bodyAsText: body }),
    ).toThrow(
      expect.objectContaining({
        details: expect.objectContaining({ Message: "Server failed to authenticate the request." }),
      }),
    );
  });
});
