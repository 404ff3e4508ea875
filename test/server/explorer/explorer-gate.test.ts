import { request } from "node:http";
import { TableServiceClient } from "@azure/data-tables";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { isLoopbackHost } from "../../../src/server/explorer/explorer-gate.js";
import { escapeHtml } from "../../../src/server/explorer/explorer-page.js";
import { startTableServer, type TableServer } from "../../../src/server/table-server.js";

// The explorer's front door over HTTP (no browser): the page, its token, and who may use it.

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A raw request with exactly the headers given (fetch would not let a test set Host). */
function send(
  port: number,
  path: string,
  headers: Record<string, string>,
  method = "GET",
  body?: string,
): Promise<Reply> {
  return new Promise((done, fail) => {
    const req = request({ host: "127.0.0.1", port, path, method, headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () => done({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.once("error", fail);
    req.end(body);
  });
}

function tokenOf(page: string): string {
  const match = /<meta name="tablekit-explorer-token" content="([0-9a-f]+)">/.exec(page);
  if (match === null) throw new Error(`no token in the page:\n${page.slice(0, 500)}`);
  return match[1] as string;
}

describe("explorer gate", () => {
  let server: TableServer;
  let token: string;
  let host: string;

  beforeAll(async () => {
    server = await startTableServer({ port: 0 });
    host = `127.0.0.1:${server.port}`;
    const service = TableServiceClient.fromConnectionString(server.connectionString, {
      allowInsecureConnection: true,
    });
    await service.createTable("gated");
    const page = await send(server.port, "/", { Host: host });
    token = tokenOf(page.body);
  });
  afterAll(() => server.close());

  test("GET / is the page: HTML with a strict CSP, no external resource, token embedded", async () => {
    const page = await send(server.port, "/", { Host: host });
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    const csp = String(page.headers["content-security-policy"]);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(page.body).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(server.explorerUrl).toBe(`http://127.0.0.1:${server.port}/`);
    // Offline and small: everything is in this one answer.
    expect(Buffer.byteLength(page.body)).toBeLessThan(150 * 1024);
  });

  test("the token admits a same-origin request; it becomes an ordinary Table service call", async () => {
    const reply = await send(server.port, "/_explorer/api/Tables", {
      Host: host,
      "x-tablekit-explorer-token": token,
      "Sec-Fetch-Site": "same-origin",
      Origin: `http://${host}`,
      Accept: "application/json;odata=minimalmetadata",
    });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body).value).toEqual([{ TableName: "gated" }]);
  });

  test("no token is 401; a wrong token, another origin or site, or a foreign Host name is 403", async () => {
    const api = "/_explorer/api/Tables";
    const none = await send(server.port, api, { Host: host });
    expect(none.status).toBe(401);
    const wrong = await send(server.port, api, { Host: host, "x-tablekit-explorer-token": "0".repeat(64) });
    expect(wrong.status).toBe(403);
    expect(JSON.parse(wrong.body)["odata.error"].code).toBe("AuthenticationFailed");
    const origin = await send(
      server.port,
      api,
      { Host: host, "x-tablekit-explorer-token": token, Origin: "http://evil.example" },
      "POST",
      JSON.stringify({ TableName: "stolen" }),
    );
    expect(origin.status).toBe(403);
    const site = await send(server.port, api, {
      Host: host,
      "x-tablekit-explorer-token": token,
      "Sec-Fetch-Site": "cross-site",
    });
    expect(site.status).toBe(403);
    // DNS rebinding: a name that resolves to 127.0.0.1 is not this server's address.
    const rebound = await send(server.port, api, {
      Host: "evil.example",
      "x-tablekit-explorer-token": token,
    });
    expect(rebound.status).toBe(403);
    expect((await send(server.port, "/", { Host: `evil.example:${server.port}` })).status).toBe(403);
    // The refused create created nothing.
    const list = await send(server.port, api, { Host: host, "x-tablekit-explorer-token": token });
    expect(JSON.parse(list.body).value).toEqual([{ TableName: "gated" }]);
  });

  test("the token is no Shared Key: a Table service request with it and no signature is refused", async () => {
    const reply = await send(server.port, "/devstoreaccount1/Tables", {
      Host: host,
      "x-tablekit-explorer-token": token,
      "x-ms-version": "2021-12-02",
    });
    expect(reply.status).toBe(401);
  });
});

describe("explorer switch", () => {
  test("explorer: false leaves / to the Table service (no page)", async () => {
    const server = await startTableServer({ port: 0, explorer: false });
    try {
      const page = await send(server.port, "/", { Host: `127.0.0.1:${server.port}` });
      expect(page.status).not.toBe(200);
      expect(page.body).not.toContain("tablekit explorer");
      expect(server.explorerUrl).toBeUndefined();
      const api = await send(server.port, "/_explorer/api/Tables", { Host: `127.0.0.1:${server.port}` });
      expect(api.status).not.toBe(200);
    } finally {
      await server.close();
    }
  });

  test("a non-loopback interface has no explorer unless asked; explorer: true serves it there", async () => {
    const off = await startTableServer({ port: 0, host: "0.0.0.0" });
    try {
      expect(off.explorerUrl).toBeUndefined();
      expect((await send(off.port, "/", { Host: `127.0.0.1:${off.port}` })).body).not.toContain("<html");
    } finally {
      await off.close();
    }
    const on = await startTableServer({ port: 0, host: "0.0.0.0", explorer: true });
    try {
      const page = await send(on.port, "/", { Host: `myhost:${on.port}` });
      expect(page.status).toBe(200);
      expect(page.body).toContain("tablekit explorer");
    } finally {
      await on.close();
    }
  });

  test("explorer must be a boolean", async () => {
    await expect(startTableServer({ port: 0, explorer: "yes" as unknown as boolean })).rejects.toMatchObject({
      rule: "server-explorer",
    });
  });

  test("loopback interfaces and HTML escaping", () => {
    for (const host of ["127.0.0.1", "127.8.9.1", "localhost", "::1", "[::1]", "::ffff:127.0.0.1"]) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
    for (const host of ["0.0.0.0", "::", "10.0.0.1", "example.com", "128.0.0.1"]) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
    expect(escapeHtml(`<a href="x" onclick='y'>&</a>`)).toBe(
      "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;",
    );
  });
});
