import http from "node:http";
import type { HttpClient, PipelineRequest } from "@azure/core-rest-pipeline";
import { createHttpHeaders } from "@azure/core-rest-pipeline";
import { AzureNamedKeyCredential, AzureSASCredential, generateAccountSas } from "@azure/data-tables";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreError, ValidationError } from "../../src/errors.js";
import { AzureStore } from "../../src/store/azure/azure-store.js";
import { parseConnectionString } from "../../src/store/azure/connection-string.js";
import type { TableStore } from "../../src/store/table-store.js";
import { azuriteConnectionString } from "../support/azurite.js";
import { type FaultServer, startFaultServer } from "../support/fault-server.js";
import { failureOf as failure } from "../support/rejection.js";
import { uniqueTableName } from "../support/table-names.js";

/** One call of every request-making method of the port. */
const everyMethod: Array<[string, (store: TableStore) => Promise<unknown>]> = [
  ["createTable", (s) => s.createTable("abc")],
  ["getEntity", (s) => s.getEntity("abc", "p", "r")],
  ["queryPage", (s) => s.queryPage("abc", {})],
  ["insert", (s) => s.insert("abc", { partitionKey: "p", rowKey: "r" })],
  ["upsert", (s) => s.upsert("abc", { partitionKey: "p", rowKey: "r" }, "merge")],
  ["update", (s) => s.update("abc", { partitionKey: "p", rowKey: "r" }, "replace", "*")],
  ["delete", (s) => s.delete("abc", "p", "r", "*")],
  [
    "submitTransaction",
    (s) =>
      s.submitTransaction("abc", "p", [
        { kind: "insert", entity: { partitionKey: "p", rowKey: "r" } },
        { kind: "delete", partitionKey: "p", rowKey: "x", ifMatch: 'W/"x"' },
      ]),
  ],
];

describe("SDK retries", () => {
  let server: FaultServer;
  beforeAll(async () => {
    server = await startFaultServer("503");
  });
  afterAll(() => server.close());

  it.each(everyMethod)("are off by default: %s makes exactly one request on 503", async (_name, call) => {
    const store = AzureStore.fromConnectionString(server.connectionString);
    server.mode = "503";
    server.reset();
    const error = await failure(() => call(store));
    expect(error).toBeInstanceOf(StoreError);
    // The service's Retry-After (0 s here) is kept for tablekit's own retry layer.
    expect(error).toMatchObject({ statusCode: 503, retryAfterMs: 0 });
    expect(server.requests).toBe(1);
  });

  it.each(["500", "reset"] as const)("are off by default on %s too", async (mode) => {
    const store = AzureStore.fromConnectionString(server.connectionString);
    server.mode = mode;
    server.reset();
    await failure(() => store.upsert("abc", { partitionKey: "p", rowKey: "r" }, "replace"));
    await failure(() =>
      store.submitTransaction("abc", "p", [{ kind: "insert", entity: { partitionKey: "p", rowKey: "r" } }]),
    );
    expect(server.requests).toBe(2);
  });

  it("can be switched on with sdkRetries", async () => {
    const store = AzureStore.fromConnectionString(server.connectionString, { sdkRetries: 2 });
    server.mode = "503";
    server.reset();
    await failure(() => store.getEntity("abc", "p", "r"));
    expect(server.requests).toBe(3);
  });
});

describe("requestTimeoutMs", () => {
  let server: FaultServer;
  beforeAll(async () => {
    server = await startFaultServer("hang");
  });
  afterAll(() => server.close());

  it.each(everyMethod)("aborts a hanging %s with StoreError Timeout", async (_name, call) => {
    const store = AzureStore.fromConnectionString(server.connectionString, { requestTimeoutMs: 150 });
    server.reset();
    // No wall-clock limit: the error naming the 150 ms timeout proves the store aborted the request.
    const error = await failure(() => call(store));
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ statusCode: undefined, serviceCode: "Timeout" });
    expect((error as Error).message).toContain("150 ms");
    expect(server.requests).toBe(1);
  });

  it("rejects a negative timeout; 0 and Infinity disable it", () => {
    const cs = azuriteConnectionString();
    expect(() => AzureStore.fromConnectionString(cs, { requestTimeoutMs: -1 })).toThrow(ValidationError);
    expect(() => AzureStore.fromConnectionString(cs, { requestTimeoutMs: 0 })).not.toThrow();
    expect(() =>
      AzureStore.fromConnectionString(cs, { requestTimeoutMs: Number.POSITIVE_INFINITY }),
    ).not.toThrow();
  });

  it("rejects a finite timeout longer than a Node timer waits (Node would abort after 1 ms)", () => {
    const cs = azuriteConnectionString();
    const longest = 2 ** 31 - 1;
    expect(() => AzureStore.fromConnectionString(cs, { requestTimeoutMs: longest })).not.toThrow();
    expect(() => AzureStore.fromConnectionString(cs, { requestTimeoutMs: longest + 1 })).toThrow(
      expect.objectContaining({
        name: "ValidationError",
        message: expect.stringContaining("at most 2147483647"),
      }),
    );
  });
});

describe("Retry-After", () => {
  it.each([
    [{ "retry-after": "2" }, 2000],
    [{ "x-ms-retry-after-ms": "150" }, 150],
    [{ "retry-after": new Date(Date.now() + 3_600_000).toUTCString() }, 3_600_000],
    [{}, undefined],
  ])("reads %j as retryAfterMs %s", async (headers, expected) => {
    const httpClient: HttpClient = {
      async sendRequest(request) {
        return { request, status: 503, headers: createHttpHeaders(headers), bodyAsText: "" };
      },
    };
    const store = AzureStore.fromConnectionString(azuriteConnectionString(), { httpClient });
    const error = (await failure(() => store.getEntity("abc", "p", "r"))) as StoreError;
    if (expected === undefined || expected < 3_600_000) expect(error.retryAfterMs).toBe(expected);
    else {
      // An HTTP date an hour ahead: whole seconds, minus however long the run took to get here.
      expect(error.retryAfterMs).toBeLessThanOrEqual(expected);
      expect(error.retryAfterMs).toBeGreaterThan(expected / 2);
    }
  });
});

describe("httpClient", () => {
  it("sends every request through the given client", async () => {
    const seen: PipelineRequest[] = [];
    const httpClient: HttpClient = {
      async sendRequest(request) {
        seen.push(request);
        return { request, status: 503, headers: createHttpHeaders({ "retry-after": "0" }), bodyAsText: "" };
      },
    };
    const store = AzureStore.fromConnectionString(azuriteConnectionString(), { httpClient, sdkRetries: 0 });
    const error = await failure(() => store.getEntity("abc", "p", "r"));
    expect(error).toMatchObject({ statusCode: 503 });
    await failure(() =>
      store.submitTransaction("abc", "p", [{ kind: "insert", entity: { partitionKey: "p", rowKey: "r" } }]),
    );
    expect(seen.map((r) => r.method)).toEqual(["GET", "POST"]);
    expect(seen[1]?.url).toMatch(/\$batch$/);
  });
});

describe("endpoints and security", () => {
  const key = new AzureNamedKeyCredential("acct", "a2V5");

  it("refuses http:// for a remote host unless allowInsecureConnection is set", () => {
    let error: unknown;
    try {
      new AzureStore("http://example.com/acct?sv=1&sig=c2VjcmV0", key);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).rule).toBe("insecure-connection");
    expect((error as Error).message).toContain("allowInsecureConnection");
    expect((error as Error).message).not.toContain("c2VjcmV0");
    expect(() => new AzureStore("http://example.com", key, { allowInsecureConnection: true })).not.toThrow();
    expect(() => new AzureStore("https://acct.table.core.windows.net", key)).not.toThrow();
  });

  it.each(["http://localhost:10002/a", "http://127.0.0.1/a", "http://127.8.9.10/a", "http://[::1]:10002/a"])(
    "allows http:// on the loopback host %s by default",
    (url) => {
      expect(() => new AzureStore(url, key)).not.toThrow();
    },
  );

  it("lets allowInsecureConnection: false win even on loopback", () => {
    expect(() => new AzureStore("http://127.0.0.1/a", key, { allowInsecureConnection: false })).toThrow(
      ValidationError,
    );
  });

  it("rejects an invalid URL with a ValidationError", () => {
    expect(() => new AzureStore("not a url", key)).toThrow(ValidationError);
  });

  it.each([
    ["https://acct.table.core.windows.net", true],
    ["http://127.0.0.1:10002/devstoreaccount1", true],
    ["https://acct.table.cosmos.azure.com", false],
    ["https://acct.table.cosmosdb.azure.com", false],
    ["https://acct.documents.azure.com", false],
  ])("reports sortedResults for %s as %s", (url, sorted) => {
    expect(new AzureStore(url, key).capabilities.sortedResults).toBe(sorted);
  });
});

describe("connection strings", () => {
  it("parses account-key strings like the SDK", () => {
    const parsed = parseConnectionString(
      "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=a2V5PT0=;EndpointSuffix=core.windows.net",
    );
    expect(parsed.url).toBe("https://acct.table.core.windows.net");
    expect(parsed.credential).toBeInstanceOf(AzureNamedKeyCredential);
    expect((parsed.credential as AzureNamedKeyCredential).key).toBe("a2V5PT0=");
    const withEndpoint = parseConnectionString(
      "AccountName=acct;AccountKey=a2V5;TableEndpoint=https://custom.example.com/acct/;",
    );
    expect(withEndpoint.url).toBe("https://custom.example.com/acct");
  });

  it("parses SAS strings and UseDevelopmentStorage=true", () => {
    const sas = parseConnectionString(
      "TableEndpoint=https://acct.table.core.windows.net/;SharedAccessSignature=?sv=1&sig=abc",
    );
    expect(sas.url).toBe("https://acct.table.core.windows.net");
    expect(sas.credential).toBeInstanceOf(AzureSASCredential);
    expect((sas.credential as AzureSASCredential).signature).toBe("sv=1&sig=abc");
    const dev = parseConnectionString("UseDevelopmentStorage=true");
    expect(dev).toMatchObject({ url: "http://127.0.0.1:10002/devstoreaccount1", developmentStorage: true });
  });

  it("finds the blob endpoint (large values): BlobEndpoint, derived from the account, or the emulator's", () => {
    const derived = parseConnectionString(
      "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=a2V5PT0=;EndpointSuffix=core.windows.net",
    );
    expect(derived.blobUrl).toBe("https://acct.blob.core.windows.net");
    const explicit = parseConnectionString(
      "AccountName=acct;AccountKey=a2V5;TableEndpoint=https://t.example.com/acct/;BlobEndpoint=https://b.example.com/acct/",
    );
    expect(explicit.blobUrl).toBe("https://b.example.com/acct");
    // A custom table endpoint says nothing about where blobs are: none unless named.
    const tableOnly = parseConnectionString(
      "AccountName=acct;AccountKey=a2V5;TableEndpoint=https://t.example.com/acct",
    );
    expect(tableOnly.blobUrl).toBeUndefined();
    const sas = parseConnectionString(
      "TableEndpoint=https://acct.table.core.windows.net/;BlobEndpoint=https://acct.blob.core.windows.net;SharedAccessSignature=sv=1&sig=abc",
    );
    expect(sas.blobUrl).toBe("https://acct.blob.core.windows.net");
    expect(parseConnectionString("UseDevelopmentStorage=true").blobUrl).toBe(
      "http://127.0.0.1:10000/devstoreaccount1",
    );
    expect(AzureStore.fromConnectionString("UseDevelopmentStorage=true").blobs).toBeDefined();
    expect(
      AzureStore.fromConnectionString(
        "AccountName=acct;AccountKey=a2V5;TableEndpoint=https://t.example.com/acct",
      ).blobs,
    ).toBeUndefined();
    expect(
      () =>
        new AzureStore("https://t.example.com/acct", new AzureNamedKeyCredential("a", "a2V5"), {
          blobEndpoint: "http://b.example.com",
        }),
    ).toThrow(ValidationError);
  });

  it("rejects an unusable string without echoing its secrets", () => {
    let error: unknown;
    try {
      parseConnectionString("AccountKey=c2VjcmV0a2V5;EndpointSuffix=core.windows.net");
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).not.toContain("c2VjcmV0a2V5");
    expect(() => parseConnectionString("nonsense")).toThrow(ValidationError);
  });

  it("works end to end with an account SAS (URL signing, transactions with conditional deletes)", async () => {
    const account = parseConnectionString(azuriteConnectionString());
    const sas = generateAccountSas(account.credential as AzureNamedKeyCredential, {
      permissions: { query: true, write: true, delete: true, list: true, add: true, update: true },
      resourceTypes: "sco",
    });
    const store = AzureStore.fromConnectionString(
      `TableEndpoint=${account.url};SharedAccessSignature=${sas}`,
    );
    const table = uniqueTableName("sas");
    await store.createTable(table);
    try {
      const written = await store.insert(table, { partitionKey: "p", rowKey: "a", v: 1 });
      const results = await store.submitTransaction(table, "p", [
        { kind: "insert", entity: { partitionKey: "p", rowKey: "b" } },
        { kind: "delete", partitionKey: "p", rowKey: "a", ifMatch: written.etag },
      ]);
      expect(results).toHaveLength(2);
      const page = await store.queryPage(table, {});
      expect(page.items.map((e) => e.rowKey)).toEqual(["b"]);
    } finally {
      await store.deleteTable(table);
    }
  });
});

/** An http.Agent that counts the sockets it opens and the most it ever held open at once. */
class CountingAgent extends http.Agent {
  created = 0;
  open = 0;
  maxOpen = 0;

  override createConnection(
    ...args: Parameters<http.Agent["createConnection"]>
  ): ReturnType<http.Agent["createConnection"]> {
    const socket = super.createConnection(...args);
    this.created++;
    this.open++;
    this.maxOpen = Math.max(this.maxOpen, this.open);
    socket?.once("close", () => {
      this.open--;
    });
    return socket;
  }
}

describe("a caller's HTTP agent", () => {
  it("carries every request, within its maxSockets", async () => {
    const agent = new CountingAgent({ keepAlive: true, maxSockets: 2 });
    try {
      const store = AzureStore.fromConnectionString(azuriteConnectionString(), { agent });
      const table = uniqueTableName();
      await store.createTable(table);
      await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          store.upsert(table, { partitionKey: "p", rowKey: `r${i}` }, "replace"),
        ),
      );
      const page = await store.queryPage(table, {});
      expect(page.items).toHaveLength(12);
      // The agent opened the sockets (so requests went through it) and never more than two at once.
      expect(agent.created).toBeGreaterThanOrEqual(1);
      expect(agent.maxOpen).toBeLessThanOrEqual(2);
      // Keep-alive: 14 requests over far fewer connections.
      expect(agent.created).toBeLessThan(14);
    } finally {
      agent.destroy();
    }
  });

  it("must be an http.Agent", () => {
    expect(() =>
      AzureStore.fromConnectionString(azuriteConnectionString(), { agent: {} as http.Agent }),
    ).toThrow(ValidationError);
  });
});
