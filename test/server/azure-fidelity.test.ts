import {
  AzureNamedKeyCredential,
  AzureSASCredential,
  generateTableSas,
  RestError,
  TableClient,
  TableServiceClient,
} from "@azure/data-tables";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startTableServer, type TableServer } from "../../src/index.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { ACCOUNT, errorOf, KEY, signedFetch } from "./signed-fetch.js";

// Where a peer suite (Azurite's own table tests, run against `tablekit serve`) found the server
// answering otherwise than Azure: each case here is the REST docs' rule, checked with the raw SDK or
// raw requests, as a client other than tablekit's would send them.
let server: TableServer;
const store = new MemoryStore();
let service: TableServiceClient;
let counter = 0;

beforeAll(async () => {
  server = await startTableServer({ port: 0, store });
  service = new TableServiceClient(server.url, new AzureNamedKeyCredential(ACCOUNT, KEY), {
    allowInsecureConnection: true,
  });
});
afterAll(async () => {
  await server.close();
});

async function freshTable(): Promise<TableClient> {
  const name = `fidelity${++counter}`;
  await service.createTable(name);
  return new TableClient(server.url, name, new AzureNamedKeyCredential(ACCOUNT, KEY), {
    allowInsecureConnection: true,
  });
}

async function readJson(url: string, level = "minimalmetadata"): Promise<Record<string, unknown>> {
  const response = await signedFetch(url, { headers: { Accept: `application/json;odata=${level}` } });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

async function insertRaw(table: string, body: string): Promise<Response> {
  return signedFetch(`${server.url}/${table}`, {
    method: "POST",
    body,
    headers: { Prefer: "return-no-content" },
  });
}

describe("$select", () => {
  test("only the selected properties come, the keys and Timestamp too only when named", async () => {
    const table = await freshTable();
    await table.createEntity({ partitionKey: "p", rowKey: "r", n: 1, s: "x" });
    const point = `${server.url}/${table.tableName}(PartitionKey='p',RowKey='r')`;
    const entities = `${server.url}/${table.tableName}()`;
    const onlyN = await readJson(`${point}?$select=n`);
    expect(
      Object.keys(onlyN)
        .filter((k) => !k.startsWith("odata."))
        .sort(),
    ).toEqual(["n"]);
    expect(onlyN["odata.etag"]).toMatch(/^W\/"datetime'/);
    const [row] = (await readJson(`${entities}?$select=n`)).value as Record<string, unknown>[];
    expect(Object.keys(row ?? {}).sort()).toEqual(["n", "odata.etag"]);
    const named = await readJson(`${point}?$select=${encodeURIComponent("n,PartitionKey,RowKey,Timestamp")}`);
    expect(named).toMatchObject({ PartitionKey: "p", RowKey: "r", n: 1 });
    expect(named.Timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$/);
    expect(named["Timestamp@odata.type"]).toBeUndefined(); // annotated with full metadata only
    // Without $select every property comes, system ones included.
    expect(await readJson(point)).toMatchObject({ PartitionKey: "p", RowKey: "r", n: 1, s: "x" });
  });

  test("the SDK gets only what it selected, with the ETag", async () => {
    const table = await freshTable();
    await table.createEntity({ partitionKey: "p", rowKey: "r", n: 1, s: "x" });
    const read = await table.getEntity("p", "r", { queryOptions: { select: ["s"] } });
    // (The SDK leaves a point read's odata.metadata on the entity, from Azure as from any server.)
    expect(
      Object.keys(read)
        .filter((k) => k !== "odata.metadata")
        .sort(),
    ).toEqual(["etag", "s"]);
  });
});

describe("Timestamp", () => {
  test("comes unannotated with minimal metadata, so the SDK reads a string as from Azure", async () => {
    const table = await freshTable();
    await table.createEntity({ partitionKey: "p", rowKey: "r" });
    const read = await table.getEntity("p", "r");
    expect(typeof read.timestamp).toBe("string");
    const [listed] = (await table.listEntities().byPage().next()).value;
    expect(typeof listed.timestamp).toBe("string");
  });
});

describe("number inference", () => {
  test("an unannotated number is Int32 only when written as an integer in range, else Double", async () => {
    const table = await freshTable();
    // The text as a non-JavaScript client writes it: JSON.parse alone cannot tell 1.0 from 1.
    const body =
      '{"PartitionKey":"p","RowKey":"r","whole":1.0,"int":1,"exp":2E3,"negZero":-0.0,"big":3000000000,"frac":1.5,"nested":"a 1.0 b"}';
    expect((await insertRaw(table.tableName, body)).status).toBe(204);
    const json = await readJson(`${server.url}/${table.tableName}(PartitionKey='p',RowKey='r')`);
    expect(json).toMatchObject({
      "whole@odata.type": "Edm.Double",
      whole: 1,
      int: 1,
      "exp@odata.type": "Edm.Double",
      exp: 2000,
      "big@odata.type": "Edm.Double",
      big: 3000000000,
      frac: 1.5,
      nested: "a 1.0 b",
    });
    expect(json["int@odata.type"]).toBeUndefined();
    expect(json["negZero@odata.type"]).toBe("Edm.Double");
    // The stored type decides filters: a Double compares with a Double constant, an Int32 with an Int32.
    const hits = await readJson(
      `${server.url}/${table.tableName}()?$filter=${encodeURIComponent("whole eq 1.0 and int eq 1")}`,
    );
    expect((hits.value as unknown[]).length).toBe(1);
  });

  test("a member written twice takes its last value's form, as JSON.parse does", async () => {
    const table = await freshTable();
    const body = '{"PartitionKey":"p","RowKey":"r","x":1.0,"x":2,"y":{"inner":1},"y":3.0}';
    expect((await insertRaw(table.tableName, body)).status).toBe(204);
    const json = await readJson(`${server.url}/${table.tableName}(PartitionKey='p',RowKey='r')`);
    expect(json).toMatchObject({ x: 2, y: 3, "y@odata.type": "Edm.Double" });
    expect(json["x@odata.type"]).toBeUndefined();
  });
});

describe("property names that are the JavaScript SDK's field names", () => {
  test("partitionKey, rowKey, etag and timestamp are ordinary properties", async () => {
    const table = await freshTable();
    const body = JSON.stringify({
      PartitionKey: "P",
      RowKey: "R",
      partitionKey: "lower pk",
      rowKey: "lower rk",
      etag: "not an etag",
      timestamp: 42,
    });
    expect((await insertRaw(table.tableName, body)).status).toBe(204);
    const point = `${server.url}/${table.tableName}(PartitionKey='P',RowKey='R')`;
    expect(await readJson(point, "nometadata")).toMatchObject({
      PartitionKey: "P",
      RowKey: "R",
      partitionKey: "lower pk",
      rowKey: "lower rk",
      etag: "not an etag",
      timestamp: 42,
    });
    // Merge keeps them and changes one; filters see them as properties, never as the keys.
    const merged = await signedFetch(point, {
      method: "MERGE",
      body: JSON.stringify({ etag: "changed" }),
      headers: { "If-Match": "*" },
    });
    expect(merged.status).toBe(204);
    const filter = encodeURIComponent("partitionKey eq 'lower pk' and etag eq 'changed'");
    const hits = (await readJson(`${server.url}/${table.tableName}()?$filter=${filter}`, "nometadata"))
      .value as Record<string, unknown>[];
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ PartitionKey: "P", rowKey: "lower rk", timestamp: 42 });
    const none = encodeURIComponent("PartitionKey eq 'lower pk'");
    expect((await readJson(`${server.url}/${table.tableName}()?$filter=${none}`)).value).toEqual([]);
    // The port's read shape has no room for them: its own fields stay the entity's keys and ETag.
    const stored = await store.getEntity(table.tableName, "P", "R");
    expect(stored).toMatchObject({ partitionKey: "P", rowKey: "R" });
    expect(stored?.etag).toMatch(/^W\/"datetime'/);
    expect(stored?.timestamp).toBeInstanceOf(Date);
  });
});

describe("request URLs", () => {
  test("one trailing slash names the same resource", async () => {
    const name = `slash${++counter}`;
    const created = await signedFetch(`${server.url}/Tables/`, {
      method: "POST",
      body: JSON.stringify({ TableName: name }),
    });
    expect(created.status).toBe(201);
    expect((await insertRaw(`${name}/`, '{"PartitionKey":"p","RowKey":"r"}')).status).toBe(204);
    expect(((await readJson(`${server.url}/${name}/`)).value as unknown[]).length).toBe(1);
  });
});

describe("x-ms-version", () => {
  test("the answer carries the requested version; a malformed one is 400 InvalidHeaderValue", async () => {
    const ok = await signedFetch(`${server.url}/Tables`, { headers: { "x-ms-version": "2021-12-02" } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-ms-version")).toBe("2021-12-02");
    const name = `version${++counter}`;
    const bad = await signedFetch(`${server.url}/Tables`, {
      method: "POST",
      body: JSON.stringify({ TableName: name }),
      headers: { "x-ms-version": "invalid" },
    });
    expect(await errorOf(bad)).toMatchObject({ status: 400, code: "InvalidHeaderValue" });
    const tables = (await readJson(`${server.url}/Tables`)).value as { TableName: string }[];
    expect(tables.map((t) => t.TableName)).not.toContain(name);
  });
});

describe("shared access signatures", () => {
  test("a SAS that repeats a field (sig=…&sig=…) is refused, whichever value comes first", async () => {
    const table = await freshTable();
    const sas = generateTableSas(table.tableName, new AzureNamedKeyCredential(ACCOUNT, KEY), {
      permissions: { add: true },
      expiresOn: new Date(Date.now() + 3_600_000),
    });
    const client = (token: string) =>
      new TableClient(server.url, table.tableName, new AzureSASCredential(token), {
        allowInsecureConnection: true,
      });
    await client(sas).createEntity({ partitionKey: "p", rowKey: "ok" });
    const failure = await client(`${sas}&sig=duplicated`)
      .createEntity({ partitionKey: "p", rowKey: "twice" })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(failure).toBeInstanceOf(RestError);
    expect((failure as RestError).statusCode).toBe(403);
    expect(await table.getEntity("p", "twice").catch((e: RestError) => e.statusCode)).toBe(404);
  });
});

describe("a batch holding one query", () => {
  test("is answered as one part outside any changeset: 200 with the entity, or 404", async () => {
    const table = await freshTable();
    await table.createEntity({ partitionKey: "p", rowKey: "r", n: 5 });
    const batch = async (path: string) => {
      const body =
        "--batch_q\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
        `GET ${server.url}/${path} HTTP/1.1\r\nAccept: application/json;odata=minimalmetadata\r\n\r\n` +
        "--batch_q--\r\n";
      const response = await postBatch(body, "batch_q");
      expect(response.status).toBe(202);
      return response.text();
    };
    const found = await batch(`${table.tableName}(PartitionKey='p',RowKey='r')`);
    expect(found).toMatch(/^HTTP\/1\.1 200 OK\r$/m);
    expect(found).not.toContain("changesetresponse");
    expect(found).toMatch(/^ETag: W\/"datetime'/m);
    expect(found).toContain('"n":5');
    const missing = await batch(`${table.tableName}(PartitionKey='p',RowKey='nothing')`);
    expect(missing).toMatch(/^HTTP\/1\.1 404 Not Found\r$/m);
    expect(missing).toContain('"value":"0:The specified resource does not exist.');
    const query = await batch(`${table.tableName}()?$filter=${encodeURIComponent("n eq 5")}`);
    expect(query).toMatch(/^HTTP\/1\.1 200 OK\r$/m);
    expect(query).toContain('"RowKey":"r"');
  });

  test("a write outside a changeset is refused and writes nothing", async () => {
    const table = await freshTable();
    const body =
      "--batch_w\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
      `POST ${server.url}/${table.tableName} HTTP/1.1\r\nContent-Type: application/json\r\n\r\n` +
      '{"PartitionKey":"p","RowKey":"r"}\r\n--batch_w--\r\n';
    const response = await postBatch(body, "batch_w");
    expect(response.status).toBe(400);
    expect(await table.getEntity("p", "r").catch((e: RestError) => e.statusCode)).toBe(404);
  });
});

describe("$format", () => {
  test("takes precedence over the Accept header (OData system query options)", async () => {
    const table = await freshTable();
    await table.createEntity({ partitionKey: "p", rowKey: "r", n: 1 });
    const point = `${server.url}/${table.tableName}(PartitionKey='p',RowKey='r')`;
    const format = (level: string) => `$format=${encodeURIComponent(`application/json;odata=${level}`)}`;
    const none = await readJson(`${point}?${format("nometadata")}`, "fullmetadata");
    expect(none["odata.metadata"]).toBeUndefined();
    expect(none["odata.etag"]).toBeUndefined();
    const full = await readJson(`${point}?${format("fullmetadata")}`, "nometadata");
    expect(full["odata.type"]).toBe(`${ACCOUNT}.${table.tableName}`);
    // Without $format, Accept decides.
    expect((await readJson(point, "fullmetadata"))["odata.type"]).toBe(`${ACCOUNT}.${table.tableName}`);
  });
});

describe("an insert in a batch", () => {
  test("is 201 with the entity without Prefer: return-no-content, 204 with it", async () => {
    const table = await freshTable();
    // The first part asks for full metadata by $format, which wins over its Accept header.
    const format = `?$format=${encodeURIComponent("application/json;odata=fullmetadata")}`;
    const part = (rowKey: string, prefer: string) =>
      "--changeset_i\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
      `POST ${server.url}/${table.tableName}${prefer === "" ? format : ""} HTTP/1.1\r\nContent-Type: application/json\r\n` +
      `Accept: application/json;odata=minimalmetadata\r\n${prefer}\r\n` +
      `{"PartitionKey":"p","RowKey":"${rowKey}","n":7}\r\n`;
    const body =
      "--batch_i\r\nContent-Type: multipart/mixed; boundary=changeset_i\r\n\r\n" +
      part("a", "") +
      part("b", "Prefer: return-no-content\r\n") +
      "--changeset_i--\r\n--batch_i--\r\n";
    const response = await postBatch(body, "batch_i");
    expect(response.status).toBe(202);
    const [first, second] = (await response.text()).split("--changesetresponse_").slice(1);
    expect(first).toMatch(/^HTTP\/1\.1 201 Created\r$/m);
    expect(first).toMatch(/^Preference-Applied: return-content\r$/m);
    expect(first).toMatch(/"RowKey":"a",.*"n":7\}/);
    expect(first).toContain(`"odata.type":"${ACCOUNT}.${table.tableName}"`);
    expect(second).toMatch(/^HTTP\/1\.1 204 No Content\r$/m);
    expect(second).not.toContain('"RowKey"');
    // The SDK sends return-no-content in its transactions, and reads both answers.
    await table.submitTransaction([["create", { partitionKey: "p", rowKey: "c" }]]);
    expect((await table.getEntity("p", "a")).n).toBe(7);
  });
});

describe("strings", () => {
  test("of 32,768 UTF-16 units (64 KiB) are accepted; one more is 400 PropertyValueTooLarge", async () => {
    const table = await freshTable();
    await table.createEntity({ partitionKey: "p", rowKey: "r", s: "x".repeat(32_768) });
    expect((await table.getEntity<{ s: string }>("p", "r")).s).toHaveLength(32_768);
    const failure = await table
      .createEntity({ partitionKey: "p", rowKey: "s", s: "x".repeat(32_769) })
      .catch((e: RestError) => e);
    expect((failure as RestError).statusCode).toBe(400);
    expect((failure as RestError).message).toContain("PropertyValueTooLarge");
  });
});

/** A raw `$batch` request with this multipart body. */
function postBatch(body: string, boundary: string): Promise<Response> {
  return signedFetch(`${server.url}/$batch`, {
    method: "POST",
    body,
    headers: { "Content-Type": `multipart/mixed; boundary=${boundary}` },
  });
}
