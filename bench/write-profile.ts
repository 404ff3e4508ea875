/**
 * Client CPU of tablekit's writes against the raw @azure/data-tables SDK with the service taken out:
 * both go through the real SDK pipeline (request building, SharedKey signing, response parsing) down
 * to an HTTP client that answers at once in this process (`answeringHttpClient`), so the only
 * difference between the two sides is tablekit's own work, and no socket or other process adds noise.
 *
 *   node scripts/write-profile.mjs [upsert|transaction] [ours|sdk|both] [rounds]
 *
 * (`--promises`: the async resources, mostly promises, each side creates per write instead;
 * `--stacks` with `ours` or `sdk`: where one write creates them;
 * `--azurite`: against a real Azurite started here instead, the network and the service included)
 * prints the CPU per write of each side (interleaved rounds, medians) and, with `ours` or `sdk`
 * alone and `--cpu-prof` passed on, leaves a V8 CPU profile of that side only
 * (`node scripts/write-profile.mjs upsert ours 20 --cpu-prof`; read it with `--top` below).
 */
import "reflect-metadata";
import { createHook } from "node:async_hooks";
import {
  createHttpHeaders,
  type HttpClient,
  type PipelineRequest,
  type PipelineResponse,
} from "@azure/core-rest-pipeline";
import { TableClient, type TableTransaction } from "@azure/data-tables";
import { startAzurite } from "../scripts/azurite-process.js";
import { AzureStore, TableContext } from "../src/index.js";
import { BenchItem, benchItem, handWrittenToWire } from "./bench-entity.js";

const ETAG = `W/"datetime'2025-01-01T00%3A00%3A00.0000000Z'"`;

/** A `$batch` answer of `count` successful sub-responses, as the service words it. */
function batchAnswer(count: number): string {
  const part = [
    "--changesetresponse_00000000-0000-0000-0000-000000000000",
    "Content-Type: application/http",
    "Content-Transfer-Encoding: binary",
    "",
    "HTTP/1.1 204 No Content",
    "X-Content-Type-Options: nosniff",
    "Cache-Control: no-cache",
    "DataServiceVersion: 1.0;",
    `ETag: ${ETAG}`,
    "",
    "",
  ].join("\r\n");
  return [
    "--batchresponse_00000000-0000-0000-0000-000000000000",
    "Content-Type: multipart/mixed; boundary=changesetresponse_00000000-0000-0000-0000-000000000000",
    "",
    `${part.repeat(count)}--changesetresponse_00000000-0000-0000-0000-000000000000--`,
    "--batchresponse_00000000-0000-0000-0000-000000000000--",
    "",
  ].join("\r\n");
}

/** Answers every request at once: a `$batch` with one 204 per sub-request, anything else 204 with an ETag. */
export function answeringHttpClient(): HttpClient & { requests: number } {
  const answers = new Map<number, string>();
  const client = {
    requests: 0,
    sendRequest(request: PipelineRequest): Promise<PipelineResponse> {
      client.requests++;
      if (request.url.endsWith("$batch")) {
        const body = typeof request.body === "string" ? request.body : "";
        const count = body.split("\r\nContent-Type: application/http\r\n").length - 1;
        let answer = answers.get(count);
        if (answer === undefined) {
          answer = batchAnswer(count);
          answers.set(count, answer);
        }
        return Promise.resolve({
          request,
          status: 202,
          headers: createHttpHeaders({
            "content-type": "multipart/mixed; boundary=batchresponse_00000000-0000-0000-0000-000000000000",
          }),
          bodyAsText: answer,
        });
      }
      return Promise.resolve({
        request,
        status: 204,
        headers: createHttpHeaders({ etag: ETAG, "x-ms-version": "2019-02-02" }),
      });
    },
  };
  return client;
}

const CONNECTION =
  "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;" +
  "AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;" +
  "TableEndpoint=http://127.0.0.1:10002/devstoreaccount1;";

/** The two sides of one kind of write, each one write per call (a transaction: 100 upserts). */
export async function writeSides(
  kind: "upsert" | "transaction",
  azurite: string | undefined,
): Promise<{
  ours: (i: number) => Promise<unknown>;
  sdk: (i: number) => Promise<unknown>;
}> {
  const answering = azurite === undefined ? { httpClient: answeringHttpClient() } : {};
  const db = new TableContext({
    store: AzureStore.fromConnectionString(azurite ?? CONNECTION, {
      ...answering,
      // `--no-timeout`: tablekit's side without its per-request timeout (a timer per request), to weigh it.
      ...(process.argv.includes("--no-timeout") ? { requestTimeoutMs: 0 } : {}),
    }),
  });
  if (azurite !== undefined) await db.ensureTables(BenchItem);
  const repo = db.repository(BenchItem);
  const sdk = TableClient.fromConnectionString(azurite ?? CONNECTION, repo.table, {
    allowInsecureConnection: true,
    ...answering,
  });
  if (kind === "upsert") {
    return {
      ours: (i) => repo.upsert(benchItem("upsert", i)),
      sdk: (i) => sdk.upsertEntity(handWrittenToWire(benchItem("upsert", i)) as never, "Replace"),
    };
  }
  return {
    ours: (id) =>
      db.transaction((t) => {
        for (let i = 0; i < 100; i++) t.upsert(benchItem(`tx${id % 50}`, i));
      }),
    sdk: (id) => {
      const actions: TableTransaction["actions"] = [];
      for (let i = 0; i < 100; i++)
        actions.push(["upsert", handWrittenToWire(benchItem(`tx${id % 50}`, i)) as never, "Replace"]);
      return sdk.submitTransaction(actions);
    },
  };
}

async function cpuPer(count: number, fn: (i: number) => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < count; i++) await fn(i);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / count;
}

/** Promises (and other async resources) created per call of `fn`: deterministic, unlike CPU time. */
async function promisesPer(count: number, fn: (i: number) => Promise<unknown>): Promise<number> {
  let created = 0;
  const hook = createHook({
    init() {
      created++;
    },
  });
  hook.enable();
  for (let i = 0; i < count; i++) await fn(i);
  hook.disable();
  return created / count;
}

/**
 * Where one write of `fn` creates its async resources: counts by the two innermost frames of the
 * creating stack (for `--stacks`), tablekit's and the SDK's frames alike.
 */
async function promiseSites(fn: (i: number) => Promise<unknown>): Promise<Array<[string, number]>> {
  const sites = new Map<string, number>();
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 40;
  const hook = createHook({
    init(_id, type) {
      const frames = (new Error().stack ?? "")
        .split("\n")
        .slice(2)
        .map((line) => line.trim().replace(/\(.*(\.bundle\.mjs|node_modules\/)/, "("))
        .filter((line) => !line.includes("node:internal/async_hooks"));
      const site = `${type} ${frames.slice(0, 2).join(" < ")}`;
      sites.set(site, (sites.get(site) ?? 0) + 1);
    },
  });
  hook.enable();
  await fn(0);
  hook.disable();
  Error.stackTraceLimit = limit;
  return [...sites].sort((a, b) => b[1] - a[1]);
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

async function main(): Promise<void> {
  const args = process.argv.slice(2).filter((arg) => !arg.startsWith("--"));
  const [kind = "upsert", side = "both", roundsText = "12"] = args;
  if (kind !== "upsert" && kind !== "transaction") throw new Error("kind: upsert or transaction");
  const azurite = process.argv.includes("--azurite") ? await startAzurite() : undefined;
  try {
    await measure(kind, side, Number(roundsText), azurite?.connectionString);
  } finally {
    await azurite?.stop();
  }
}

async function measure(
  kind: "upsert" | "transaction",
  side: string,
  rounds: number,
  azurite: string | undefined,
): Promise<void> {
  const sides = await writeSides(kind, azurite);
  const only = process.argv.find((arg) => arg.startsWith("--writes="));
  if (only !== undefined) {
    // Just this many writes of one side (after as many to warm up), for a counting tool
    // (`valgrind --tool=cachegrind`): the difference of two counts is the cost of the extra writes.
    const fn = side === "sdk" ? sides.sdk : sides.ours;
    const writes = Number(only.slice("--writes=".length));
    for (let i = 0; i < writes; i++) await fn(i);
    return;
  }
  if (process.argv.includes("--stacks")) {
    const fn = side === "sdk" ? sides.sdk : sides.ours;
    for (let i = 0; i < 3; i++) await fn(i);
    for (const [site, count] of await promiseSites(fn)) console.log(`${String(count).padStart(5)}  ${site}`);
    return;
  }
  if (process.argv.includes("--promises")) {
    const ours = await promisesPer(100, sides.ours);
    const sdk = await promisesPer(100, sides.sdk);
    console.log(`${kind}: async resources per write, tablekit ${ours}, SDK ${sdk}`);
    return;
  }
  const count = (kind === "upsert" ? 2_000 : 20) / (azurite === undefined ? 1 : 10);
  const samples = { ours: [] as number[], sdk: [] as number[] };
  for (let round = 0; round < rounds + 2; round++) {
    // Alternating which side goes first; the first two rounds warm the JIT up.
    const order = round % 2 === 0 ? (["ours", "sdk"] as const) : (["sdk", "ours"] as const);
    for (const name of order) {
      if (side !== "both" && side !== name) continue;
      const cpu = await cpuPer(count, sides[name]);
      if (round >= 2) samples[name].push(cpu);
    }
  }
  const ours = median(samples.ours);
  const sdk = median(samples.sdk);
  const ratio = side === "both" ? ` = ${(ours / sdk).toFixed(3)}×` : "";
  // Contention from other processes only adds CPU time: the fastest round is the steadiest estimate.
  const fastest = (values: number[]) => Math.min(...values);
  const minRatio = side === "both" ? ` = ${(fastest(samples.ours) / fastest(samples.sdk)).toFixed(3)}×` : "";
  console.log(
    `${kind}: CPU per write (median of ${rounds} rounds), tablekit ${ours?.toFixed(1)} µs, SDK ${sdk?.toFixed(1)} µs${ratio}; ` +
      `fastest rounds ${fastest(samples.ours).toFixed(1)} µs, ${fastest(samples.sdk).toFixed(1)} µs${minRatio}`,
  );
}

await main();
