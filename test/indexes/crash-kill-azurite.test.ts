import { describe, expect, it } from "vitest";
import { testSeed } from "../support/seeded-random.js";
import { azuriteSelected } from "../support/stores.js";
import { azuriteTarget, runCrashTest } from "./crash-kill.js";

const SEED = testSeed(0xc0ffee + 1);
/** Each kill spawns a child Node process; a dozen covers every step of a write without loading 2 cores for long. */
const KILLS = 12;

describe.skipIf(!azuriteSelected)(
  "crash test on Azurite (needs Azurite: TABLEKIT_STORES leaves it out)",
  () => {
    // The child reaches Azurite through AzureStore.fromConnectionString; a request sent just before the
    // child froze may be applied with its answer never read.
    // The timeout is a safety net for a loaded machine (12 child processes), not a performance limit.
    it(`SIGKILL crash test on azurite: after every kill, repairIndexes leaves zero drift and no lost entity (seed ${SEED})`, {
      timeout: 300_000,
    }, async () => {
      const summary = await runCrashTest(azuriteTarget(KILLS), SEED);
      console.log(summary.text);
      expect(summary.kills).toBe(KILLS);
      expect(summary.linesSeen).toBe(summary.linesChosen);
      expect(summary.requestsSeen).toBeGreaterThan(0);
      expect(summary.killsWithWork).toBeGreaterThan(0);
    });
  },
);
