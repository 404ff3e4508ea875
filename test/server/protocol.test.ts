import { request as httpRequest, type IncomingMessage } from "node:http";
import {
  AzureNamedKeyCredential,
  RestError,
  TableClient,
  TableServiceClient,
  TableTransaction,
  type TransactionAction,
} from "@azure/data-tables";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startTableServer, type TableServer, ValidationError } from "../../src/index.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { ACCOUNT, errorOf, signedFetch, signedHeaders } from "./signed-fetch.js";

// The raw @azure/data-tables SDK against `tablekit serve`: what any client sees on the wire.
let server: TableServer;
let service: TableServiceClient;
let counter = 0;

beforeAll(async () => {
  server = await startTableServer({ port: 0, store: new MemoryStore() });
  service = TableServiceClient.fromConnectionString(server.connectionString, {
    allowInsecureConnection: true,
  });
});
afterAll(async () => {
  await server.close();
});

async function freshTable(): Promise<TableClient> {
  const name = `proto${++counter}`;
  await service.createTable(name);
  return TableClient.fromConnectionString(server.connectionString, name, { allowInsecureConnection: true });
}

async function restError(promise: Promise<unknown>): Promise<RestError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RestError);
  return error as RestError;
}

function codeOf(error: RestError): unknown {
  return (error.details as { errorCode?: unknown } | undefined)?.errorCode ?? error.code;
}

describe("tables", () => {
  test("create, create again (409 TableAlreadyExists), delete, delete again (404)", async () => {
    const name = `tables${++counter}`;
    await service.createTable(name);
    const raw = await signedFetch(`${server.url}/Tables`, {
      method: "POST",
      body: JSON.stringify({ TableName: name.toUpperCase() }),
    });
    expect(await errorOf(raw)).toMatchObject({
      status: 409,
      code: "TableAlreadyExists",
      bodyCode: "TableAlreadyExists",
    });
    await service.deleteTable(name);
    const gone = await signedFetch(`${server.url}/Tables('${name}')`, { method: "DELETE" });
    expect(await errorOf(gone)).toMatchObject({ status: 404, code: "ResourceNotFound" });
  });

  test("create answers 201 with the table by default and 204 with return-no-content", async () => {
    const name = `created${++counter}`;
    const full = await signedFetch(`${server.url}/Tables`, {
      method: "POST",
      body: JSON.stringify({ TableName: name }),
    });
    expect(full.status).toBe(201);
    expect(await full.json()).toMatchObject({ TableName: name });
    const name2 = `created${++counter}`;
    const none = await signedFetch(`${server.url}/Tables`, {
      method: "POST",
      body: JSON.stringify({ TableName: name2 }),
      headers: { Prefer: "return-no-content" },
    });
    expect(none.status).toBe(204);
  });

  test("listing pages by NextTableName and filters by prefix", async () => {
    const names = ["pagea", "pageb", "pagec", "paged", "pagee"].map((n) => `${n}${++counter}`);
    for (const n of names) await service.createTable(n);
    const pages: string[][] = [];
    const filter = names.map((n) => `TableName eq '${n}'`).join(" or ");
    for await (const page of service.listTables({ queryOptions: { filter } }).byPage({ maxPageSize: 2 })) {
      pages.push(page.map((t) => t.name as string));
    }
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(pages.flat()).toEqual([...names].sort());
  });
});

describe("tableDeleteDelayMs", () => {
  test("re-creating a deleted table within the delay is 409 TableBeingDeleted, as on Azure", async () => {
    // 60 s: far longer than the test, so no clock needs moving (MemoryStore's own test moves one).
    const held = await startTableServer({ port: 0, tableDeleteDelayMs: 60_000 });
    try {
      const client = TableServiceClient.fromConnectionString(held.connectionString, {
        allowInsecureConnection: true,
      });
      await client.createTable("heldname");
      await client.deleteTable("heldname");
      const error = await restError(client.createTable("heldname"));
      expect(error.statusCode).toBe(409);
      expect(codeOf(error)).toBe("TableBeingDeleted");
      expect(error.message).toContain("The specified table is being deleted.");
    } finally {
      await held.close();
    }
    await expect(
      startTableServer({ port: 0, store: new MemoryStore(), tableDeleteDelayMs: 1 }),
    ).rejects.toThrow(ValidationError);
  });
});

describe("entities", () => {
  test("every EDM type round-trips with its type", async () => {
    const table = await freshTable();
    const when = new Date(Date.UTC(2024, 1, 29, 12, 30, 45, 123));
    await table.createEntity({
      partitionKey: "p",
      rowKey: "r",
      s: "text",
      i32: 42,
      i64: { type: "Int64", value: "9007199254740993" },
      whole: { type: "Double", value: "2" },
      frac: 2.5,
      bool: true,
      dt: when,
      guid: { type: "Guid", value: "c9da6455-213d-42c9-9a79-3e9149a57833" },
      bin: new Uint8Array([0, 1, 254, 255]),
    });
    const e = await table.getEntity<Record<string, unknown>>("p", "r", { disableTypeConversion: true });
    expect(e.s).toEqual({ type: "String", value: "text" });
    expect(e.i32).toEqual({ type: "Int32", value: "42" });
    expect(e.i64).toEqual({ type: "Int64", value: "9007199254740993" });
    // A whole Double keeps its type through the annotation (JSON alone would make it an Int32).
    expect(e.whole).toMatchObject({ type: "Double" });
    expect(Number((e.whole as { value: unknown }).value)).toBe(2);
    expect(Number((e.frac as { value: unknown }).value)).toBe(2.5);
    expect(e.bool).toEqual({ type: "Boolean", value: "true" });
    expect(e.dt).toEqual({ type: "DateTime", value: "2024-02-29T12:30:45.1230000Z" });
    expect(e.guid).toEqual({ type: "Guid", value: "c9da6455-213d-42c9-9a79-3e9149a57833" });
    expect(e.bin).toEqual({ type: "Binary", value: Buffer.from([0, 1, 254, 255]).toString("base64") });
  });

  test("keys with quotes, percent signs, spaces and non-ASCII characters address one entity", async () => {
    const table = await freshTable();
    const keys = ["it's", "100%", "a b", "ü𝄞", "''", "(x,y)"];
    for (const k of keys) await table.createEntity({ partitionKey: k, rowKey: k, v: k });
    for (const k of keys) {
      expect((await table.getEntity<{ v: string }>(k, k)).v).toBe(k);
      await table.updateEntity({ partitionKey: k, rowKey: k, w: 1 }, "Merge");
      await table.deleteEntity(k, k);
    }
    const left: unknown[] = [];
    for await (const e of table.listEntities()) left.push(e);
    expect(left).toEqual([]);
  });

  test("insert, update, merge, upsert and delete answer Azure's codes", async () => {
    const table = await freshTable();
    const created = await table.createEntity({ partitionKey: "p", rowKey: "r", a: 1, b: 2 });
    expect(codeOf(await restError(table.createEntity({ partitionKey: "p", rowKey: "r" })))).toBe(
      "EntityAlreadyExists",
    );
    expect(codeOf(await restError(table.updateEntity({ partitionKey: "p", rowKey: "x" }, "Replace")))).toBe(
      "ResourceNotFound",
    );
    await table.updateEntity({ partitionKey: "p", rowKey: "r", c: 3 }, "Merge", {
      etag: created.etag as string,
    });
    const stale = await restError(
      table.updateEntity({ partitionKey: "p", rowKey: "r" }, "Replace", { etag: created.etag as string }),
    );
    expect(stale.statusCode).toBe(412);
    expect(codeOf(stale)).toBe("UpdateConditionNotSatisfied");
    expect(await table.getEntity("p", "r")).toMatchObject({ a: 1, b: 2, c: 3 });
    await table.upsertEntity({ partitionKey: "p", rowKey: "r", d: 4 }, "Replace");
    const replaced = await table.getEntity<Record<string, unknown>>("p", "r");
    expect([replaced.a, replaced.d]).toEqual([undefined, 4]);
    await table.upsertEntity({ partitionKey: "p", rowKey: "r", e: 5 }, "Merge");
    expect(await table.getEntity("p", "r")).toMatchObject({ d: 4, e: 5 });
    expect((await restError(table.deleteEntity("p", "missing"))).statusCode).toBe(404);
    await table.deleteEntity("p", "r");
  });

  test("ETags are W/\"datetime'…'\" with the entity's 7-digit Timestamp", async () => {
    const table = await freshTable();
    const { etag } = await table.createEntity({ partitionKey: "p", rowKey: "r" });
    const e = await table.getEntity<Record<string, unknown>>("p", "r", { disableTypeConversion: true });
    const match = /^W\/"datetime'(.+)'"$/.exec(etag as string);
    expect(match).not.toBeNull();
    const stamp = decodeURIComponent(match![1]!);
    expect(stamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{7}Z$/);
    const timestamp = e.timestamp as string | { value: string };
    expect(typeof timestamp === "string" ? timestamp : timestamp.value).toBe(stamp);
    expect(e.etag).toBe(etag);
  });

  test("a delete without If-Match is refused and changes nothing", async () => {
    const table = await freshTable();
    await table.createEntity({ partitionKey: "p", rowKey: "r" });
    const response = await signedFetch(`${server.url}/${table.tableName}(PartitionKey='p',RowKey='r')`, {
      method: "DELETE",
    });
    expect(response.status).toBe(400);
    expect(await table.getEntity("p", "r")).toMatchObject({ rowKey: "r" });
  });
});

describe("queries", () => {
  // Azure answers $top=0 with 200 and no entities (Azurite #1428); so do Query Entities and Query Tables here.
  test("$top=0 over raw REST is 200 with value []", async () => {
    const table = await freshTable();
    for (const rowKey of ["a", "b"]) await table.createEntity({ partitionKey: "0", rowKey });
    const entities = await signedFetch(
      `${server.url}/${table.tableName}()?%24select=&%24filter=PartitionKey%20eq%20%270%27&%24top=0`,
      { headers: { Accept: "application/json;odata=nometadata" } },
    );
    expect(entities.status).toBe(200);
    expect(await entities.json()).toEqual({ value: [] });
    const tables = await signedFetch(`${server.url}/Tables?%24top=0`, {
      headers: { Accept: "application/json;odata=nometadata" },
    });
    expect(tables.status).toBe(200);
    expect(await tables.json()).toEqual({ value: [] });
  });

  test("pages of at most 1,000, a filter, $select and $top", async () => {
    const table = await freshTable();
    for (let start = 0; start < 2500; start += 100) {
      const tx = new TableTransaction();
      for (let i = start; i < start + 100; i++) {
        tx.createEntity({ partitionKey: "p", rowKey: String(i).padStart(5, "0"), n: i, odd: i % 2 === 1 });
      }
      await table.submitTransaction(tx.actions);
    }
    const sizes: number[] = [];
    for await (const page of table.listEntities().byPage()) sizes.push(page.length);
    expect(sizes).toEqual([1000, 1000, 500]);
    const small: number[] = [];
    for await (const page of table
      .listEntities({ queryOptions: { filter: "n lt 10 and odd eq true" } })
      .byPage({ maxPageSize: 2 })) {
      small.push(page.length);
    }
    expect(small).toEqual([2, 2, 1]);
    const [first] = (
      await table
        .listEntities({ queryOptions: { select: ["n"] } })
        .byPage({ maxPageSize: 1 })
        .next()
    ).value;
    // As Azure answers: only the selected properties (keys and Timestamp too only when named) and the ETag.
    expect(Object.keys(first).sort()).toEqual(["etag", "n"]);
    // A selected property the entity lacks comes as null, as Azure answers it.
    const [withMissing] = (
      await table
        .listEntities({ queryOptions: { select: ["n", "absent"] } })
        .byPage({ maxPageSize: 1 })
        .next()
    ).value;
    expect(withMissing).toHaveProperty("absent", null);
    expect(typeof withMissing.n).toBe("number");
  });

  test("a query spanning partitions may end its page at the partition boundary", async () => {
    const table = await freshTable();
    for (const pk of ["a", "b"]) {
      const tx = new TableTransaction();
      for (let i = 0; i < 3; i++) tx.createEntity({ partitionKey: pk, rowKey: String(i) });
      await table.submitTransaction(tx.actions);
    }
    const pages: string[][] = [];
    for await (const page of table.listEntities().byPage({ maxPageSize: 5 })) {
      pages.push(page.map((e) => `${e.partitionKey}${e.rowKey}`));
    }
    expect(pages.flat()).toEqual(["a0", "a1", "a2", "b0", "b1", "b2"]);
    expect(pages.every((p) => p.length <= 5)).toBe(true);
  });

  test("a malformed filter is 400 InvalidInput", async () => {
    const table = await freshTable();
    const error = await restError(
      table
        .listEntities({ queryOptions: { filter: "n eq" } })
        .byPage()
        .next(),
    );
    expect(error.statusCode).toBe(400);
  });
});

describe("batches", () => {
  test("a batch applies every operation and answers one ETag each", async () => {
    const table = await freshTable();
    await table.createEntity({ partitionKey: "p", rowKey: "u" });
    const tx = new TableTransaction();
    tx.createEntity({ partitionKey: "p", rowKey: "a" });
    tx.upsertEntity({ partitionKey: "p", rowKey: "b", x: 1 }, "Merge");
    tx.updateEntity({ partitionKey: "p", rowKey: "u", y: 2 }, "Replace");
    const result = await table.submitTransaction(tx.actions);
    expect(result.subResponses.map((r) => r.status)).toEqual([204, 204, 204]);
    expect(result.subResponses.every((r) => /^W\/"datetime'/.test(r.etag ?? ""))).toBe(true);
    const keys: string[] = [];
    for await (const e of table.listEntities()) keys.push(e.rowKey as string);
    expect(keys).toEqual(["a", "b", "u"]);
  });

  test("a failing operation fails the whole batch with its index, and nothing is written", async () => {
    const table = await freshTable();
    await table.createEntity({ partitionKey: "p", rowKey: "exists" });
    const tx = new TableTransaction();
    tx.createEntity({ partitionKey: "p", rowKey: "new1" });
    tx.createEntity({ partitionKey: "p", rowKey: "new2" });
    tx.createEntity({ partitionKey: "p", rowKey: "exists" });
    const error = await restError(table.submitTransaction(tx.actions));
    expect(error.statusCode).toBe(409);
    expect(error.code).toBe("EntityAlreadyExists");
    expect(error.message).toMatch(/^2:/);
    const keys: string[] = [];
    for await (const e of table.listEntities()) keys.push(e.rowKey as string);
    expect(keys).toEqual(["exists"]);
  });

  test("operations on two partitions are refused (the SDK checks too; a raw batch reaches the server)", async () => {
    const table = await freshTable();
    const op = (pk: string, rk: string) =>
      `--changeset_c\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n` +
      `POST ${server.url}/${table.tableName} HTTP/1.1\r\nContent-Type: application/json\r\n\r\n` +
      `${JSON.stringify({ PartitionKey: pk, RowKey: rk })}\r\n`;
    const body =
      "--batch_b\r\nContent-Type: multipart/mixed; boundary=changeset_c\r\n\r\n" +
      `${op("p", "a")}${op("q", "b")}--changeset_c--\r\n--batch_b--\r\n`;
    const response = await signedFetch(`${server.url}/$batch`, {
      method: "POST",
      headers: { "Content-Type": "multipart/mixed; boundary=batch_b" },
      body,
    });
    expect(response.status).toBe(202);
    const text = await response.text();
    expect(text).toMatch(/HTTP\/1\.1 400 /);
    expect(text).toMatch(/"value":"1:/);
    const left: unknown[] = [];
    for await (const e of table.listEntities()) left.push(e);
    expect(left).toEqual([]);
  });
});

describe("JSON metadata levels", () => {
  test("nometadata, minimalmetadata and fullmetadata annotate as the service does", async () => {
    const table = await freshTable();
    await table.createEntity({
      partitionKey: "p",
      rowKey: "r",
      i64: { type: "Int64", value: "5" },
      whole: { type: "Double", value: "3" },
      i32: 7,
    });
    const url = `${server.url}/${table.tableName}(PartitionKey='p',RowKey='r')`;
    const read = async (level: string) =>
      (await (
        await signedFetch(url, { headers: { Accept: `application/json;odata=${level}` } })
      ).json()) as Record<string, unknown>;
    const none = await read("nometadata");
    expect(Object.keys(none).filter((k) => k.includes("odata"))).toEqual([]);
    expect(none).toMatchObject({ i64: "5", whole: 3, i32: 7 });
    const minimal = await read("minimalmetadata");
    expect(minimal).toMatchObject({
      "i64@odata.type": "Edm.Int64",
      "whole@odata.type": "Edm.Double",
    });
    expect(minimal["i32@odata.type"]).toBeUndefined();
    // As Azure answers: Timestamp is annotated with full metadata only.
    expect(minimal["Timestamp@odata.type"]).toBeUndefined();
    expect(minimal["odata.etag"]).toMatch(/^W\/"datetime'/);
    expect(minimal["odata.metadata"]).toBe(`${server.url}/$metadata#${table.tableName}/@Element`);
    const full = await read("fullmetadata");
    expect(full).toMatchObject({
      "odata.type": `${ACCOUNT}.${table.tableName}`,
      "i64@odata.type": "Edm.Int64",
      "Timestamp@odata.type": "Edm.DateTime",
    });
    expect(full["odata.id"]).toBe(`${server.url}/${table.tableName}(PartitionKey='p',RowKey='r')`);
  });
});

describe("authentication", () => {
  test("SharedKey and SharedKeyLite are accepted", async () => {
    for (const scheme of ["SharedKey", "SharedKeyLite"] as const) {
      const response = await signedFetch(`${server.url}/Tables`, { scheme });
      expect(response.status).toBe(200);
    }
    const body = JSON.stringify({ TableName: `signed${++counter}` });
    const post = await signedFetch(`${server.url}/Tables`, { method: "POST", body, scheme: "SharedKey" });
    expect(post.status).toBe(201);
  });

  test("wrong keys and stale dates are 403 AuthenticationFailed", async () => {
    const wrongKey = Buffer.alloc(64, 7).toString("base64");
    for (const scheme of ["SharedKey", "SharedKeyLite"] as const) {
      const response = await signedFetch(`${server.url}/Tables`, { scheme, key: wrongKey });
      expect(await errorOf(response)).toMatchObject({ status: 403, code: "AuthenticationFailed" });
    }
    const old = await signedFetch(`${server.url}/Tables`, {
      headers: { "x-ms-date": new Date(Date.now() - 60 * 60 * 1000).toUTCString() },
    });
    expect(old.status).toBe(403);
    const sdk = new TableServiceClient(server.url, new AzureNamedKeyCredential(ACCOUNT, wrongKey), {
      allowInsecureConnection: true,
    });
    expect((await restError(sdk.createTable(`nope${++counter}`))).statusCode).toBe(403);
    expect((await service.listTables().byPage().next()).done).toBe(false);
  });

  test("a signed write that fails authentication changes nothing", async () => {
    const table = await freshTable();
    const response = await signedFetch(`${server.url}/${table.tableName}`, {
      method: "POST",
      body: JSON.stringify({ PartitionKey: "p", RowKey: "r" }),
      key: Buffer.alloc(64, 1).toString("base64"),
    });
    expect(response.status).toBe(403);
    expect((await restError(table.getEntity("p", "r"))).statusCode).toBe(404);
  });
});

describe("malformed input", () => {
  test("bad JSON, bad addresses and unknown verbs get the service's 4xx, and the server keeps serving", async () => {
    const table = await freshTable();
    const base = `${server.url}/${table.tableName}`;
    const cases: [string, { method?: string; body?: string }, number][] = [
      [base, { method: "POST", body: "{not json" }, 400],
      [base, { method: "POST", body: "[1,2]" }, 400],
      [base, { method: "POST", body: JSON.stringify({ PartitionKey: "p", RowKey: "r", o: { a: 1 } }) }, 400],
      [
        base,
        {
          method: "POST",
          body: JSON.stringify({ PartitionKey: "p", RowKey: "r", "x@odata.type": "Edm.Nope", x: 1 }),
        },
        400,
      ],
      [`${base}(PartitionKey='p)`, {}, 400],
      [`${base}(PartitionKey='p',RowKey='r',Extra='x')`, {}, 400],
      [
        `${base}(PartitionKey='p',RowKey='r')`,
        { method: "PUT", body: JSON.stringify({ PartitionKey: "other" }) },
        400,
      ],
      [`${server.url}/Tables('a')`, { method: "GET" }, 405],
      [`${base}?$top=1001`, {}, 400],
      [`${base}?NextPartitionKey=1!99!abc`, {}, 400],
      [`${server.url}/%E0%A4%A`, {}, 400],
    ];
    for (const [url, init, status] of cases) {
      const response = await signedFetch(url, init);
      const error = await errorOf(response);
      expect({ url, status: error.status }).toEqual({ url, status });
      expect(error.code).toBe(error.bodyCode);
    }
    const left: unknown[] = [];
    for await (const e of table.listEntities()) left.push(e);
    expect(left).toEqual([]);
  });

  test("a body over 4 MiB is 413 RequestBodyTooLarge", async () => {
    const table = await freshTable();
    const response = await signedFetch(`${server.url}/${table.tableName}`, {
      method: "POST",
      body: JSON.stringify({ PartitionKey: "p", RowKey: "r", s: "x".repeat(4 * 1024 * 1024) }),
    });
    expect(await errorOf(response)).toMatchObject({ status: 413, code: "RequestBodyTooLarge" });
  });

  test("a batch body over 4 MiB is 413 although its JSON alone is under it, and writes nothing", async () => {
    const table = await freshTable();
    const json = (rowKey: string) =>
      JSON.stringify({ PartitionKey: "p", RowKey: rowKey, s: "x".repeat(1024 * 1024 - 100) });
    const parts = ["a", "b", "c", "d"].map(
      (rowKey) =>
        "--changeset_b\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
        `POST ${server.url}/${table.tableName} HTTP/1.1\r\nContent-Type: application/json\r\n\r\n${json(rowKey)}\r\n`,
    );
    const body = `--batch_b\r\nContent-Type: multipart/mixed; boundary=changeset_b\r\n\r\n${parts.join("")}--changeset_b--\r\n--batch_b--\r\n`;
    expect(["a", "b", "c", "d"].map(json).join("").length).toBeLessThan(4 * 1024 * 1024);
    expect(Buffer.byteLength(body)).toBeGreaterThan(4 * 1024 * 1024);
    const response = await signedFetch(`${server.url}/$batch`, {
      method: "POST",
      headers: { "Content-Type": "multipart/mixed; boundary=batch_b" },
      body,
    });
    expect(await errorOf(response)).toMatchObject({ status: 413, code: "RequestBodyTooLarge" });
    expect(await table.getEntity("p", "a").catch((e: RestError) => e.statusCode)).toBe(404);
  });

  /**
   * A raw `$batch` of 100 inserts with lean part headers (what a client other than the JavaScript SDK may
   * send), padded to exactly `total` bytes. Each entity has two strings (a String is at most 32 Ki characters).
   */
  function leanBatch(tableName: string, total: number): string {
    const part = (rowKey: string, a: string, b: string) =>
      "--changeset_l\r\nContent-Type: application/http\r\n\r\n" +
      `POST ${server.url}/${tableName} HTTP/1.1\r\nContent-Type: application/json\r\n\r\n` +
      `${JSON.stringify({ PartitionKey: "p", RowKey: rowKey, a, b })}\r\n`;
    const open = "--batch_l\r\nContent-Type: multipart/mixed; boundary=changeset_l\r\n\r\n";
    const close = "--changeset_l--\r\n--batch_l--\r\n";
    const rowKeys = Array.from({ length: 100 }, (_, i) => String(i).padStart(3, "0"));
    const frame = open.length + close.length + rowKeys.reduce((n, rk) => n + part(rk, "", "").length, 0);
    // The padding is ASCII: characters are bytes. Spread over 200 strings, the rest on the first ones.
    const padding = total - frame;
    const each = Math.floor(padding / 200);
    let extra = padding - each * 200;
    const pad = () => "x".repeat(each + (extra-- > 0 ? 1 : 0));
    const body = open + rowKeys.map((rk) => part(rk, pad(), pad())).join("") + close;
    expect(Buffer.byteLength(body)).toBe(total);
    return body;
  }

  test("a raw batch is judged by the bytes received: 4,190,000 bytes of lean parts are applied, 4,250,000 are a top-level 413", async () => {
    const table = await freshTable();
    const headers = { "Content-Type": "multipart/mixed; boundary=batch_l" };
    // Under 4 MiB (4,194,304) as received, although the SDK's own headers would take the same
    // operations over it: the store behind the server must not size it again as the SDK would write it.
    const under = await signedFetch(`${server.url}/$batch`, {
      method: "POST",
      headers,
      body: leanBatch(table.tableName, 4_190_000),
    });
    expect(under.status).toBe(202);
    const answer = await under.text();
    expect(answer.match(/HTTP\/1\.1 201 Created/g)).toHaveLength(100);
    const rows: unknown[] = [];
    for await (const e of table.listEntities()) rows.push(e);
    expect(rows).toHaveLength(100);

    const other = await freshTable();
    const over = await signedFetch(`${server.url}/$batch`, {
      method: "POST",
      headers,
      body: leanBatch(other.tableName, 4_250_000),
    });
    // The response's own status, not a 413 inside a 202 changeset answer.
    expect(await errorOf(over)).toMatchObject({
      status: 413,
      code: "RequestBodyTooLarge",
      bodyCode: "RequestBodyTooLarge",
    });
    const none: unknown[] = [];
    for await (const e of other.listEntities()) none.push(e);
    expect(none).toEqual([]);
  });

  test("the SDK's transaction over 4 MiB meets 413 RequestBodyTooLarge (answered early, read cleanly)", async () => {
    const table = await freshTable();
    // 100 inserts whose JSON alone is just under 4 MiB; the multipart framing takes the body over.
    const per = Math.floor((4 * 1024 * 1024 - 100 * 120) / 100) - 60;
    const actions: TransactionAction[] = Array.from({ length: 100 }, (_, i) => [
      "create",
      { partitionKey: "p", rowKey: `r${i}`, s: "x".repeat(per) },
    ]);
    expect(actions.reduce((n, [, e]) => n + JSON.stringify(e).length, 0)).toBeLessThan(4 * 1024 * 1024);
    const error = await restError(table.submitTransaction(actions));
    expect(error.statusCode).toBe(413);
    expect(codeOf(error)).toBe("RequestBodyTooLarge");
    expect((await table.listEntities().byPage().next()).value).toEqual([]);
  });

  test("a chunked upload is answered 413 once it crosses 4 MiB, before it ends", async () => {
    const table = await freshTable();
    const url = `${server.url}/${table.tableName}`;
    // No Content-Length: the body comes in chunks, and the answer must not wait for the last one.
    const request = httpRequest(url, {
      method: "POST",
      headers: signedHeaders(url, { method: "POST", hasBody: true }),
    });
    const answered = new Promise<IncomingMessage>((resolve, reject) => {
      request.once("response", resolve);
      request.once("error", reject);
    });
    request.write(`{"PartitionKey":"p","RowKey":"r","s":"`);
    const chunk = "x".repeat(64 * 1024);
    for (let sent = 0; sent <= 4 * 1024 * 1024; sent += chunk.length) request.write(chunk);
    const response = await answered;
    let text = "";
    for await (const piece of response) text += String(piece);
    expect(response.statusCode).toBe(413);
    expect(response.headers["x-ms-error-code"]).toBe("RequestBodyTooLarge");
    expect(JSON.parse(text)["odata.error"].code).toBe("RequestBodyTooLarge");
    request.end(`"}`);
  });

  test("a malformed multipart batch is 400 and writes nothing", async () => {
    const table = await freshTable();
    const response = await signedFetch(`${server.url}/$batch`, {
      method: "POST",
      headers: { "Content-Type": "multipart/mixed; boundary=batch_x" },
      body: "--batch_x\r\nContent-Type: text/plain\r\n\r\nhello\r\n--batch_x--\r\n",
    });
    expect(response.status).toBe(400);
    const left: unknown[] = [];
    for await (const e of table.listEntities()) left.push(e);
    expect(left).toEqual([]);
  });
});

describe("startTableServer options", () => {
  test("bad options are ValidationErrors before anything listens", async () => {
    const bad: unknown[] = [
      { port: -1 },
      { port: 1.5 },
      { account: "Bad_Name" },
      { key: "not base64!" },
      { store: new MemoryStore({ flavor: "cosmos" }) },
      { store: {} },
    ];
    for (const options of bad) {
      const error = await startTableServer(options as never).then(
        (s) => s.close().then(() => undefined),
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ValidationError);
    }
  });

  test("another account and key: signatures are checked against them", async () => {
    const key = Buffer.alloc(32, 9).toString("base64");
    const other = await startTableServer({ port: 0, account: "myaccount", key });
    try {
      expect(other.url).toBe(`http://127.0.0.1:${other.port}/myaccount`);
      const client = TableServiceClient.fromConnectionString(other.connectionString, {
        allowInsecureConnection: true,
      });
      await client.createTable("other");
      const wrong = new TableServiceClient(
        other.url,
        new AzureNamedKeyCredential("myaccount", Buffer.alloc(32, 8).toString("base64")),
        {
          allowInsecureConnection: true,
        },
      );
      expect((await restError(wrong.createTable("other2"))).statusCode).toBe(403);
    } finally {
      await other.close();
    }
  });
});
