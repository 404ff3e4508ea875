/**
 * The numbers the guides state about retries, limits, page sizes and concurrency are the code's: each
 * expected phrase is built from the exported constant, so changing a default without its guide (or a
 * guide without the code) fails here. Phrases are matched with line breaks read as spaces.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DEFAULT_IMPORT_CONCURRENCY } from "../../src/movement/import.js";
import { FAN_OUT_READS_AT_ONCE } from "../../src/query/fan-out.js";
import { DEFAULT_BULK_CONCURRENCY } from "../../src/repository/core/bulk/bulk-runner.js";
import { DEFAULT_GET_MANY_CONCURRENCY } from "../../src/repository/core/get-many.js";
import { DEFAULT_MAX_CONCURRENT_REQUESTS } from "../../src/repository/pipeline/request-slots.js";
import { DEFAULT_RETRY } from "../../src/repository/pipeline/retry-policy.js";
import { DEFAULT_REQUEST_TIMEOUT_MS } from "../../src/store/azure/azure-store-options.js";
import { ServiceLimits } from "../../src/util/service-limits.js";

/** The guides that state retry, limit, page-size or concurrency numbers. */
const GUIDES = [
  "README.md",
  ...["consistency", "cosmos-db", "data-movement", "keys-and-queries", "performance", "serve"],
  ...["strict-as-azure", "testing", "writes-and-transactions"].map((name) => `docs/${name}.md`),
].map((path) => (path.endsWith(".md") ? path : `docs/${path}.md`));

/** A guide's text with every run of white space (line breaks included) as one space. */
function guide(path: string): string {
  return readFileSync(new URL(`../../${path}`, import.meta.url), "utf8").replace(/\s+/g, " ");
}

/** 60000 → "60,000". */
const grouped = (n: number) => n.toLocaleString("en-US");
/** 20000 → "20 s", 500 → "0.5 s". */
const seconds = (ms: number) => `${ms / 1000} s`;

const { minDelayMs, maxDelayMs, maxElapsedMs } = DEFAULT_RETRY;

/** [guide, phrase the code's numbers make]: every number a guide states on these subjects. */
const STATED: ReadonlyArray<[string, string]> = [
  // Retries.
  ["docs/strict-as-azure.md", "| `retries` | none |"],
  ["docs/strict-as-azure.md", `| \`minDelayMs\` | ${grouped(minDelayMs)} |`],
  ["docs/strict-as-azure.md", `| \`maxDelayMs\` | ${grouped(maxDelayMs)} |`],
  ["docs/strict-as-azure.md", `| \`maxElapsedMs\` | ${grouped(maxElapsedMs)} |`],
  ["docs/strict-as-azure.md", `no attempt starts later than ${maxElapsedMs / 1000} seconds after the first`],
  ["docs/consistency.md", `an operation retries for ${seconds(maxElapsedMs)} from its first attempt`],
  ["docs/consistency.md", `(\`maxElapsedMs\` ${grouped(maxElapsedMs)})`],
  [
    "docs/consistency.md",
    `from ${minDelayMs} ms (\`minDelayMs\`) up to ${seconds(maxDelayMs)} (\`maxDelayMs\`)`,
  ],
  ["docs/consistency.md", `(\`requestTimeoutMs\`, ${seconds(DEFAULT_REQUEST_TIMEOUT_MS)})`],
  ["docs/cosmos-db.md", `(\`retry.maxElapsedMs\`, ${seconds(maxElapsedMs)} from the first attempt)`],
  ["docs/testing.md", `the default retries for ${seconds(maxElapsedMs)}, with no count`],
  // Concurrency.
  ["docs/consistency.md", `at most ${DEFAULT_MAX_CONCURRENT_REQUESTS} store requests in flight by default`],
  ["docs/consistency.md", `reads at most ${FAN_OUT_READS_AT_ONCE} buckets at a time`],
  ["docs/performance.md", `a fan-out reads at most ${FAN_OUT_READS_AT_ONCE} buckets at a time`],
  ["docs/performance.md", `a context has at most ${DEFAULT_MAX_CONCURRENT_REQUESTS} requests in flight`],
  ["docs/writes-and-transactions.md", `default ${DEFAULT_BULK_CONCURRENCY} batches in flight`],
  ["docs/keys-and-queries.md", `one point read per key, ${DEFAULT_GET_MANY_CONCURRENCY} in flight`],
  ["docs/data-movement.md", `(batches in flight, default ${DEFAULT_IMPORT_CONCURRENCY})`],
  // Limits and page sizes.
  ["docs/strict-as-azure.md", `4 MiB (${grouped(ServiceLimits.maxTransactionBytes)} bytes)`],
  ["docs/writes-and-transactions.md", `≤ ${ServiceLimits.maxTransactionOperations} operations`],
  ["docs/serve.md", `at most ${grouped(ServiceLimits.maxPageSize)} per page`],
  ["README.md", `pages at most ${grouped(ServiceLimits.maxPageSize)} entities`],
];

describe("the guides state the code's numbers", () => {
  it("the retry defaults have no count, as the guides say (`retries` none)", () => {
    expect(DEFAULT_RETRY).not.toHaveProperty("retries");
  });

  it.each(STATED)("%s states %j", (path, phrase) => {
    expect(guide(path)).toContain(phrase);
  });

  it("no guide gives the retries a default count", () => {
    for (const path of GUIDES) {
      const text = guide(path);
      expect(text, path).not.toMatch(
        /\bdefaults? (?:of )?\d+ retries|\b\d+ retries by default|\(defaults \d+, /,
      );
      expect(text, path).not.toMatch(/\| `retries` \| \d/);
    }
  });
});
