import { RestError, TableServiceClient } from "@azure/data-tables";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startTableServer, type TableServer } from "../../src/index.js";
import { azuriteConnectionString } from "../support/azurite.js";
import { testSeed } from "../support/seeded-random.js";
import { azuriteSelected } from "../support/stores.js";
import { errorOf, signedFetch } from "./signed-fetch.js";

// Get/Set Table Service Properties, Get Table Service Stats and CORS, through the raw SDK and raw HTTP.
let server: TableServer;
let service: TableServiceClient;
const SEED = testSeed(1211);

beforeAll(async () => {
  server = await startTableServer({ port: 0 });
  service = TableServiceClient.fromConnectionString(server.connectionString, {
    allowInsecureConnection: true,
  });
});
afterAll(async () => {
  await server.close();
});

const propertiesUrl = () => `${server.url}/?restype=service&comp=properties`;

/** What the SDK reads back, without the per-request headers. */
async function readProperties(client: TableServiceClient) {
  const { logging, hourMetrics, minuteMetrics, cors } = await client.getProperties();
  return { logging, hourMetrics, minuteMetrics, cors };
}

async function putXml(body: string) {
  return errorOf(
    await signedFetch(propertiesUrl(), {
      method: "PUT",
      body,
      headers: { "Content-Type": "application/xml" },
    }),
  );
}

const FULL = {
  logging: {
    version: "1.0",
    read: true,
    write: false,
    delete: true,
    retentionPolicy: { enabled: true, days: 3 },
  },
  hourMetrics: {
    version: "1.0",
    enabled: true,
    includeAPIs: false,
    retentionPolicy: { enabled: true, days: 9 },
  },
  minuteMetrics: { version: "1.0", enabled: false, retentionPolicy: { enabled: false } },
  cors: [
    {
      allowedOrigins: "http://a.example,http://b.example",
      allowedMethods: "GET,PUT",
      allowedHeaders: "x-ms-meta-*,x-custom",
      exposedHeaders: "x-ms-*",
      maxAgeInSeconds: 60,
    },
    {
      allowedOrigins: "*",
      allowedMethods: "GET",
      allowedHeaders: "",
      exposedHeaders: "",
      maxAgeInSeconds: 5,
    },
  ],
};

// Azurite refuses a CORS rule with empty AllowedHeaders or ExposedHeaders (400), which the service
// accepts (both may be empty); the comparisons with Azurite use rules that name headers.
const FULL_FOR_AZURITE = {
  ...FULL,
  cors: FULL.cors.map((rule) => ({
    ...rule,
    allowedHeaders: rule.allowedHeaders || "x-any",
    exposedHeaders: rule.exposedHeaders || "x-ms-request-id",
  })),
};

interface Rule {
  allowedOrigins: string;
  allowedMethods: string;
  allowedHeaders: string;
  exposedHeaders: string;
  maxAgeInSeconds: number;
}

/** Five CORS rules whose settings (origins, methods, headers, max age) total exactly `length` characters. */
function corsOfLength(length: number): Rule[] {
  const fixed = "GET".length + "x-ms-meta-*".length + "x-ms-request-id".length + "60".length;
  const perRule = Math.floor(length / 5);
  return Array.from({ length: 5 }, (_, i) => {
    // Origins of 200 characters, comma-separated, filling what the rule's other settings leave.
    let left = perRule + (i === 4 ? length - 5 * perRule : 0) - fixed;
    const origins: string[] = [];
    while (left > 0) {
      const size = Math.min(200, left - (origins.length > 0 ? 1 : 0));
      origins.push(`http://${String(i)}${"o".repeat(Math.max(0, size - 8))}`.slice(0, size));
      left -= size + (origins.length > 1 ? 1 : 0);
    }
    return {
      allowedOrigins: origins.join(","),
      allowedMethods: "GET",
      allowedHeaders: "x-ms-meta-*",
      exposedHeaders: "x-ms-request-id",
      maxAgeInSeconds: 60,
    };
  });
}

function ruleOf(r: Rule): string {
  return `<CorsRule><AllowedOrigins>${r.allowedOrigins}</AllowedOrigins><AllowedMethods>${r.allowedMethods}</AllowedMethods><AllowedHeaders>${r.allowedHeaders}</AllowedHeaders><ExposedHeaders>${r.exposedHeaders}</ExposedHeaders><MaxAgeInSeconds>${r.maxAgeInSeconds}</MaxAgeInSeconds></CorsRule>`;
}

describe("Get/Set Table Service Properties", () => {
  test("before any set, the properties are a new account's: logging off, hour metrics on, no CORS", async () => {
    const fresh = await startTableServer({ port: 0 });
    try {
      const client = TableServiceClient.fromConnectionString(fresh.connectionString, {
        allowInsecureConnection: true,
      });
      const properties = await readProperties(client);
      expect(properties.logging).toMatchObject({ read: false, write: false, delete: false });
      expect(properties.hourMetrics).toMatchObject({
        enabled: true,
        retentionPolicy: { enabled: true, days: 7 },
      });
      expect(properties.minuteMetrics).toMatchObject({ enabled: false });
      expect(properties.cors).toEqual([]);
    } finally {
      await fresh.close();
    }
  });

  test("what is set is read back, and a set that leaves an element out keeps its stored value", async () => {
    await service.setProperties(FULL);
    expect(await readProperties(service)).toEqual(FULL);
    await service.setProperties({ cors: [] });
    expect(await readProperties(service)).toEqual({ ...FULL, cors: [] });
    await service.setProperties({
      minuteMetrics: {
        version: "1.0",
        enabled: true,
        includeAPIs: true,
        retentionPolicy: { enabled: true, days: 1 },
      },
    });
    const after = await readProperties(service);
    expect(after.logging).toEqual(FULL.logging);
    expect(after.minuteMetrics).toEqual({
      version: "1.0",
      enabled: true,
      includeAPIs: true,
      retentionPolicy: { enabled: true, days: 1 },
    });
  });

  test.skipIf(!azuriteSelected)(
    "Azurite reads back the same properties as tablekit serve (needs Azurite)",
    async () => {
      const azurite = TableServiceClient.fromConnectionString(azuriteConnectionString(), {
        allowInsecureConnection: true,
      });
      const before = await readProperties(azurite);
      try {
        await azurite.setProperties(FULL_FOR_AZURITE);
        await service.setProperties(FULL_FOR_AZURITE);
        expect(await readProperties(service)).toEqual(await readProperties(azurite));
      } finally {
        await azurite.setProperties(before);
      }
    },
  );

  test("bad bodies get the service's 400 and change nothing", async () => {
    await service.setProperties(FULL);
    const rule = (origins = "*", methods = "GET", extra = "") =>
      `<CorsRule><AllowedOrigins>${origins}</AllowedOrigins><AllowedMethods>${methods}</AllowedMethods><AllowedHeaders>${extra}</AllowedHeaders><ExposedHeaders></ExposedHeaders><MaxAgeInSeconds>1</MaxAgeInSeconds></CorsRule>`;
    const wrap = (inner: string) =>
      `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties>${inner}</StorageServiceProperties>`;
    const cases: [string, string, string][] = [
      ["not XML", "<StorageServiceProperties><Cors>", "InvalidXmlDocument"],
      ["empty body", "", "InvalidXmlDocument"],
      ["another root", "<Other/>", "InvalidXmlDocument"],
      ["an unknown element", wrap("<Surprise>1</Surprise>"), "InvalidXmlDocument"],
      ["a repeated element", wrap("<Cors/><Cors/>"), "InvalidXmlDocument"],
      ["a DOCTYPE", `<!DOCTYPE x [<!ENTITY e "boom">]>${wrap("")}`, "InvalidXmlDocument"],
      ["six CORS rules", wrap(`<Cors>${rule().repeat(6)}</Cors>`), "InvalidXmlDocument"],
      [
        "a CORS rule without origins",
        wrap(
          "<Cors><CorsRule><AllowedMethods>GET</AllowedMethods><MaxAgeInSeconds>1</MaxAgeInSeconds></CorsRule></Cors>",
        ),
        "InvalidXmlDocument",
      ],
      [
        "65 origins",
        wrap(`<Cors>${rule(Array.from({ length: 65 }, (_, i) => `http://o${i}.example`).join(","))}</Cors>`),
        "InvalidXmlNodeValue",
      ],
      ["three prefixed headers", wrap(`<Cors>${rule("*", "GET", "a*,b*,c*")}</Cors>`), "InvalidXmlNodeValue"],
      ["an unknown method", wrap(`<Cors>${rule("*", "GET,FETCH")}</Cors>`), "InvalidXmlNodeValue"],
      [
        "CORS settings of 2 KiB and one character",
        wrap(`<Cors>${corsOfLength(2049).map(ruleOf).join("")}</Cors>`),
        "InvalidXmlDocument",
      ],
      [
        "366 retention days",
        wrap(
          "<MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>true</Enabled><Days>366</Days></RetentionPolicy></MinuteMetrics>",
        ),
        "InvalidXmlNodeValue",
      ],
      [
        "a boolean that is not one",
        wrap("<MinuteMetrics><Version>1.0</Version><Enabled>yes</Enabled></MinuteMetrics>"),
        "InvalidXmlNodeValue",
      ],
    ];
    for (const [what, body, code] of cases) {
      expect(await putXml(body), what).toMatchObject({ status: 400, code, bodyCode: code });
    }
    expect(await readProperties(service)).toEqual(FULL);
  });

  test("errors of these XML operations are XML <Error> documents the SDK reads its code from, unless JSON is asked for", async () => {
    const put = (accept: string) =>
      signedFetch(propertiesUrl(), {
        method: "PUT",
        body: "<StorageServiceProperties><Cors>",
        headers: { "Content-Type": "application/xml", Accept: accept },
      });
    for (const accept of ["application/xml", "*/*"]) {
      const answer = await put(accept);
      expect(answer.headers.get("content-type"), accept).toBe("application/xml");
      expect(await answer.text()).toMatch(
        /^<\?xml version="1\.0" encoding="utf-8"\?><Error><Code>InvalidXmlDocument<\/Code><Message>[^<]*\nRequestId:[^<]*<\/Message><\/Error>$/,
      );
    }
    const json = await put("application/json;odata=minimalmetadata");
    expect(json.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await errorOf(json)).toMatchObject({ status: 400, bodyCode: "InvalidXmlDocument" });
    // The SDK parses the XML body of these operations into its error's details (a JSON body left none).
    const six = Array.from({ length: 6 }, () => ({
      allowedOrigins: "*",
      allowedMethods: "GET",
      allowedHeaders: "",
      exposedHeaders: "",
      maxAgeInSeconds: 1,
    }));
    const error = await service.setProperties({ cors: six }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RestError);
    expect((error as RestError).details).toMatchObject({
      errorCode: "InvalidXmlDocument",
      Code: "InvalidXmlDocument",
      Message: expect.stringMatching(/^XML specified is not syntactically valid\.\nRequestId:/),
    });
    // Entity and table operations keep their JSON errors.
    const missing = await signedFetch(`${server.url}/Tables('nosuchtable')`, { method: "DELETE" });
    expect(missing.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await errorOf(missing)).toMatchObject({ status: 404, bodyCode: "ResourceNotFound" });
  });

  test("CORS rules may total 2 KiB of settings (tags not counted), each within its own limits", async () => {
    for (const length of [2048, 2049]) {
      const rules = corsOfLength(length);
      // The rules themselves are within every per-rule limit: five rules, < 64 origins of < 256 characters.
      expect(rules).toHaveLength(5);
      for (const r of rules) {
        const origins = r.allowedOrigins.split(",");
        expect(origins.length).toBeLessThanOrEqual(64);
        expect(Math.max(...origins.map((o) => o.length))).toBeLessThanOrEqual(256);
      }
      const total = rules.reduce(
        (n, r) =>
          n +
          r.allowedOrigins.length +
          r.allowedMethods.length +
          r.allowedHeaders.length +
          r.exposedHeaders.length +
          String(r.maxAgeInSeconds).length,
        0,
      );
      expect(total).toBe(length);
      const outcome = await service.setProperties({ cors: rules }).then(
        () => "accepted",
        (e: unknown) =>
          e instanceof RestError
            ? `${e.statusCode} ${String(e.response?.headers.get("x-ms-error-code"))}`
            : String(e),
      );
      if (length === 2048) {
        expect(outcome).toBe("accepted");
        expect((await service.getProperties()).cors).toEqual(rules);
      } else {
        expect(outcome).toBe("400 InvalidXmlDocument");
        expect((await service.getProperties()).cors).toEqual(corsOfLength(2048)); // unchanged
      }
    }
  });

  test(`arbitrary and mutated bodies never crash the server or half-apply (seed ${SEED})`, async () => {
    await service.setProperties(FULL);
    const valid = `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Logging><Version>1.0</Version><Read>true</Read><Write>false</Write><Delete>true</Delete><RetentionPolicy><Enabled>true</Enabled><Days>3</Days></RetentionPolicy></Logging><Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods><AllowedHeaders></AllowedHeaders><ExposedHeaders></ExposedHeaders><MaxAgeInSeconds>1</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>`;
    const mutated = fc
      .tuple(fc.nat({ max: valid.length }), fc.nat({ max: 12 }), fc.string({ maxLength: 6 }))
      .map(([at, drop, insert]) => valid.slice(0, at) + insert + valid.slice(at + drop));
    await fc.assert(
      fc.asyncProperty(fc.oneof(mutated, fc.string({ maxLength: 60 })), async (body) => {
        const before = await readProperties(service);
        const answer = await putXml(body);
        expect([202, 400]).toContain(answer.status);
        if (answer.status === 400) {
          expect(["InvalidXmlDocument", "InvalidXmlNodeValue"]).toContain(answer.code);
          expect(await readProperties(service)).toEqual(before);
        }
        await service.setProperties(FULL);
      }),
      { seed: SEED, numRuns: 120 },
    );
  });
});

describe("Get Table Service Stats", () => {
  test("the secondary endpoint answers it (live); the primary refuses it with 400", async () => {
    const secondary = server.url.replace(/\/devstoreaccount1$/, "/devstoreaccount1-secondary");
    const stats = await signedFetch(`${secondary}/?restype=service&comp=stats`);
    expect(stats.status).toBe(200);
    const xml = await stats.text();
    expect(xml).toMatch(
      /<GeoReplication><Status>live<\/Status><LastSyncTime>[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT<\/LastSyncTime>/,
    );
    const primary = await signedFetch(`${server.url}/?restype=service&comp=stats`);
    expect(await errorOf(primary)).toMatchObject({ status: 400, code: "InvalidQueryParameterValue" });
  });
});

describe("CORS", () => {
  const preflight = (headers: Record<string, string>) =>
    fetch(`${server.url}/Tables`, { method: "OPTIONS", headers });

  test("without rules every preflight is 403 CorsPreflightFailure and answers carry no CORS headers", async () => {
    await service.setProperties({ cors: [] });
    const answer = await preflight({ Origin: "http://a.example", "Access-Control-Request-Method": "GET" });
    expect(await errorOf(answer)).toMatchObject({ status: 403, code: "CorsPreflightFailure" });
    const list = await signedFetch(`${server.url}/Tables`, { headers: { Origin: "http://a.example" } });
    expect(list.status).toBe(200);
    expect([...list.headers.keys()].filter((h) => h.startsWith("access-control") || h === "vary")).toEqual(
      [],
    );
  });

  test("a preflight is answered from the first rule that matches origin and method", async () => {
    await service.setProperties(FULL);
    const ok = await preflight({
      Origin: "http://b.example",
      "Access-Control-Request-Method": "PUT",
      "Access-Control-Request-Headers": "x-ms-meta-color,X-Custom",
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe("http://b.example");
    expect(ok.headers.get("access-control-allow-methods")).toBe("PUT");
    expect(ok.headers.get("access-control-allow-headers")).toBe("x-ms-meta-color,X-Custom");
    expect(ok.headers.get("access-control-max-age")).toBe("60");
    // The origin's case matters, and the matching rule alone decides the headers: the second rule
    // (any origin, GET) would allow x-other, but the first one matches GET from a.example first.
    const cases: [Record<string, string>, number, string][] = [
      [{ Origin: "HTTP://A.EXAMPLE", "Access-Control-Request-Method": "PUT" }, 403, "CorsPreflightFailure"],
      [
        { Origin: "http://a.example", "Access-Control-Request-Method": "DELETE" },
        403,
        "CorsPreflightFailure",
      ],
      [
        {
          Origin: "http://a.example",
          "Access-Control-Request-Method": "GET",
          "Access-Control-Request-Headers": "x-other",
        },
        403,
        "CorsPreflightFailure",
      ],
      [{ Origin: "http://c.example" }, 400, "InvalidHeaderValue"],
      [{ "Access-Control-Request-Method": "GET" }, 400, "InvalidHeaderValue"],
    ];
    for (const [headers, status, code] of cases) {
      expect(await errorOf(await preflight(headers)), JSON.stringify(headers)).toMatchObject({
        status,
        code,
      });
    }
    const anyOrigin = await preflight({ Origin: "http://c.example", "Access-Control-Request-Method": "GET" });
    expect(anyOrigin.status).toBe(200);
    expect(anyOrigin.headers.get("access-control-max-age")).toBe("5");
  });

  test("answers carry the matching rule's headers and vary by Origin as the service's table says", async () => {
    await service.setProperties(FULL);
    const get = (origin?: string) =>
      signedFetch(`${server.url}/Tables`, { headers: origin === undefined ? {} : { Origin: origin } });
    const exact = await get("http://a.example");
    expect(exact.headers.get("access-control-allow-origin")).toBe("http://a.example");
    expect(exact.headers.get("access-control-allow-credentials")).toBe("true");
    expect(exact.headers.get("vary")).toBe("Origin");
    const exposed = exact.headers.get("access-control-expose-headers")?.split(",") ?? [];
    expect(exposed).toEqual(expect.arrayContaining(["x-ms-request-id", "x-ms-version"]));
    expect(exposed.every((h) => h.toLowerCase().startsWith("x-ms-"))).toBe(true);
    // Another origin meets the allow-all rule: `*`, no credentials, no Vary.
    const other = await get("http://c.example");
    expect(other.headers.get("access-control-allow-origin")).toBe("*");
    expect(other.headers.get("access-control-allow-credentials")).toBeNull();
    expect(other.headers.get("vary")).toBeNull();
    // Without Origin a GET meets the allow-all rule too.
    expect((await get()).headers.get("access-control-allow-origin")).toBe("*");
    // No rule for DELETE: no CORS headers; not a GET or HEAD, so no Vary either.
    await service.setProperties({ cors: [FULL.cors[0] as (typeof FULL.cors)[0]] });
    const unmatched = await get("http://c.example");
    expect(unmatched.headers.get("access-control-allow-origin")).toBeNull();
    expect(unmatched.headers.get("vary")).toBe("Origin");
    const post = await signedFetch(`${server.url}/Tables`, {
      method: "POST",
      body: JSON.stringify({ TableName: "corspost" }),
      headers: { Origin: "http://c.example" },
    });
    expect(post.status).toBe(201);
    expect(post.headers.get("vary")).toBeNull();
    // An error answer gets the headers as well (a browser must be able to read it).
    const missing = await signedFetch(`${server.url}/nosuchtable()`, {
      headers: { Origin: "http://a.example" },
    });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("access-control-allow-origin")).toBe("http://a.example");
  });

  test("GET answers follow the service's Vary table row by row, with and without Origin", async () => {
    // "CORS support for the Azure Storage services", "Understanding how the Vary header is set": the
    // seven rows (Origin sent, rules exist, allow-all rule matches, exact rule matches) → (Vary: Origin,
    // Access-Control-Allow-Origin: *, Access-Control-Expose-Headers). Azurite's tests expect no Vary
    // and no CORS headers at all without Origin (rows 2 and 3); the service's table says otherwise.
    const exact = { ...FULL.cors[0], allowedMethods: "GET", exposedHeaders: "x-ms-request-id" } as Rule;
    const all = { ...exact, allowedOrigins: "*" };
    const rows: [Rule[], string | undefined, [boolean, boolean, boolean]][] = [
      [[], undefined, [false, false, false]],
      [[exact], undefined, [true, false, false]],
      [[all], undefined, [false, true, true]],
      [[], "http://a.example", [false, false, false]],
      [[exact], "http://a.example", [true, false, true]],
      [[exact], "http://c.example", [true, false, false]],
      [[all], "http://c.example", [false, true, true]],
    ];
    for (const [cors, origin, expected] of rows) {
      await service.setProperties({ cors });
      const answer = await signedFetch(`${server.url}/Tables`, {
        headers: origin === undefined ? {} : { Origin: origin },
      });
      const seen = [
        answer.headers.get("vary") === "Origin",
        answer.headers.get("access-control-allow-origin") === "*",
        answer.headers.get("access-control-expose-headers") === "x-ms-request-id",
      ];
      expect(seen, `${cors.length} rules, Origin ${String(origin)}`).toEqual(expected);
      // The exact match echoes the origin (with credentials); the wildcard answer never carries them.
      const credentials = answer.headers.get("access-control-allow-credentials");
      if (expected[2] && !expected[1]) {
        expect(answer.headers.get("access-control-allow-origin")).toBe(origin);
        expect(credentials).toBe("true");
      } else expect(credentials).toBeNull();
    }
  });

  test.skipIf(!azuriteSelected)(
    "Azurite answers the same preflights the same way (needs Azurite)",
    async () => {
      const azurite = TableServiceClient.fromConnectionString(azuriteConnectionString(), {
        allowInsecureConnection: true,
      });
      const endpoint = /TableEndpoint=([^;]+)/.exec(azuriteConnectionString())?.[1] as string;
      const before = await readProperties(azurite);
      try {
        await azurite.setProperties({ cors: FULL_FOR_AZURITE.cors });
        await service.setProperties({ cors: FULL_FOR_AZURITE.cors });
        const cases: Record<string, string>[] = [
          {
            Origin: "http://b.example",
            "Access-Control-Request-Method": "PUT",
            "Access-Control-Request-Headers": "x-custom",
          },
          { Origin: "http://a.example", "Access-Control-Request-Method": "DELETE" },
          { Origin: "http://c.example", "Access-Control-Request-Method": "GET" },
          { Origin: "http://c.example" },
        ];
        for (const headers of cases) {
          const ours = await fetch(`${server.url}/Tables`, { method: "OPTIONS", headers });
          const theirs = await fetch(`${endpoint}/Tables`, { method: "OPTIONS", headers });
          expect(ours.status, JSON.stringify(headers)).toBe(theirs.status);
          expect(ours.headers.get("x-ms-error-code")).toBe(theirs.headers.get("x-ms-error-code"));
          expect(ours.headers.get("access-control-allow-origin")).toBe(
            theirs.headers.get("access-control-allow-origin"),
          );
          expect(ours.headers.get("access-control-allow-methods")).toBe(
            theirs.headers.get("access-control-allow-methods"),
          );
        }
      } finally {
        await azurite.setProperties(before);
      }
    },
  );
});
