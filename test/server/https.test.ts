import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { request } from "node:https";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  AzureNamedKeyCredential,
  AzureSASCredential,
  generateTableSas,
  TableClient,
  TableServiceClient,
} from "@azure/data-tables";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startTableServer, type TableServer, ValidationError } from "../../src/index.js";
import { expectRejection } from "../support/rejection.js";
import { ACCOUNT, KEY } from "./signed-fetch.js";

// `tablekit serve` over HTTPS, with a self-signed certificate kept for the tests alone (test/fixtures,
// made with openssl; it protects nothing). Clients trust it as their only CA; no network is used.
const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), "../fixtures");
const CERT_PATH = resolve(FIXTURES, "test-only-tls-cert.pem");
const KEY_PATH = resolve(FIXTURES, "test-only-tls-key.pem");
const cert = readFileSync(CERT_PATH);
const tlsOptions = { ca: cert };
let server: TableServer;

beforeAll(async () => {
  server = await startTableServer({ port: 0, tls: { cert, key: readFileSync(KEY_PATH, "utf8") } });
});
afterAll(async () => {
  await server.close();
});

describe("tablekit serve over HTTPS", () => {
  test("the endpoint and connection string are https, and the raw SDK works through them", async () => {
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/devstoreaccount1$/);
    expect(server.connectionString).toMatch(/^DefaultEndpointsProtocol=https;.*TableEndpoint=https:\/\//);
    const service = TableServiceClient.fromConnectionString(server.connectionString, { tlsOptions });
    await service.createTable("overtls");
    const table = TableClient.fromConnectionString(server.connectionString, "overtls", { tlsOptions });
    await table.createEntity({ partitionKey: "p", rowKey: "r", v: "secret" });
    expect((await table.getEntity<{ v: string }>("p", "r")).v).toBe("secret");
  });

  test("a SAS restricted to https is accepted over https", async () => {
    const sas = generateTableSas("overtls", new AzureNamedKeyCredential(ACCOUNT, KEY), {
      permissions: { query: true },
      expiresOn: new Date(Date.now() + 60 * 60 * 1000),
      protocol: "https",
    });
    const client = new TableClient(server.url, "overtls", new AzureSASCredential(sas), { tlsOptions });
    expect((await client.getEntity<{ v: string }>("p", "r")).v).toBe("secret");
  });

  test("plain HTTP to the TLS port gets no table answer", async () => {
    const plain = server.url.replace(/^https:/, "http:");
    const outcome = await fetch(`${plain}/Tables`).then(
      (r) => r.status,
      () => "refused",
    );
    expect(outcome).toBe("refused");
  });

  test("a client that does not trust the certificate cannot connect", async () => {
    const failure = await new Promise<Error>((done) => {
      const req = request(`${server.url}/Tables`, (res) => {
        res.resume();
        done(new Error(`unexpected answer ${res.statusCode}`));
      });
      req.on("error", done);
      req.end();
    });
    expect(failure.message).toMatch(/self[- ]signed|certificate/i);
  });

  test("a tls option that is not a usable PEM pair is a ValidationError before anything listens", async () => {
    await expectRejection(
      startTableServer({ port: 0, tls: { cert: "not a certificate", key: "not a key" } }),
      ValidationError,
    );
    await expectRejection(startTableServer({ port: 0, tls: { cert, key: cert } }), ValidationError);
    await expectRejection(
      startTableServer({ port: 0, tls: { cert } } as unknown as Parameters<typeof startTableServer>[0]),
      ValidationError,
    );
  });
});

describe("tablekit serve --tls-cert --tls-key (CLI)", () => {
  const CLI = resolve(dirname(fileURLToPath(import.meta.url)), "../../src/cli/main.ts");
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) child.kill("SIGKILL");
  });

  test("prints an https connection string that the SDK can use", async () => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", CLI, "serve", "--port", "0", "--tls-cert", CERT_PATH, "--tls-key", KEY_PATH],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    children.push(child);
    const connectionString = await new Promise<string>((done, fail) => {
      let out = "";
      child.stdout?.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8");
        const line = out.split("\n").find((l) => l.startsWith("DefaultEndpointsProtocol="));
        if (line !== undefined) done(line.trim());
      });
      child.once("exit", () => fail(new Error(`exited before printing its connection string:\n${out}`)));
    });
    expect(connectionString).toMatch(
      /^DefaultEndpointsProtocol=https;.*TableEndpoint=https:\/\/127\.0\.0\.1:/,
    );
    const service = TableServiceClient.fromConnectionString(connectionString, { tlsOptions });
    await service.createTable("clitls");
    const exited = new Promise((done) => child.once("exit", done));
    child.kill("SIGTERM");
    await exited;
  });

  test("--tls-cert without --tls-key is a usage error (exit 2)", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", CLI, "serve", "--tls-cert", CERT_PATH], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(child);
    const code = await new Promise<number | null>((done) => child.once("exit", done));
    expect(code).toBe(2);
  });
});
