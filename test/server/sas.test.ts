import {
  AzureNamedKeyCredential,
  AzureSASCredential,
  generateAccountSas,
  generateTableSas,
  RestError,
  TableClient,
  TableServiceClient,
} from "@azure/data-tables";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startTableServer, type TableServer } from "../../src/index.js";
import { ACCOUNT, KEY } from "./signed-fetch.js";

// Shared access signatures made by the SDK's own generators, against `tablekit serve`.
let server: TableServer;
const credential = new AzureNamedKeyCredential(ACCOUNT, KEY);
const HOUR = 60 * 60 * 1000;

beforeAll(async () => {
  server = await startTableServer({ port: 0 });
  const owner = TableClient.fromConnectionString(server.connectionString, "sastable", {
    allowInsecureConnection: true,
  });
  await owner.createTable();
  for (const pk of ["a", "b", "c"]) {
    for (const rk of ["1", "2", "3"]) await owner.createEntity({ partitionKey: pk, rowKey: rk });
  }
});
afterAll(async () => {
  await server.close();
});

function sasClient(sas: string, table = "sastable"): TableClient {
  return new TableClient(server.url, table, new AzureSASCredential(sas), { allowInsecureConnection: true });
}

async function status(promise: Promise<unknown>): Promise<number | undefined> {
  return promise.then(
    () => 200,
    (e: unknown) => (e instanceof RestError ? e.statusCode : -1),
  );
}

async function keys(client: TableClient): Promise<string[]> {
  const out: string[] = [];
  for await (const e of client.listEntities()) out.push(`${e.partitionKey}${e.rowKey}`);
  return out;
}

describe("table SAS", () => {
  test("read-only: queries and point reads pass, writes are 403", async () => {
    const sas = generateTableSas("sastable", credential, {
      permissions: { query: true },
      expiresOn: new Date(Date.now() + HOUR),
    });
    const client = sasClient(sas);
    expect((await keys(client)).length).toBe(9);
    expect(await status(client.getEntity("a", "1"))).toBe(200);
    expect(await status(client.createEntity({ partitionKey: "a", rowKey: "9" }))).toBe(403);
    expect(await status(client.deleteEntity("a", "1"))).toBe(403);
    expect(await status(sasClient(sas, "othertable").getEntity("a", "1"))).toBe(403);
  });

  test("key ranges are enforced: queries see only the range, point operations outside it are 403", async () => {
    const sas = generateTableSas("sastable", credential, {
      permissions: { query: true, add: true, update: true, delete: true },
      expiresOn: new Date(Date.now() + HOUR),
      startPartitionKey: "a",
      startRowKey: "2",
      endPartitionKey: "b",
      endRowKey: "2",
    });
    const client = sasClient(sas);
    expect(await keys(client)).toEqual(["a2", "a3", "b1", "b2"]);
    expect(await status(client.getEntity("a", "1"))).toBe(403);
    expect(await status(client.getEntity("b", "3"))).toBe(403);
    expect(await status(client.getEntity("a", "3"))).toBe(200);
    expect(await status(client.upsertEntity({ partitionKey: "c", rowKey: "1", x: 1 }))).toBe(403);
    expect(await status(client.upsertEntity({ partitionKey: "b", rowKey: "1", x: 1 }))).toBe(200);
    expect(await status(client.submitTransaction([["upsert", { partitionKey: "c", rowKey: "9" }]]))).toBe(
      403,
    );
  });

  test("an expired SAS, a SAS not yet valid and a tampered signature are 403", async () => {
    const expired = generateTableSas("sastable", credential, {
      permissions: { query: true },
      expiresOn: new Date(Date.now() - HOUR),
    });
    expect(await status(sasClient(expired).getEntity("a", "1"))).toBe(403);
    const future = generateTableSas("sastable", credential, {
      permissions: { query: true },
      startsOn: new Date(Date.now() + HOUR),
      expiresOn: new Date(Date.now() + 2 * HOUR),
    });
    expect(await status(sasClient(future).getEntity("a", "1"))).toBe(403);
    const valid = generateTableSas("sastable", credential, {
      permissions: { query: true, add: true },
      expiresOn: new Date(Date.now() + HOUR),
    });
    const tampered = valid.replace(/sp=[a-z]+/, "sp=raud");
    expect(await status(sasClient(tampered).deleteEntity("a", "1"))).toBe(403);
  });
});

describe("account SAS", () => {
  test("resource types and permissions decide what the token may do", async () => {
    const expiresOn = new Date(Date.now() + HOUR);
    const objectsOnly = generateAccountSas(credential, {
      expiresOn,
      permissions: { query: true, list: true },
      resourceTypes: "o",
    });
    expect((await keys(sasClient(objectsOnly))).length).toBeGreaterThanOrEqual(9);
    const service = new TableServiceClient(server.url, new AzureSASCredential(objectsOnly), {
      allowInsecureConnection: true,
    });
    expect(await status(service.createTable("sasmade"))).toBe(403);
    const containers = generateAccountSas(credential, {
      expiresOn,
      permissions: { add: true, list: true },
      resourceTypes: "c",
    });
    const service2 = new TableServiceClient(server.url, new AzureSASCredential(containers), {
      allowInsecureConnection: true,
    });
    expect(await status(service2.createTable("sasmade"))).toBe(200);
    expect(await status(sasClient(containers).getEntity("a", "1"))).toBe(403);
  });
});
