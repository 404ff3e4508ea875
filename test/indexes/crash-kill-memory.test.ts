import { expect, it } from "vitest";
import { memoryFileTarget, runCrashTest } from "./crash-kill.js";

// The child writes to a MemoryStore file; a kill can leave a torn last line, which is not committed.
it("SIGKILL crash test on a MemoryStore file: after every kill, repairIndexes leaves zero drift and no lost entity", async () => {
  const summary = await runCrashTest(memoryFileTarget(25));
  console.log(summary);
  expect(summary).toContain("25 kills");
}, 120_000);
