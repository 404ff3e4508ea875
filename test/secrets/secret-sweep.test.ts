import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { inspect } from "node:util";
import { AzureNamedKeyCredential, generateAccountSas } from "@azure/data-tables";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AzureStore,
  Column,
  Entity,
  StoreError,
  TableContext,
  type TableKitEvent,
  ValidationError,
} from "../../src/index.js";
import { startTableServer, type TableServer } from "../../src/server/table-server.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { connectionStringSecrets, redactSecrets } from "../../src/util/redact-secrets.js";
import { azuriteConnectionString } from "../support/azurite.js";
import { azuriteSelected } from "../support/stores.js";
import { uniquePrefix } from "../support/table-names.js";

// No account key, SAS signature or connection-string secret reaches any output: errors (message,
// stack, cause chain, JSON, every property reachable from them), events, spans, and the CLI's stdout
// and stderr. Swept through the public API and the command line.

const CLI = resolve(dirname(fileURLToPath(import.meta.url)), "../../src/cli/main.ts");

// Forged secrets: valid base64, long enough to be unmistakable in any output.
const KEY = "c2VjcmV0LWFjY291bnQta2V5LWZvci10aGUtc3dlZXAtb2YtdGFibGVraXQtMDEyMzQ1Njc4OQ==";
const SIG = "Zm9yZ2VkLXNpZ25hdHVyZS1vZi10aGUtc3dlZXAtMDEyMzQ1Njc4OQ==";
/** A key that is not base64: the account key as pasted with a stray character. */
const NOT_BASE64 = "c2VjcmV0LWtleS13aXRoLWEtc3RyYXk!Y2hhcmFjdGVyLWluLWl0";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(provider);

/** Every text reachable from a value: own properties (hidden ones too), map entries, to a depth. */
function reachableText(value: unknown, out: string[] = [], seen = new Set<unknown>(), depth = 0): string[] {
  if (typeof value === "string") out.push(value);
  else if (typeof value === "number" || typeof value === "boolean") out.push(String(value));
  if (value === null || typeof value !== "object" || seen.has(value) || depth > 8) return out;
  seen.add(value);
  if (value instanceof Map) {
    for (const [k, v] of value) {
      reachableText(k, out, seen, depth + 1);
      reachableText(v, out, seen, depth + 1);
    }
  }
  for (const name of Object.getOwnPropertyNames(value)) {
    // Sockets and agents are the transport, not the error's content.
    if (name === "agent" || name === "abortSignal" || name === "streamResponseStatusCodes") continue;
    let item: unknown;
    try {
      item = (value as Record<string, unknown>)[name];
    } catch {
      continue;
    }
    if (typeof item !== "function") reachableText(item, out, seen, depth + 1);
  }
  return out;
}

/** Everything a log line or a debugger could show of an error and its causes. */
function everythingShown(error: unknown): string {
  const shown: string[] = [];
  for (let e: unknown = error, depth = 0; e !== undefined && depth < 6; depth++) {
    shown.push(String(e), inspect(e, { depth: 8, showHidden: true }), JSON.stringify(e) ?? "");
    shown.push(inspect(e, { depth: 8, showHidden: true, customInspect: false }));
    if (e instanceof Error) shown.push(e.message, e.stack ?? "");
    reachableText(e, shown);
    e = e instanceof Error ? e.cause : undefined;
  }
  return shown.join("\n");
}

/** Fails with the leaking text when `output` contains a secret (as given or percent-encoded). */
function expectNoSecret(output: string, secrets: readonly string[]): void {
  for (const secret of secrets) {
    for (const form of new Set([secret, encodeURIComponent(secret)])) {
      const at = output.indexOf(form);
      expect(at < 0 ? "" : output.slice(Math.max(0, at - 80), at + form.length + 20)).toBe("");
    }
  }
}

/** Runs `tablekit …`; its exit code and everything it printed. */
function tablekit(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", CLI, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (c: Buffer) => {
    output += c.toString("utf8");
  });
  child.stderr.on("data", (c: Buffer) => {
    output += c.toString("utf8");
  });
  return new Promise((done) => child.once("close", (code) => done({ code, output })));
}

const ENDPOINT = "https://acct.table.core.windows.net";
const SAS = `sv=2019-02-02&ss=t&srt=sco&sp=rl&se=2030-01-01T00%3A00%3A00Z&sig=${encodeURIComponent(SIG)}`;

/** Malformed connection strings: what the error must say, and what it must never show. */
const MALFORMED: ReadonlyArray<{ cs: unknown; says: string | RegExp }> = [
  { cs: undefined, says: "expected a string, got undefined" },
  { cs: null, says: "expected a string, got null" },
  { cs: 42, says: "expected a string, got number" },
  { cs: "", says: "it is empty" },
  { cs: " ; ", says: /expected AccountName and AccountKey/ },
  {
    cs: `AccountName=acct;AcountKey=${KEY}`,
    says: "unknown setting 'AcountKey' (did you mean 'AccountKey'?)",
  },
  {
    cs: `AcountName=acct;AccountKey=${KEY}`,
    says: "unknown setting 'AcountName' (did you mean 'AccountName'?)",
  },
  {
    cs: `AccountName=acct;AccountKey=${KEY};EndpointSufix=core.windows.net`,
    says: "unknown setting 'EndpointSufix' (did you mean 'EndpointSuffix'?)",
  },
  { cs: `AccountName=acct;Password=${KEY}`, says: "unknown setting 'Password'" },
  { cs: `AccountKey=${KEY}`, says: "missing setting 'AccountName' (AccountKey needs it)" },
  { cs: "AccountName=acct", says: /missing setting 'AccountKey'/ },
  { cs: "AccountName=acct;AccountKey=", says: "setting 'AccountKey' is empty" },
  { cs: `AccountName=acct;AccountKey=${KEY};AccountKey=${KEY}`, says: "setting 'AccountKey' is given twice" },
  { cs: `AccountName=acct;${KEY}`, says: "a part is not a setting (not shown: it may be a secret)" },
  { cs: `AccountName=acct;${KEY.replace(/=+$/, "")}`, says: "a part is not a setting (not shown" },
  {
    cs: "AccountName=acct;AccountKey",
    says: "setting 'AccountKey' has no value (expected AccountKey=value)",
  },
  { cs: `AccountName=acct;AccountKey=${NOT_BASE64}`, says: "setting 'AccountKey' is not base64" },
  {
    cs: `AccountName=acct;AccountKey=${KEY};DefaultEndpointsProtocol=ftp`,
    says: "setting 'DefaultEndpointsProtocol' must be 'https' or 'http'",
  },
  {
    cs: `AccountName=acct;AccountKey=${KEY};TableEndpoint=not a url`,
    says: "Invalid Azure Table endpoint URL",
  },
  {
    cs: `AccountName=acct;AccountKey=${KEY};TableEndpoint=http://example.com/acct`,
    says: /uses http:\/\//,
  },
  {
    cs: `TableEndpoint=${ENDPOINT};SharedAccesSignature=${SAS}`,
    says: "unknown setting 'SharedAccesSignature' (did you mean 'SharedAccessSignature'?)",
  },
  { cs: `SharedAccessSignature=${SAS}`, says: "missing setting 'TableEndpoint'" },
  {
    cs: `TableEndpoint=${ENDPOINT};SharedAccessSignature=${SAS.replace("&sig=", "&sgi=")}`,
    says: "setting 'SharedAccessSignature' has no 'sig'",
  },
  {
    cs: `TableEndpoint=ht tp://bad?sv=1&sig=${SIG};SharedAccessSignature=${SAS}`,
    says: "Invalid Azure Table endpoint URL",
  },
  { cs: "UseDevelopmentStorage=yes", says: "setting 'UseDevelopmentStorage' must be 'true'" },
];

describe("malformed connection strings: a ValidationError naming the setting, never a secret", () => {
  it.each(MALFORMED.map((c) => [inspect(c.cs), c] as const))("%s", (_, { cs, says }) => {
    let error: unknown;
    try {
      AzureStore.fromConnectionString(cs as string);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ValidationError);
    if (typeof says === "string") expect((error as Error).message).toContain(says);
    else expect((error as Error).message).toMatch(says);
    expectNoSecret(everythingShown(error), [KEY, SIG, NOT_BASE64, SAS]);
  });
});

describe("connectionStringSecrets (what the CLI scrubs from its lines)", () => {
  it("takes every value that is not a public setting, misspelt keys and pasted parts included", () => {
    const cs = `AccountName=acct;AcountKey=${KEY};TableEndpoint=https://h/?sv=1&sig=${encodeURIComponent(SIG)};${NOT_BASE64}`;
    const secrets = connectionStringSecrets(cs);
    for (const secret of [KEY, SIG, encodeURIComponent(SIG), NOT_BASE64]) expect(secrets).toContain(secret);
    expect(secrets).not.toContain("acct");
    expect(redactSecrets(`failed for ${cs}`, secrets)).toBe(
      "failed for AccountName=acct;AcountKey=***;TableEndpoint=https://h/?sv=1&sig=***;***",
    );
    expect(connectionStringSecrets("UseDevelopmentStorage=true")).toEqual([]);
  });
});

@Entity({ table: "Swept", partitionKey: "{group}", rowKey: "{id}" })
class Swept {
  @Column({ type: "String" }) group!: string;
  @Column({ type: "String" }) id!: string;
}

/** One failing request of each kind through a TableContext: its errors, events and spans, all shown. */
async function failEveryWay(store: AzureStore): Promise<{ errors: unknown[]; shown: string }> {
  exporter.reset();
  const events: TableKitEvent[] = [];
  const tablePrefix = uniquePrefix("sweep");
  const db = new TableContext({ store, tablePrefix, retry: false, onEvent: (event) => events.push(event) });
  const repo = db.repository(Swept);
  const settled = async (run: () => Promise<unknown>) => {
    try {
      return await run();
    } catch (error) {
      return error;
    }
  };
  const errors = [
    await settled(() => repo.insert(Object.assign(new Swept(), { group: "g", id: "1" }))),
    await settled(() => repo.get({ group: "g", id: "1" })),
    await settled(() =>
      repo.bulkInsert([
        Object.assign(new Swept(), { group: "g", id: "2" }),
        Object.assign(new Swept(), { group: "g", id: "3" }),
      ]),
    ),
    await settled(() => store.queryPage(`${tablePrefix}Swept`, {})),
  ];
  const spans = exporter.getFinishedSpans().map((span) => ({
    name: span.name,
    attributes: span.attributes,
    status: span.status,
    events: span.events,
  }));
  // The spans are there to be searched (tracing is on when @opentelemetry/api is installed).
  expect(spans.length).toBeGreaterThan(0);
  const shown = [
    ...errors.map(everythingShown),
    ...events.map((event) => everythingShown(event)),
    JSON.stringify(spans),
  ].join("\n");
  return { errors, shown };
}

/** The sweep's failing requests against one account (the reference store, or Azurite). */
function sweepFailingRequests(account: () => { url: string; name: string; key: string }) {
  it("a wrong account key (403)", async () => {
    const { url, name } = account();
    const store = AzureStore.fromConnectionString(
      `AccountName=${name};AccountKey=${KEY};TableEndpoint=${url}`,
      { allowInsecureConnection: true },
    );
    const { errors, shown } = await failEveryWay(store);
    expect(errors[0]).toBeInstanceOf(StoreError);
    expect(errors[0]).toMatchObject({ statusCode: 403 });
    expectNoSecret(shown, [KEY]);
  });

  it("a SAS whose signature is wrong (403), and a good SAS on a missing table (404)", async () => {
    const { url, name, key } = account();
    const good = generateAccountSas(new AzureNamedKeyCredential(name, key), {
      resourceTypes: "sco",
      permissions: {
        write: true,
        add: true,
        list: true,
        update: true,
        delete: true,
        query: true,
      },
    });
    const goodSig = decodeURIComponent(/(?:^|&)sig=([^&]*)/.exec(good)![1]!);
    const forged = good.replace(/sig=[^&]*/, `sig=${encodeURIComponent(SIG)}`);
    const wrong = AzureStore.fromConnectionString(`TableEndpoint=${url};SharedAccessSignature=${forged}`, {
      allowInsecureConnection: true,
    });
    const refused = await failEveryWay(wrong);
    expect(refused.errors[0]).toMatchObject({ statusCode: 403 });
    expectNoSecret(refused.shown, [SIG]);

    const missing = AzureStore.fromConnectionString(`TableEndpoint=${url};SharedAccessSignature=${good}`, {
      allowInsecureConnection: true,
    });
    const notFound = await failEveryWay(missing);
    expect(notFound.errors[3]).toMatchObject({ statusCode: 404, serviceCode: "TableNotFound" });
    expectNoSecret(notFound.shown, [goodSig]);
  });
}

// The reference store with a key of its own (so that its key is a secret too).
const SERVER_KEY = Buffer.from("the reference server's own account key for the sweep").toString("base64");
let server: TableServer;
const dir = mkdtempSync(join(tmpdir(), "tablekit-sweep-"));
beforeAll(async () => {
  server = await startTableServer({ port: 0, store: new MemoryStore(), account: "sweep", key: SERVER_KEY });
});
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
  trace.disable();
  context.disable();
});

describe("failing requests on the reference store (tablekit serve)", () => {
  sweepFailingRequests(() => ({ url: server.url, name: "sweep", key: SERVER_KEY }));
});

describe.skipIf(!azuriteSelected)("failing requests on Azurite (needs Azurite)", () => {
  sweepFailingRequests(() => {
    const cs = azuriteConnectionString();
    const setting = (name: string) => new RegExp(`${name}=([^;]*)`).exec(cs)![1]!;
    return { url: setting("TableEndpoint"), name: setting("AccountName"), key: setting("AccountKey") };
  });
});

describe("spans", () => {
  it("an error of any origin is recorded with its secrets as ***", async () => {
    // A store whose failure is not one of tablekit's: its text carries a SAS URL and a key.
    class LeakyStore extends MemoryStore {
      override async getEntity(): Promise<never> {
        throw new Error(`GET https://acct.table.core.windows.net/t?sv=1&sig=${SIG} (AccountKey=${KEY})`);
      }
    }
    exporter.reset();
    const db = new TableContext({
      store: new LeakyStore(),
      tablePrefix: uniquePrefix("sweep"),
      retry: false,
    });
    await expect(db.repository(Swept).get({ group: "g", id: "1" })).rejects.toThrow();
    const spans = exporter.getFinishedSpans();
    const failed = spans.filter((span) => span.status.message !== undefined);
    expect(failed.length).toBeGreaterThan(0);
    expect(failed[0]!.status.message).toContain("sig=***");
    expectNoSecret(JSON.stringify(spans.map((span) => [span.attributes, span.status, span.events])), [
      KEY,
      SIG,
    ]);
  });
});

describe("the command line", () => {
  it("a misspelt setting: names it, exit 1, no secret", async () => {
    const run = await tablekit([
      "export",
      "--table",
      "T",
      "--connection-string",
      `AccountName=a;AcountKey=${KEY}`,
    ]);
    expect(run.code).toBe(1);
    expect(run.output).toBe(
      "tablekit export: Invalid Azure Storage connection string: unknown setting 'AcountKey' (did you mean 'AccountKey'?)\n",
    );
  });

  it("a wrong key (export, 403) and a forged SAS (copy --to, 403): no secret, no file left", async () => {
    const out = join(dir, "never.ndjson");
    const wrongKey = `AccountName=sweep;AccountKey=${KEY};TableEndpoint=${server.url}`;
    const exported = await tablekit(["export", "--table", "T", "--out", out], {
      TABLEKIT_CONNECTION_STRING: wrongKey,
    });
    expect(exported.code).toBe(1);
    expect(exported.output).toMatch(/^tablekit export: .*403/);
    expectNoSecret(exported.output, [KEY]);
    expect(existsSync(out)).toBe(false);

    const source = AzureStore.fromConnectionString(
      `AccountName=sweep;AccountKey=${SERVER_KEY};TableEndpoint=${server.url}`,
      { allowInsecureConnection: true },
    );
    await source.createTable("SweepSource");
    await source.insert("SweepSource", { partitionKey: "p", rowKey: "r" });
    const sas = `sv=2019-02-02&ss=t&srt=sco&sp=rwdlacu&se=2030-01-01T00%3A00%3A00Z&sig=${encodeURIComponent(SIG)}`;
    const copied = await tablekit([
      "copy",
      "--table",
      "SweepSource",
      "--to",
      `TableEndpoint=${server.url};SharedAccessSignature=${sas}`,
      "--connection-string",
      `AccountName=sweep;AccountKey=${SERVER_KEY};TableEndpoint=${server.url}`,
    ]);
    expect(copied.code).toBe(1);
    expect(copied.output).toMatch(/^tablekit copy: .*403/m);
    expectNoSecret(copied.output, [SIG, SERVER_KEY]);
  });
});
