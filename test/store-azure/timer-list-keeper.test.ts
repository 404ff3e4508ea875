import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it, vi } from "vitest";
import { keepTimerList } from "../../src/store/azure/timer-list-keeper.js";

const keeper = fileURLToPath(new URL("../../src/store/azure/timer-list-keeper.ts", import.meta.url));

describe("keepTimerList (the per-request timers' list kept alive)", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("keeps its interval out of timers a test fakes later: running all of them still ends", () => {
    vi.useFakeTimers();
    keepTimerList(12_345);
    let fired = 0;
    setTimeout(() => fired++, 12_345);
    // With a faked interval in the same clock, runAllTimers would run it until its loop limit and throw.
    vi.runAllTimers();
    expect(fired).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("holds no process open: a process with nothing else to do exits on its own", async () => {
    const code = `const { keepTimerList } = await import(${JSON.stringify(keeper)}); keepTimerList(60_000); console.log("kept");`;
    const { stdout } = await promisify(execFile)(process.execPath, [
      "--import",
      "tsx",
      "--input-type=module",
      "-e",
      code,
    ]);
    expect(stdout.trim()).toBe("kept");
  });
});
