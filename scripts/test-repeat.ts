/**
 * `npm run test:repeat [-- --times N] [-- --seed S]`: runs the fault, concurrency and crash test files
 * N times (default 5, or env TIMES), each run under its own TABLEKIT_TEST_SEED (S, S+1, …; default 1),
 * and stops at the first failing run, printing the run and its seed so it can be replayed with
 * `TABLEKIT_TEST_SEED=<seed> npx vitest run <files>`. Extra arguments after the options go to vitest.
 */
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The files whose outcome depends on faults, concurrency or process kills. */
export const REPEATED_FILES = [
  "test/writes/",
  "test/bulk/",
  "test/conformance/list-indexes.test.ts",
  "test/indexes/crash-kill-memory.test.ts",
  "test/indexes/crash-kill-azurite.test.ts",
  "test/indexes/crash-points.test.ts",
  "test/support/support.test.ts",
  "test/eventual/",
  "test/pacing/",
  "test/large/crash-kill.test.ts",
  "test/conformance/summaries.test.ts",
  "test/summaries-remote/",
  "test/conformance/wide-entity-races.test.ts",
  "test/server/fuzz.test.ts",
  "test/server/batch-body.test.ts",
  "test/server/odata-entity.test.ts",
  "test/server/service-properties.test.ts",
  "test/server/table-acl.test.ts",
  // The combination suite: with TABLEKIT_COMPOSE_MATRIX=full (below), every combination on every store.
  "test/compose/",
  // Explained plans against what is sent: the full feature-pair matrix on every store.
  "test/planner/pairs-plan.test.ts",
  // Shard moves raced by writers and scans, and cut short at each step.
  "test/sharded/",
];

/** Switches the repeated files' big matrices and crash sweeps to their full size (the default run keeps a sample). */
const REPEAT_ENV = { TABLEKIT_COMPOSE_MATRIX: "full", TABLEKIT_CRASH_SWEEPS: "full" };

function option(args: string[], name: string): string | undefined {
  const index = args.indexOf(name);
  if (index < 0) return undefined;
  const value = args[index + 1];
  args.splice(index, 2);
  return value;
}

function positiveInteger(text: string | undefined, fallback: number, what: string): number {
  if (text === undefined || text === "") return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 0) {
    console.error(`test:repeat: ${what} must be a non-negative integer, got '${text}'`);
    process.exit(2);
  }
  return value;
}

const args = process.argv.slice(2);
const times = positiveInteger(option(args, "--times") ?? process.env.TIMES, 5, "--times");
const firstSeed = positiveInteger(option(args, "--seed") ?? process.env.SEED, 1, "--seed");
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const vitest = join(root, "node_modules", "vitest", "vitest.mjs");

for (let run = 1; run <= times; run++) {
  const seed = firstSeed + run - 1;
  console.log(`\n=== test:repeat run ${run}/${times} (TABLEKIT_TEST_SEED=${seed}) ===`);
  const result = spawnSync(process.execPath, [vitest, "run", ...REPEATED_FILES, ...args], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, ...REPEAT_ENV, TABLEKIT_TEST_SEED: String(seed) },
  });
  if (result.status !== 0) {
    console.error(
      `\ntest:repeat: run ${run}/${times} FAILED (TABLEKIT_TEST_SEED=${seed}); replay with\n` +
        `  TABLEKIT_COMPOSE_MATRIX=full TABLEKIT_CRASH_SWEEPS=full TABLEKIT_TEST_SEED=${seed} npx vitest run ${REPEATED_FILES.join(" ")}`,
    );
    process.exit(result.status ?? 1);
  }
}
console.log(
  `\ntest:repeat: ${times} runs passed (TABLEKIT_TEST_SEED ${firstSeed}..${firstSeed + times - 1})`,
);
