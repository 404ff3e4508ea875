import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  AzureNamedKeyCredential,
  AzureSASCredential,
  generateTableSas,
  RestError,
  type ServiceProperties,
  TableClient,
  TableServiceClient,
} from "@azure/data-tables";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { MemoryStore, startTableServer, type TableServer } from "../../src/index.js";
import { ACCOUNT, errorOf, KEY, signedFetch } from "./signed-fetch.js";

// `--file` keeps the account's administration like its data: service properties and table ACLs are
// journaled before they are answered, restored on start, and a deleted table's ACL stays deleted.
let dir: string;
let file: string;
const open: TableServer[] = [];
const HOUR = 60 * 60 * 1000;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "tablekit-admin-"));
  file = path.join(dir, "store.jsonl");
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A server on a fresh MemoryStore loaded from the file (what a restart of `tablekit serve --file` does). */
async function serve(): Promise<{ server: TableServer; service: TableServiceClient }> {
  const server = await startTableServer({ port: 0, store: new MemoryStore({ file }) });
  open.push(server);
  const service = TableServiceClient.fromConnectionString(server.connectionString, {
    allowInsecureConnection: true,
  });
  return { server, service };
}

async function stop(server: TableServer): Promise<void> {
  open.splice(open.indexOf(server), 1);
  await server.close();
}

function tableOf(server: TableServer, name: string): TableClient {
  // No retries: a refused set (500) is asserted, not waited out with the SDK's backoff.
  return TableClient.fromConnectionString(server.connectionString, name, {
    allowInsecureConnection: true,
    retryOptions: { maxRetries: 0 },
  });
}

const PROPERTIES: ServiceProperties = {
  logging: {
    version: "1.0",
    read: true,
    write: true,
    delete: false,
    retentionPolicy: { enabled: true, days: 4 },
  },
  hourMetrics: {
    version: "1.0",
    enabled: true,
    includeAPIs: true,
    retentionPolicy: { enabled: true, days: 11 },
  },
  minuteMetrics: { version: "1.0", enabled: false, retentionPolicy: { enabled: false } },
  cors: [
    {
      allowedOrigins: "http://app.example",
      allowedMethods: "GET,PUT",
      allowedHeaders: "x-ms-meta-*",
      exposedHeaders: "x-ms-request-id",
      maxAgeInSeconds: 30,
    },
  ],
};

async function readProperties(service: TableServiceClient) {
  const { logging, hourMetrics, minuteMetrics, cors } = await service.getProperties();
  return { logging, hourMetrics, minuteMetrics, cors };
}

const POLICIES = [
  {
    id: "readers",
    accessPolicy: {
      permission: "r",
      start: new Date("2020-01-02T03:04:05Z"),
      expiry: new Date(Date.now() + HOUR),
    },
  },
  { id: "bare", accessPolicy: {} },
];

describe("service properties and table ACLs with --file", () => {
  test("survive a restart: read back as set, CORS applied, a token naming the policy still works", async () => {
    const first = await serve();
    await first.service.setProperties(PROPERTIES);
    await first.service.createTable("Guarded");
    await tableOf(first.server, "Guarded").setAccessPolicy(POLICIES);
    await tableOf(first.server, "Guarded").createEntity({ partitionKey: "p", rowKey: "1" });
    const acl = await tableOf(first.server, "Guarded").getAccessPolicy();
    await stop(first.server);

    const second = await serve();
    expect(await readProperties(second.service)).toEqual(PROPERTIES);
    expect(await tableOf(second.server, "Guarded").getAccessPolicy()).toEqual(acl);
    // The restored rules are the ones applied, not only the ones read back.
    const answer = await signedFetch(`${second.server.url}/Tables`, {
      headers: { Origin: "http://app.example" },
    });
    expect(answer.headers.get("access-control-allow-origin")).toBe("http://app.example");
    const sas = generateTableSas("Guarded", new AzureNamedKeyCredential(ACCOUNT, KEY), {
      identifier: "readers",
    });
    const reader = new TableClient(`${second.server.url}`, "Guarded", new AzureSASCredential(sas), {
      allowInsecureConnection: true,
    });
    expect((await reader.getEntity("p", "1")).rowKey).toBe("1");
  });

  test("later sets replace earlier ones across restarts; clearing an ACL is kept too", async () => {
    const first = await serve();
    await first.service.setProperties(PROPERTIES);
    await first.service.setProperties({ cors: [] }); // the other elements keep their values
    await first.service.createTable("Cleared");
    await tableOf(first.server, "Cleared").setAccessPolicy(POLICIES);
    await tableOf(first.server, "Cleared").setAccessPolicy([]);
    await stop(first.server);

    const second = await serve();
    expect(await readProperties(second.service)).toEqual({ ...PROPERTIES, cors: [] });
    expect(await tableOf(second.server, "Cleared").getAccessPolicy()).toEqual([]);
  });

  test("a deleted table's ACL stays deleted: the table created again after a restart has none", async () => {
    const first = await serve();
    await first.service.createTable("Reborn");
    await tableOf(first.server, "Reborn").setAccessPolicy(POLICIES);
    await first.service.deleteTable("Reborn");
    await stop(first.server);

    const second = await serve();
    await second.service.createTable("Reborn");
    expect(await tableOf(second.server, "Reborn").getAccessPolicy()).toEqual([]);
    await stop(second.server);
    // And once more after the compaction the second start wrote.
    const third = await serve();
    expect(await tableOf(third.server, "Reborn").getAccessPolicy()).toEqual([]);
  });

  test("a torn last line (a crash mid-append) loses at most that set; the one before stays whole", async () => {
    const first = await serve();
    await first.service.setProperties(PROPERTIES);
    await stop(first.server);
    const before = fs.readFileSync(file, "utf8");
    const second = await serve();
    await second.service.setProperties({ ...PROPERTIES, cors: [] });
    await stop(second.server);
    const written = fs.readFileSync(file, "utf8");
    expect(written.startsWith(before)).toBe(true);
    const lastLine = written.slice(before.length);
    expect(lastLine.split("\n")).toHaveLength(2); // exactly one new line: one set, one append
    // A process killed inside appendFileSync leaves part of the line and no newline.
    fs.writeFileSync(file, before + lastLine.slice(0, Math.floor(lastLine.length / 2)));

    const third = await serve();
    expect(await readProperties(third.service)).toEqual(PROPERTIES);
  });

  test("a set the journal cannot take is refused and changes nothing in memory", async () => {
    const first = await serve();
    await first.service.setProperties(PROPERTIES);
    await first.service.createTable("Locked");
    // The journal's path becomes a directory: every append fails from here on.
    fs.rmSync(file);
    fs.mkdirSync(file);
    const properties = await errorOf(
      await signedFetch(`${first.server.url}/?restype=service&comp=properties`, {
        method: "PUT",
        headers: { "Content-Type": "application/xml" },
        body: '<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Cors /></StorageServiceProperties>',
      }),
    );
    expect([properties.status, properties.code]).toEqual([500, "InternalError"]);
    const acl = await tableOf(first.server, "Locked")
      .setAccessPolicy(POLICIES)
      .then(
        () => "ok",
        (e: unknown) => (e instanceof RestError ? `${e.statusCode}` : String(e)),
      );
    expect(acl).toBe("500");
    expect(await readProperties(first.service)).toEqual(PROPERTIES);
    expect(await tableOf(first.server, "Locked").getAccessPolicy()).toEqual([]);
  });
});
