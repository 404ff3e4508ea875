import { expect, it } from "vitest";
import { testSeed } from "../support/seeded-random.js";
import { memoryFileTarget, runCrashTest } from "./crash-kill.js";

const SEED = testSeed(0xc0ffee);
/** Each kill spawns a child Node process; a dozen covers every step of a write without loading 2 cores for long. */
const KILLS = 12;

// The child writes to a MemoryStore file; a kill can leave a torn last line, which is not committed.
// The timeout is a safety net for a loaded machine (12 child processes), not a performance limit.
it(`SIGKILL crash test on a MemoryStore file: after every kill, repairIndexes leaves zero drift and no lost entity (seed ${SEED})`, {
  timeout: 300_000,
}, async () => {
  const summary = await runCrashTest(memoryFileTarget(KILLS), SEED);
  console.log(summary.text);
  expect(summary.kills).toBe(KILLS);
  // Every child froze at its chosen line, so each kill landed exactly where the seed put it.
  expect(summary.linesSeen).toBe(summary.linesChosen);
  expect(summary.requestsSeen).toBeGreaterThan(0);
  // Some kills landed inside index work (an intent left for repair), not only between writes.
  expect(summary.killsWithWork).toBeGreaterThan(0);
});
