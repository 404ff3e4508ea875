import { createHmac } from "node:crypto";
import {
  AzureNamedKeyCredential,
  AzureSASCredential,
  generateAccountSas,
  generateTableSas,
  RestError,
  TableClient,
  TableServiceClient,
} from "@azure/data-tables";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startTableServer, type TableServer } from "../../src/index.js";
import { azuriteConnectionString } from "../support/azurite.js";
import { testSeed } from "../support/seeded-random.js";
import { azuriteSelected } from "../support/stores.js";
import { ACCOUNT, errorOf, KEY, signedFetch } from "./signed-fetch.js";

// Get/Set Table ACL and the stored access policies a table SAS names (si), through the raw SDK.
let server: TableServer;
let service: TableServiceClient;
let counter = 0;
const credential = new AzureNamedKeyCredential(ACCOUNT, KEY);
const SEED = testSeed(1212);
const MINUTE = 60 * 1000;
const HOUR = 60 * MINUTE;

beforeAll(async () => {
  server = await startTableServer({ port: 0 });
  service = TableServiceClient.fromConnectionString(server.connectionString, {
    allowInsecureConnection: true,
  });
});
afterAll(async () => {
  await server.close();
});

async function freshTable(connectionString = server.connectionString): Promise<TableClient> {
  const name = `acl${++counter}x${Date.now() % 100000}`;
  const client = TableClient.fromConnectionString(connectionString, name, { allowInsecureConnection: true });
  await client.createTable();
  await client.createEntity({ partitionKey: "p", rowKey: "1", v: 1 });
  return client;
}

async function outcome(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => "ok",
    (e: unknown) =>
      e instanceof RestError
        ? `${e.statusCode} ${String((e.details as { errorCode?: string } | undefined)?.errorCode ?? e.code)}`
        : `thrown ${String(e)}`,
  );
}

const aclUrl = (table: TableClient) => `${server.url}/${table.tableName}?comp=acl`;

function sasClient(table: TableClient, sas: string): TableClient {
  return new TableClient(table.url, table.tableName, new AzureSASCredential(sas), {
    allowInsecureConnection: true,
  });
}

describe("Get/Set Table ACL", () => {
  test("policies are read back as set, times in the service's seven-digit form; empty ones as bare ids", async () => {
    const table = await freshTable();
    expect(await table.getAccessPolicy()).toHaveLength(0);
    await table.setAccessPolicy([
      {
        id: "full",
        accessPolicy: {
          start: new Date("2030-01-02T03:04:05Z"),
          expiry: new Date("2030-02-02T03:04:05Z"),
          permission: "raud",
        },
      },
      { id: "partial", accessPolicy: { permission: "r" } },
      { id: "empty" },
    ]);
    const acl = await table.getAccessPolicy();
    expect(acl.map((entry) => entry.id)).toEqual(["full", "partial", "empty"]);
    expect(acl[0]?.accessPolicy).toMatchObject({ permission: "raud" });
    expect(acl[0]?.accessPolicy?.start?.toISOString()).toBe("2030-01-02T03:04:05.000Z");
    expect(acl[1]?.accessPolicy).toEqual({ permission: "r" });
    expect(acl[2]?.accessPolicy ?? {}).toEqual({});
    const raw = await (await signedFetch(aclUrl(table))).text();
    expect(raw).toContain(
      "<Start>2030-01-02T03:04:05.0000000Z</Start><Expiry>2030-02-02T03:04:05.0000000Z</Expiry>",
    );
    expect(raw).toContain("<SignedIdentifier><Id>empty</Id></SignedIdentifier>");
    // Other offsets and precisions are kept to the tick and written in UTC.
    const put = await signedFetch(aclUrl(table), {
      method: "PUT",
      headers: { "Content-Type": "application/xml" },
      body: "<SignedIdentifiers><SignedIdentifier><Id>t</Id><AccessPolicy><Start>2030-01-02T05:04:05.1234567+02:00</Start><Expiry>2030-01-03</Expiry></AccessPolicy></SignedIdentifier></SignedIdentifiers>",
    });
    expect(put.status).toBe(204);
    expect(await (await signedFetch(aclUrl(table))).text()).toContain(
      "<Start>2030-01-02T03:04:05.1234567Z</Start><Expiry>2030-01-03T00:00:00.0000000Z</Expiry>",
    );
    // A set replaces the whole list; an empty list clears it.
    await table.setAccessPolicy([{ id: "only", accessPolicy: { permission: "a" } }]);
    expect((await table.getAccessPolicy()).map((entry) => entry.id)).toEqual(["only"]);
    await table.setAccessPolicy([]);
    expect(await table.getAccessPolicy()).toHaveLength(0);
  });

  test("invalid lists get the service's 400 and leave the stored list alone; a missing table is 404", async () => {
    const table = await freshTable();
    await table.setAccessPolicy([{ id: "kept", accessPolicy: { permission: "r" } }]);
    const six = Array.from({ length: 6 }, (_, i) => ({ id: `p${i}`, accessPolicy: { permission: "r" } }));
    expect(await outcome(table.setAccessPolicy(six))).toBe("400 InvalidXmlDocument");
    expect(await outcome(table.setAccessPolicy([{ id: "x", accessPolicy: { permission: "rw" } }]))).toBe(
      "400 InvalidXmlDocument",
    );
    expect(await outcome(table.setAccessPolicy([{ id: "x".repeat(65) }]))).toBe("400 InvalidXmlDocument");
    const put = (body: string) =>
      signedFetch(aclUrl(table), { method: "PUT", body, headers: { "Content-Type": "application/xml" } });
    expect(await errorOf(await put("<SignedIdentifiers><SignedIdentifier>"))).toMatchObject({
      status: 400,
      code: "InvalidXmlDocument",
    });
    expect(
      await errorOf(
        await put(
          "<SignedIdentifiers><SignedIdentifier><Id>a</Id><AccessPolicy><Start>tomorrow</Start></AccessPolicy></SignedIdentifier></SignedIdentifiers>",
        ),
      ),
    ).toMatchObject({ status: 400, code: "InvalidXmlNodeValue" });
    expect((await table.getAccessPolicy()).map((entry) => entry.id)).toEqual(["kept"]);
    const missing = TableClient.fromConnectionString(server.connectionString, "nosuchtable", {
      allowInsecureConnection: true,
    });
    expect(await outcome(missing.getAccessPolicy())).toBe("404 TableNotFound");
    expect(await outcome(missing.setAccessPolicy([]))).toBe("404 TableNotFound");
  });

  test(`arbitrary and mutated ACL bodies never crash the server or half-apply (seed ${SEED})`, async () => {
    const table = await freshTable();
    const valid =
      '<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers><SignedIdentifier><Id>a</Id><AccessPolicy><Start>2030-01-02T03:04:05.0000000Z</Start><Expiry>2030-02-02T03:04:05Z</Expiry><Permission>raud</Permission></AccessPolicy></SignedIdentifier><SignedIdentifier><Id>b</Id></SignedIdentifier></SignedIdentifiers>';
    const mutated = fc
      .tuple(fc.nat({ max: valid.length }), fc.nat({ max: 12 }), fc.string({ maxLength: 6 }))
      .map(([at, drop, insert]) => valid.slice(0, at) + insert + valid.slice(at + drop));
    const kept = [{ id: "kept", accessPolicy: { permission: "r" } }];
    await fc.assert(
      fc.asyncProperty(fc.oneof(mutated, fc.string({ maxLength: 60 })), async (body) => {
        await table.setAccessPolicy(kept);
        const answer = await errorOf(
          await signedFetch(aclUrl(table), {
            method: "PUT",
            body,
            headers: { "Content-Type": "application/xml" },
          }),
        );
        expect([204, 400]).toContain(answer.status);
        if (answer.status === 400) {
          expect(["InvalidXmlDocument", "InvalidXmlNodeValue"]).toContain(answer.code);
          expect((await table.getAccessPolicy()).map((entry) => entry.id)).toEqual(["kept"]);
        } else {
          // Whatever was accepted reads back as well-formed XML of at most five policies.
          expect((await table.getAccessPolicy()).length).toBeLessThanOrEqual(5);
        }
      }),
      { seed: SEED, numRuns: 120 },
    );
  });

  test("a deleted table's policies go with it: the table created again under its name has none", async () => {
    const table = await freshTable();
    await table.setAccessPolicy([{ id: "old", accessPolicy: { permission: "r" } }]);
    await service.deleteTable(table.tableName);
    await service.createTable(table.tableName);
    expect(await table.getAccessPolicy()).toHaveLength(0);
  });

  test.skipIf(!azuriteSelected)("Azurite reads back the same full policies (needs Azurite)", async () => {
    const policies = [
      {
        id: "a",
        accessPolicy: {
          start: new Date("2030-01-02T03:04:05Z"),
          expiry: new Date("2030-02-02T03:04:05Z"),
          permission: "raud",
        },
      },
      {
        id: "b",
        accessPolicy: {
          start: new Date("2031-01-02T03:04:05Z"),
          expiry: new Date("2031-02-02T03:04:05Z"),
          permission: "r",
        },
      },
    ];
    const ours = await freshTable();
    const theirs = await freshTable(azuriteConnectionString());
    try {
      await ours.setAccessPolicy(policies);
      await theirs.setAccessPolicy(policies);
      expect(await ours.getAccessPolicy()).toEqual(await theirs.getAccessPolicy());
    } finally {
      await theirs.deleteTable();
    }
  });
});

describe("SAS with a stored access policy (si)", () => {
  test("the policy supplies what the token leaves out: permissions, start and expiry", async () => {
    const table = await freshTable();
    await table.setAccessPolicy([
      { id: "readers", accessPolicy: { permission: "r", expiry: new Date(Date.now() + HOUR) } },
      { id: "window", accessPolicy: { start: new Date(Date.now() - MINUTE) } },
    ]);
    const readers = sasClient(
      table,
      generateTableSas(table.tableName, credential, { identifier: "readers" }),
    );
    expect(await outcome(readers.getEntity("p", "1"))).toBe("ok");
    expect(await outcome(readers.createEntity({ partitionKey: "p", rowKey: "2" }))).toBe(
      "403 AuthorizationPermissionMismatch",
    );
    // The token may give what the policy lacks.
    const window = sasClient(
      table,
      generateTableSas(table.tableName, credential, {
        identifier: "window",
        permissions: { query: true, add: true },
        expiresOn: new Date(Date.now() + HOUR),
      }),
    );
    expect(await outcome(window.createEntity({ partitionKey: "p", rowKey: "3" }))).toBe("ok");
  });

  test("an unknown policy, a field given twice or by neither side, and a policy outside its window are 403", async () => {
    const table = await freshTable();
    await table.setAccessPolicy([
      { id: "readers", accessPolicy: { permission: "r", expiry: new Date(Date.now() + HOUR) } },
      { id: "expired", accessPolicy: { permission: "r", expiry: new Date(Date.now() - MINUTE) } },
      {
        id: "later",
        accessPolicy: {
          permission: "r",
          start: new Date(Date.now() + HOUR),
          expiry: new Date(Date.now() + 2 * HOUR),
        },
      },
      { id: "nopermission", accessPolicy: { expiry: new Date(Date.now() + HOUR) } },
    ]);
    const read = (values: Parameters<typeof generateTableSas>[2]) =>
      outcome(sasClient(table, generateTableSas(table.tableName, credential, values)).getEntity("p", "1"));
    expect(await read({ identifier: "nosuch" })).toBe("403 AuthenticationFailed");
    expect(await read({ identifier: "Readers" })).toBe("403 AuthenticationFailed");
    expect(await read({ identifier: "readers", permissions: { query: true } })).toBe(
      "403 AuthenticationFailed",
    );
    expect(await read({ identifier: "readers", expiresOn: new Date(Date.now() + HOUR) })).toBe(
      "403 AuthenticationFailed",
    );
    expect(await read({ identifier: "expired" })).toBe("403 AuthenticationFailed");
    expect(await read({ identifier: "later" })).toBe("403 AuthenticationFailed");
    expect(await read({ identifier: "nopermission" })).toBe("403 AuthenticationFailed");
  });

  test("changing or removing the policy changes or revokes every token that names it", async () => {
    const table = await freshTable();
    await table.setAccessPolicy([
      { id: "p", accessPolicy: { permission: "r", expiry: new Date(Date.now() + HOUR) } },
    ]);
    const client = sasClient(table, generateTableSas(table.tableName, credential, { identifier: "p" }));
    expect(await outcome(client.getEntity("p", "1"))).toBe("ok");
    await table.setAccessPolicy([
      { id: "p", accessPolicy: { permission: "a", expiry: new Date(Date.now() + HOUR) } },
    ]);
    expect(await outcome(client.getEntity("p", "1"))).toBe("403 AuthorizationPermissionMismatch");
    await table.setAccessPolicy([]);
    expect(await outcome(client.getEntity("p", "1"))).toBe("403 AuthenticationFailed");
  });

  test("a token naming a policy must name its table (tn); once the policy drops a permission, the write is 403 AuthorizationPermissionMismatch", async () => {
    // Azurite's sas test 9, built by hand from "Create a service SAS" (string-to-sign fields in order).
    const table = await freshTable();
    const expiry = new Date(Date.now() + HOUR);
    const start = new Date("2017-12-31T11:22:33.4567890Z");
    await table.setAccessPolicy([{ id: "someacl", accessPolicy: { permission: "raud", start, expiry } }]);
    const token = (withTableName: boolean) => {
      const toSign = [
        "",
        "",
        "",
        `/table/${ACCOUNT}/${table.tableName.toLowerCase()}`,
        "someacl",
        "",
        "https,http",
        "2020-10-02",
        "",
        "",
        "",
        "",
      ].join("\n");
      const sig = createHmac("sha256", Buffer.from(KEY, "base64")).update(toSign, "utf8").digest("base64");
      const tn = withTableName ? `&tn=${table.tableName}` : "";
      return `sv=2020-10-02${tn}&si=someacl&spr=https%2Chttp&sig=${encodeURIComponent(sig)}`;
    };
    // Without tn (as Azurite's test sends it) the token is no table SAS: the service requires tn.
    expect(
      await outcome(sasClient(table, token(false)).createEntity({ partitionKey: "a", rowKey: "1" })),
    ).toBe("403 AuthenticationFailed");
    const client = sasClient(table, token(true));
    expect(await outcome(client.createEntity({ partitionKey: "a", rowKey: "1" }))).toBe("ok");
    await table.setAccessPolicy([{ id: "someacl", accessPolicy: { permission: "r", start, expiry } }]);
    expect(await outcome(client.createEntity({ partitionKey: "a", rowKey: "2" }))).toBe(
      "403 AuthorizationPermissionMismatch",
    );
    expect(await outcome(table.getEntity("a", "2"))).toBe("404 ResourceNotFound");
    expect(await outcome(client.getEntity("a", "1"))).toBe("ok");
  });

  test.skipIf(!azuriteSelected)(
    "Azurite also honours a policy-only token and refuses an unknown one (needs Azurite)",
    async () => {
      const table = await freshTable(azuriteConnectionString());
      try {
        await table.setAccessPolicy([
          {
            id: "readers",
            accessPolicy: {
              permission: "r",
              start: new Date(Date.now() - MINUTE),
              expiry: new Date(Date.now() + HOUR),
            },
          },
        ]);
        const ok = sasClient(table, generateTableSas(table.tableName, credential, { identifier: "readers" }));
        expect(await outcome(ok.getEntity("p", "1"))).toBe("ok");
        const unknown = sasClient(
          table,
          generateTableSas(table.tableName, credential, { identifier: "nosuch" }),
        );
        // Azurite answers 403 AuthorizationFailure; the service's own code is AuthenticationFailed.
        expect(await outcome(unknown.getEntity("p", "1"))).toMatch(/^403 /);
      } finally {
        await table.deleteTable();
      }
    },
  );

  test("only an account SAS for containers (r to read, w to set) reaches a table's ACL; a table SAS never does", async () => {
    const table = await freshTable();
    const tableSas = generateTableSas(table.tableName, credential, {
      permissions: { query: true, add: true, update: true, delete: true },
      expiresOn: new Date(Date.now() + HOUR),
    });
    expect(await outcome(sasClient(table, tableSas).getAccessPolicy())).toBe("403 AuthorizationFailure");
    const account = (resourceTypes: string, permissions: { query?: boolean; write?: boolean }) =>
      sasClient(
        table,
        generateAccountSas(credential, {
          resourceTypes,
          permissions,
          expiresOn: new Date(Date.now() + HOUR),
        }),
      );
    expect(await outcome(account("c", { query: true }).getAccessPolicy())).toBe("ok");
    expect(await outcome(account("c", { query: true }).setAccessPolicy([]))).toBe(
      "403 AuthorizationPermissionMismatch",
    );
    expect(await outcome(account("c", { write: true }).setAccessPolicy([]))).toBe("ok");
    expect(await outcome(account("o", { query: true, write: true }).getAccessPolicy())).toBe(
      "403 AuthorizationResourceTypeMismatch",
    );
  });

  test("an account SAS for the service reads the properties with r and sets them with w", async () => {
    const client = (resourceTypes: string, permissions: { query?: boolean; write?: boolean }) =>
      new TableServiceClient(
        server.url,
        new AzureSASCredential(
          generateAccountSas(credential, {
            resourceTypes,
            permissions,
            expiresOn: new Date(Date.now() + HOUR),
          }),
        ),
        { allowInsecureConnection: true },
      );
    expect(await outcome(client("s", { query: true }).getProperties())).toBe("ok");
    expect(await outcome(client("s", { query: true }).setProperties({ cors: [] }))).toBe(
      "403 AuthorizationPermissionMismatch",
    );
    expect(await outcome(client("s", { write: true }).setProperties({ cors: [] }))).toBe("ok");
    expect(await outcome(client("co", { query: true, write: true }).getProperties())).toBe(
      "403 AuthorizationResourceTypeMismatch",
    );
  });
});

/** A point read through a query-only table SAS for the next hour, with `restriction` added. */
function readWithSas(
  table: TableClient,
  restriction: { ipRange?: { start: string; end?: string }; protocol?: "https" | "https,http" },
): Promise<string> {
  const sas = generateTableSas(table.tableName, credential, {
    permissions: { query: true },
    expiresOn: new Date(Date.now() + HOUR),
    ...restriction,
  });
  return outcome(sasClient(table, sas).getEntity("p", "1"));
}

describe("SAS address and protocol restrictions", () => {
  test("sip: the client's address must lie in the range (this client is 127.0.0.1)", async () => {
    const table = await freshTable();
    const read = (ipRange: { start: string; end?: string }) => readWithSas(table, { ipRange });
    expect(await read({ start: "127.0.0.1" })).toBe("ok");
    expect(await read({ start: "127.0.0.0", end: "127.0.0.255" })).toBe("ok");
    expect(await read({ start: "10.1.2.3" })).toBe("403 AuthorizationSourceIPMismatch");
    expect(await read({ start: "127.0.0.2", end: "127.0.0.9" })).toBe("403 AuthorizationSourceIPMismatch");
    expect(await read({ start: "not-an-ip" })).toBe("403 AuthenticationFailed");
  });

  test("spr=https is refused over http; https,http is accepted", async () => {
    const table = await freshTable();
    const read = (protocol: "https" | "https,http") => readWithSas(table, { protocol });
    expect(await read("https")).toBe("403 AuthorizationProtocolMismatch");
    expect(await read("https,http")).toBe("ok");
  });
});
