import { AzureNamedKeyCredential, TableClient, TableServiceClient } from "@azure/data-tables";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startTableServer, type TableServer } from "../../src/index.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { ACCOUNT, KEY, signedFetch } from "./signed-fetch.js";

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
    expect(named["Timestamp@odata.type"]).toBe("Edm.DateTime");
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
