/**
 * 429 (the Cosmos DB Table API's rate limiting) is a transient fault: retried after the service's
 * hint (`x-ms-retry-after-ms` in milliseconds, `Retry-After` in seconds), never "possibly applied".
 * Every sleep goes through an injected clock: nothing waits for real.
 */
import type { HttpClient, PipelineRequest } from "@azure/core-rest-pipeline";
import { createHttpHeaders } from "@azure/core-rest-pipeline";
import { describe, expect, it } from "vitest";
import { azuriteConnectionStringFor } from "../../scripts/azurite-process.js";
import { StoreError, TableContext } from "../../src/index.js";
import {
  type AttemptContext,
  classifyFault,
  RetryPolicy,
} from "../../src/repository/pipeline/retry-policy.js";
import { AzureStore } from "../../src/store/azure/azure-store.js";
import { Reading } from "../writes/models.js";

const tooMany = (retryAfterMs?: number) =>
  new StoreError("rate limited", {
    statusCode: 429,
    serviceCode: "TooManyRequests",
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });

describe("429 in the retry policy", () => {
  it("is classified as throttling", () => {
    expect(classifyFault(tooMany())).toBe("throttled");
    expect(classifyFault(tooMany(20))).toBe("throttled");
  });

  it("is retried after the service's hint as given, even above maxDelayMs, and never makes a write ambiguous", async () => {
    const sleeps: number[] = [];
    const policy = new RetryPolicy(
      { retries: 5, minDelayMs: 100, maxDelayMs: 2_000 },
      async (ms) => void sleeps.push(ms),
      () => 0,
    );
    const errors = [tooMany(30), tooMany(5_000), tooMany(), tooMany(0)];
    const attempts: AttemptContext[] = [];
    const result = await policy.run(async (context) => {
      attempts.push({ ...context });
      const error = errors[attempts.length - 1];
      if (error) throw error;
      return "done";
    });
    expect(result).toBe("done");
    // The hint as given, even above maxDelayMs (it bounds the backoff only); no hint falls back to the
    // backoff (jitter 0, third retry: half its ceiling of 400 ms).
    expect(sleeps).toEqual([30, 5_000, 200, 0]);
    // A 429 is answered before the request is processed: a later conflict is never our own write.
    expect(attempts.map((a) => a.possiblyApplied)).toEqual([false, false, false, false, false]);
  });
});

/** An HTTP client answering each request with the next scripted response (status + headers). */
function scripted(responses: Array<{ status: number; headers?: Record<string, string> }>) {
  const seen: PipelineRequest[] = [];
  const httpClient: HttpClient = {
    async sendRequest(request) {
      seen.push(request);
      const next = responses.shift() ?? { status: 404 };
      const body =
        next.status === 404
          ? JSON.stringify({ "odata.error": { code: "ResourceNotFound", message: { value: "absent" } } })
          : "";
      return {
        request,
        status: next.status,
        headers: createHttpHeaders({ "content-type": "application/json", ...(next.headers ?? {}) }),
        bodyAsText: body,
      };
    },
  };
  return { httpClient, seen };
}

// The httpClient answers every request, so no emulator is needed: a well-formed endpoint nobody listens on.
const NO_SERVER = azuriteConnectionStringFor("127.0.0.1", 9);

describe("429 from an Azure endpoint, end to end through a TableContext", () => {
  it.each([
    ["x-ms-retry-after-ms (milliseconds)", { "x-ms-retry-after-ms": "250" }, 250],
    ["Retry-After (seconds)", { "retry-after": "2" }, 2_000],
  ])("honours %s", async (_name, headers, expectedMs) => {
    // Two throttled answers, then a 404: the point read resolves as absent on the third request.
    const { httpClient, seen } = scripted([
      { status: 429, headers },
      { status: 429, headers },
    ]);
    const store = AzureStore.fromConnectionString(NO_SERVER, { httpClient });
    const sleeps: number[] = [];
    const db = new TableContext({
      store,
      retry: { retries: 3, minDelayMs: 10, maxDelayMs: 5_000 },
      sleep: async (ms) => void sleeps.push(ms),
      random: () => 0,
    });
    await expect(db.repository(Reading).get({ sensor: "s001", seq: 1 })).resolves.toBeUndefined();
    expect(seen).toHaveLength(3);
    expect(sleeps).toEqual([expectedMs, expectedMs]);
  });

  it("surfaces the 429 with its hint once retries run out", async () => {
    const throttled = { status: 429, headers: { "x-ms-retry-after-ms": "40" } };
    const { httpClient, seen } = scripted([throttled, throttled, throttled]);
    const store = AzureStore.fromConnectionString(NO_SERVER, { httpClient });
    const sleeps: number[] = [];
    const db = new TableContext({
      store,
      retry: { retries: 2, minDelayMs: 10, maxDelayMs: 5_000 },
      sleep: async (ms) => void sleeps.push(ms),
    });
    const error = await db
      .repository(Reading)
      .get({ sensor: "s001", seq: 1 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ statusCode: 429, retryAfterMs: 40 });
    expect(seen).toHaveLength(3);
    expect(sleeps).toEqual([40, 40]);
  });
});
