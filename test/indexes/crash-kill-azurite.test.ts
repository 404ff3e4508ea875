import { expect, it } from "vitest";
import { azuriteTarget, runCrashTest } from "./crash-kill.js";

// The child reaches Azurite through AzureStore.fromConnectionString; each kill may cut a request in flight.
it("SIGKILL crash test on azurite: after every kill, repairIndexes leaves zero drift and no lost entity", async () => {
  const summary = await runCrashTest(azuriteTarget(30));
  console.log(summary);
  expect(summary).toContain("30 kills");
}, 120_000);
