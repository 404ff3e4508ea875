import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startTableServer, type TableServer } from "../../src/index.js";
import { azuriteConnectionString } from "../support/azurite.js";
import { azuriteSelected } from "../support/stores.js";
import { errorOf, signedFetch } from "./signed-fetch.js";

// Requests with neither an Authorization header nor a SAS. The Table service allows no anonymous access;
// it answers with the storage front end's codes for an unauthenticated request: 401
// NoAuthenticationInformation with a bearer challenge from version 2019-12-12, and 404 ResourceNotFound
// for older versions (the official SDKs send 2019-02-02). Azurite answers 403 AuthorizationFailure.
let server: TableServer;

beforeAll(async () => {
  server = await startTableServer({ port: 0 });
});
afterAll(async () => {
  await server.close();
});

const anonymous = (path: string, version: string, init: { method?: string; body?: string } = {}) =>
  signedFetch(`${server.url}${path}`, { ...init, scheme: "none", headers: { "x-ms-version": version } });

describe("anonymous requests", () => {
  test("versions before 2019-12-12: 404 ResourceNotFound, on every kind of resource", async () => {
    for (const path of [
      "/Tables",
      "/sometable()",
      "/sometable(PartitionKey='p',RowKey='r')",
      "/?restype=service&comp=properties",
    ]) {
      expect(await errorOf(await anonymous(path, "2019-02-02")), path).toMatchObject({
        status: 404,
        code: "ResourceNotFound",
        bodyCode: "ResourceNotFound",
      });
    }
  });

  test("2019-12-12 and later: 401 NoAuthenticationInformation with a bearer challenge", async () => {
    const response = await anonymous("/Tables", "2020-12-06");
    expect(response.headers.get("www-authenticate")).toMatch(
      /^Bearer authorization_uri=https:\/\/login\.microsoftonline\.com\/.+ resource_id=https:\/\/storage\.azure\.com$/,
    );
    expect(await errorOf(response)).toMatchObject({ status: 401, code: "NoAuthenticationInformation" });
  });

  test("an anonymous write changes nothing", async () => {
    const created = await signedFetch(`${server.url}/Tables`, {
      method: "POST",
      body: JSON.stringify({ TableName: "anonwrites" }),
    });
    expect(created.status).toBe(201);
    const write = await anonymous("/anonwrites", "2019-02-02", {
      method: "POST",
      body: JSON.stringify({ PartitionKey: "p", RowKey: "r" }),
    });
    expect(write.status).toBe(404);
    const table = await anonymous("/Tables", "2019-02-02", {
      method: "POST",
      body: JSON.stringify({ TableName: "anonmade" }),
    });
    expect(table.status).toBe(404);
    const read = await signedFetch(`${server.url}/anonwrites()`);
    expect(((await read.json()) as { value: unknown[] }).value).toEqual([]);
    const tables = (await (await signedFetch(`${server.url}/Tables`)).json()) as {
      value: { TableName: string }[];
    };
    expect(tables.value.map((t) => t.TableName)).not.toContain("anonmade");
  });

  test.skipIf(!azuriteSelected)(
    "Azurite refuses them too, with 403 AuthorizationFailure (needs Azurite)",
    async () => {
      const endpoint = /TableEndpoint=([^;]+)/.exec(azuriteConnectionString())?.[1] as string;
      const response = await fetch(`${endpoint}/Tables`, { headers: { "x-ms-version": "2019-02-02" } });
      expect(response.status).toBe(403);
      expect(response.headers.get("x-ms-error-code")).toBe("AuthorizationFailure");
    },
  );
});
