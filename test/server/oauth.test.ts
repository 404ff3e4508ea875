import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { request } from "node:https";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { TokenCredential } from "@azure/core-auth";
import { RestError, TableClient, TableServiceClient, TableTransaction } from "@azure/data-tables";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startTableServer, type TableServer, ValidationError } from "../../src/index.js";
import { expectRejection } from "../support/rejection.js";
import { errorOf, signedFetch } from "./signed-fetch.js";

// OAuth bearer tokens (Microsoft Entra ID) with `oauth: "basic"`: the token's claims are checked, its
// signature is not (Azurite's `--oauth basic`), so the tests make unsigned JWTs by hand. What the
// storage front end answers to a refused token comes from the service's own error reports: version
// 2019-02-02 (what @azure/data-tables sends) gets 403 AuthenticationFailed, "Server failed to
// authenticate the request. Make sure the value of Authorization header is formed correctly including
// the signature." with AuthenticationErrorDetail "Lifetime validation failed. The token is expired." or
// "Issuer validation failed. Issuer did not match." (azure-sdk-for-java #8667, azure-docs #11564);
// from 2019-12-12 on it is 401 InvalidAuthenticationInfo, "… Please refer to the information in the
// www-authenticate header.", with `WWW-Authenticate: Bearer authorization_uri=https://login.microsoftonline.com/
// <tenant>/oauth2/authorize resource_id=https://storage.azure.com` and details such as "Audience
// validation failed. Audience did not match." (Azure/AzureStor #119, azure-sdk-for-net #10529).
const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), "../fixtures");
const CERT_PATH = resolve(FIXTURES, "test-only-tls-cert.pem");
const KEY_PATH = resolve(FIXTURES, "test-only-tls-key.pem");
const cert = readFileSync(CERT_PATH);
const tlsOptions = { ca: cert };

// Fixed instants far from any test run, so no answer depends on when the suite runs.
const PAST = Date.UTC(2019, 0, 1) / 1000;
const FUTURE = Date.UTC(2100, 0, 1) / 1000;
const TENANT = "ab1f708d-50f6-404c-a006-d71b2ac7a606";

/** A JWT's compact form: base64url header and claims, and any signature bytes (never checked). */
function jwt(claims: Record<string, unknown>, signature = ""): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "RS256", typ: "JWT" })}.${part(claims)}.${signature}`;
}

/** The claims of a token Entra ID issues for Azure Storage (v1 issuer), valid from 2019 to 2100. */
function claims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    aud: "https://storage.azure.com",
    iss: `https://sts.windows.net/${TENANT}/`,
    iat: PAST,
    nbf: PAST,
    exp: FUTURE,
    oid: "23657296-5cd5-45b0-a809-d972a7f4dfe1",
    tid: TENANT,
    scp: "user_impersonation",
    ...overrides,
  };
}

/** A TokenCredential that hands the SDK a fixed token (what a real credential gets from Entra ID). */
function credential(token: string): TokenCredential {
  return { getToken: async () => ({ token, expiresOnTimestamp: FUTURE * 1000 }) };
}

/** A raw HTTPS request carrying `Authorization: <authorization>`, trusting the test certificate. */
function rawRequest(
  url: string,
  authorization: string,
  init: { method?: string; version?: string; body?: string } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((done, fail) => {
    const req = request(
      url,
      {
        method: init.method ?? "GET",
        ca: cert,
        headers: {
          Authorization: authorization,
          "x-ms-version": init.version ?? "2019-02-02",
          "x-ms-date": new Date().toUTCString(),
          Accept: "application/json;odata=minimalmetadata",
          DataServiceVersion: "3.0",
          ...(init.body === undefined ? {} : { "Content-Type": "application/json" }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
        );
      },
    );
    req.on("error", fail);
    req.end(init.body);
  });
}

function bodyMessage(body: string): string {
  return (JSON.parse(body) as { "odata.error": { message: { value: string } } })["odata.error"].message.value;
}

/** The SDK's failure: status, the answer's `x-ms-error-code`, and the message it shows its caller. */
async function restError(
  promise: Promise<unknown>,
): Promise<{ statusCode: number | undefined; code: string | undefined; message: string }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RestError);
  const rest = error as RestError;
  return {
    statusCode: rest.statusCode,
    code: rest.response?.headers.get("x-ms-error-code"),
    message: rest.message,
  };
}

let server: TableServer;

beforeAll(async () => {
  server = await startTableServer({ port: 0, tls: { cert, key: readFileSync(KEY_PATH) }, oauth: "basic" });
});
afterAll(async () => {
  await server.close();
});

const tableWith = (token: string, table: string) =>
  new TableClient(server.url, table, credential(token), { tlsOptions });

describe("oauth basic: a valid bearer token", () => {
  test("the raw SDK with a TokenCredential creates, writes, reads, batches and deletes", async () => {
    const token = jwt(claims());
    const service = new TableServiceClient(server.url, credential(token), { tlsOptions });
    await service.createTable("oauthcrud");
    const table = tableWith(token, "oauthcrud");
    await table.createEntity({ partitionKey: "p", rowKey: "1", v: "one" });
    await table.upsertEntity({ partitionKey: "p", rowKey: "2", v: "two" });
    const batch = new TableTransaction();
    batch.createEntity({ partitionKey: "p", rowKey: "3", v: "three" });
    batch.updateEntity({ partitionKey: "p", rowKey: "1", v: "uno" }, "Merge");
    await table.submitTransaction(batch.actions);
    const rows: string[] = [];
    for await (const row of table.listEntities<{ v: string }>()) rows.push(`${row.rowKey}=${row.v}`);
    expect(rows).toEqual(["1=uno", "2=two", "3=three"]);
    expect((await table.getEntity<{ v: string }>("p", "2")).v).toBe("two");
    await table.deleteEntity("p", "2");
    // Service administration is allowed too (everything the account key allows).
    expect((await service.getProperties()).cors).toBeDefined();
    const names: string[] = [];
    for await (const t of service.listTables()) names.push(t.name as string);
    expect(names).toContain("oauthcrud");
    await service.deleteTable("oauthcrud");
  });

  test("the signature is not checked (basic level): any signature bytes pass", async () => {
    const token = jwt(claims(), randomBytes(256).toString("base64url"));
    await new TableServiceClient(server.url, credential(token), { tlsOptions }).createTable("oauthunsigned");
    await tableWith(token, "oauthunsigned").deleteTable();
  });

  test("every storage audience and Entra ID issuer form is accepted", async () => {
    const audiences = [
      "https://storage.azure.com",
      "https://storage.azure.com/",
      "e406a681-f3d4-42a8-90b6-c2b029497af1",
      "https://devstoreaccount1.table.core.windows.net",
      "https://devstoreaccount1.table.core.windows.net/",
      "https://devstoreaccount1.table.core.chinacloudapi.cn",
      "https://devstoreaccount1.table.core.usgovcloudapi.net/",
      "https://devstoreaccount1.table.core.cloudapi.de",
      ["https://graph.microsoft.com", "https://storage.azure.com"],
    ];
    const issuers = [
      `https://sts.windows.net/${TENANT}/`,
      `https://login.microsoftonline.com/${TENANT}/v2.0`,
      `https://sts.chinacloudapi.cn/${TENANT}/`,
      `https://login.chinacloudapi.cn/${TENANT}/v2.0`,
      `https://login.microsoftonline.us/${TENANT}/v2.0`,
      `https://sts.microsoftonline.de/${TENANT}/`,
      `https://sts.windows-ppe.net/${TENANT}/`,
    ];
    const tokens = [
      ...audiences.map((aud) => jwt(claims({ aud }))),
      ...issuers.map((iss) => jwt(claims({ iss }))),
      // Entra ID tokens always carry nbf and iat; a hand-made token may leave them out.
      jwt(claims({ nbf: undefined, iat: undefined })),
    ];
    for (const token of tokens) {
      const answer = await rawRequest(`${server.url}/Tables`, `Bearer ${token}`);
      expect(answer.status, Buffer.from(token.split(".")[1] as string, "base64url").toString()).toBe(200);
    }
  });
});

describe("oauth basic: refused tokens", () => {
  const refusedCases: [string, string, string][] = [
    [
      "another account's endpoint as audience",
      jwt(claims({ aud: "https://invalidaccount.table.core.windows.net" })),
      "Audience validation failed",
    ],
    [
      "another service's audience",
      jwt(claims({ aud: "https://devstoreaccount1.blob.core.windows.net" })),
      "Audience validation failed",
    ],
    ["no audience", jwt(claims({ aud: undefined })), "Audience validation failed"],
    [
      "an issuer that is not Entra ID",
      jwt(claims({ iss: `https://invalidissuer/${TENANT}/` })),
      "Issuer validation failed",
    ],
    [
      "a look-alike issuer host",
      jwt(claims({ iss: `https://sts.windows.net.example.com/${TENANT}/` })),
      "Issuer validation failed",
    ],
    ["no issuer", jwt(claims({ iss: undefined })), "Issuer validation failed"],
    ["an expired token", jwt(claims({ exp: PAST })), "Lifetime validation failed. The token is expired."],
    [
      "a token not yet valid",
      jwt(claims({ nbf: Date.UTC(2119, 0, 1) / 1000 })),
      "Lifetime validation failed. The token is not yet valid.",
    ],
    ["no exp", jwt(claims({ exp: undefined })), "Lifetime validation failed"],
  ];

  test.each(refusedCases)(
    "%s: 403 AuthenticationFailed for the SDK's version, naming the check",
    async (_name, token, detail) => {
      const failure = await restError(tableWith(token, "oauthrefused").createTable());
      expect(failure.statusCode).toBe(403);
      expect(failure.code).toBe("AuthenticationFailed");
      expect(failure.message).toContain(detail);
    },
  );

  test.each(refusedCases)(
    "%s: from 2019-12-12, 401 InvalidAuthenticationInfo with a bearer challenge",
    async (_name, token, detail) => {
      const answer = await rawRequest(`${server.url}/Tables`, `Bearer ${token}`, { version: "2020-12-06" });
      expect(answer.status).toBe(401);
      expect(answer.headers["x-ms-error-code"]).toBe("InvalidAuthenticationInfo");
      expect(answer.headers["www-authenticate"]).toMatch(
        /^Bearer authorization_uri=https:\/\/login\.microsoftonline\.com\/[^/ ]+\/oauth2\/authorize resource_id=https:\/\/storage\.azure\.com$/,
      );
      expect(bodyMessage(answer.body)).toMatch(
        /^Server failed to authenticate the request\. Please refer to the information in the www-authenticate header\.\n/,
      );
      expect(bodyMessage(answer.body)).toContain(detail);
    },
  );

  test("malformed tokens are refused, never a crash", async () => {
    const malformed = [
      "invalid token",
      "",
      "a.b",
      "a.b.c.d",
      `${jwt(claims()).split(".")[0]}.not-json.`,
      `${jwt(claims()).split(".")[0]}.${Buffer.from("[1,2]").toString("base64url")}.`,
      `x.${jwt(claims()).split(".")[1]}.`,
      jwt(claims({ exp: "2100-01-01" })),
      jwt(claims({ nbf: "soon" })),
    ];
    for (const token of malformed) {
      for (const version of ["2019-02-02", "2021-12-02"]) {
        const answer = await rawRequest(`${server.url}/Tables`, `Bearer ${token}`, { version });
        const expected =
          version === "2019-02-02" ? [403, "AuthenticationFailed"] : [401, "InvalidAuthenticationInfo"];
        expect([answer.status, answer.headers["x-ms-error-code"]], `${token} @ ${version}`).toEqual(expected);
      }
    }
    const failure = await restError(tableWith("invalid token", "oauthmalformed").createTable());
    expect([failure.statusCode, failure.code]).toEqual([403, "AuthenticationFailed"]);
  });

  test("a refused token changes nothing", async () => {
    const good = tableWith(jwt(claims()), "oauthuntouched");
    await good.createTable();
    const expired = tableWith(jwt(claims({ exp: PAST })), "oauthuntouched");
    await restError(expired.createEntity({ partitionKey: "p", rowKey: "r" }));
    await restError(expired.deleteTable());
    const rows = [];
    for await (const row of good.listEntities()) rows.push(row);
    expect(rows).toEqual([]);
    await good.deleteTable();
  });

  test("Get/Set Table ACL take the account key: a bearer token is 403 AuthorizationFailure", async () => {
    const table = tableWith(jwt(claims()), "oauthacl");
    await table.createTable();
    const get = await restError(table.getAccessPolicy());
    expect([get.statusCode, get.code]).toEqual([403, "AuthorizationFailure"]);
    const set = await restError(
      table.setAccessPolicy([
        { id: "p1", accessPolicy: { permission: "r", expiry: new Date(FUTURE * 1000) } },
      ]),
    );
    expect([set.statusCode, set.code]).toEqual([403, "AuthorizationFailure"]);
    await table.deleteTable();
  });
});

describe("oauth off or without TLS", () => {
  test("oauth without tls is a ValidationError before anything listens; so is an unknown level", async () => {
    const failure = await expectRejection(startTableServer({ port: 0, oauth: "basic" }), ValidationError);
    expect(failure.field).toBe("oauth");
    await expectRejection(
      startTableServer({
        port: 0,
        tls: { cert, key: readFileSync(KEY_PATH) },
        oauth: "advanced",
      } as unknown as Parameters<typeof startTableServer>[0]),
      ValidationError,
    );
  });

  test("with oauth off (the default) a bearer token keeps today's answer: 403 AuthenticationFailed", async () => {
    const plain = await startTableServer({ port: 0, tls: { cert, key: readFileSync(KEY_PATH) } });
    try {
      const answer = await rawRequest(`${plain.url}/Tables`, `Bearer ${jwt(claims())}`);
      expect([answer.status, answer.headers["x-ms-error-code"]]).toEqual([403, "AuthenticationFailed"]);
      const http = await startTableServer({ port: 0 });
      try {
        const response = await signedFetch(`${http.url}/Tables`, {
          scheme: "none",
          headers: { Authorization: `Bearer ${jwt(claims())}` },
        });
        expect(await errorOf(response)).toMatchObject({ status: 403, code: "AuthenticationFailed" });
      } finally {
        await http.close();
      }
    } finally {
      await plain.close();
    }
  });
});

describe("tablekit serve --oauth basic (CLI)", () => {
  const CLI = resolve(dirname(fileURLToPath(import.meta.url)), "../../src/cli/main.ts");
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) child.kill("SIGKILL");
  });
  const start = (args: string[]) => {
    const child = spawn(process.execPath, ["--import", "tsx", CLI, "serve", "--port", "0", ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(child);
    return child;
  };

  test("with --tls-cert/--tls-key the printed endpoint takes a bearer token", async () => {
    const child = start(["--tls-cert", CERT_PATH, "--tls-key", KEY_PATH, "--oauth", "basic"]);
    const endpoint = await new Promise<string>((done, fail) => {
      let out = "";
      child.stdout?.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8");
        const match = /TableEndpoint=(https:\/\/[^;\s]+)/.exec(out);
        if (match !== null) done(match[1] as string);
      });
      child.once("exit", () => fail(new Error(`exited before printing its connection string:\n${out}`)));
    });
    await new TableServiceClient(endpoint, credential(jwt(claims())), { tlsOptions }).createTable("clioauth");
    const exited = new Promise((done) => child.once("exit", done));
    child.kill("SIGTERM");
    await exited;
  });

  test("--oauth without TLS, or with another level, is a usage error (exit 2)", async () => {
    for (const args of [
      ["--oauth", "basic"],
      ["--tls-cert", CERT_PATH, "--tls-key", KEY_PATH, "--oauth", "full"],
    ]) {
      const child = start(args);
      let err = "";
      child.stderr?.on("data", (chunk: Buffer) => {
        err += chunk.toString("utf8");
      });
      const code = await new Promise<number | null>((done) => child.once("exit", done));
      expect(code, args.join(" ")).toBe(2);
      expect(err).toMatch(/--oauth/);
    }
  });
});
