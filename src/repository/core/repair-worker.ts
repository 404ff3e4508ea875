import { ValidationError } from "../../errors.js";
import { type LongTimeout, setLongTimeout } from "../../util/long-timeout.js";
import type { RepairReport } from "./repair-kind.js";

/** Timers a worker schedules its passes on (tests inject their own: no sleeps). */
export interface WorkerTimers {
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Options of `db.startRepairWorker`. */
export interface RepairWorkerOptions {
  /** Time between the end of one pass and the start of the next, in milliseconds (a positive integer). */
  intervalMs: number;
  /** Leave intents younger than this alone (default 0); give live writers' longest write time. */
  minIntentAgeMs?: number | undefined;
  /** @internal The timers passes are scheduled on (tests inject their own). */
  timers?: WorkerTimers | undefined;
}

/** A running repair worker. */
export interface RepairWorker {
  /** Stops scheduling passes and resolves once the running pass (if any) has finished. */
  stop(): Promise<void>;
}

const SYSTEM_TIMERS: WorkerTimers = {
  // Unref'd: a background worker must not keep the process alive on its own. Any interval: one beyond
  // Node's timer limit (about 24.8 days) would otherwise run a pass every millisecond.
  setTimeout: (run, ms) => setLongTimeout(run, ms, true),
  clearTimeout: (handle) => (handle as LongTimeout).clear(),
};

/**
 * Runs `pass` at once and then `intervalMs` after each pass ends, until stopped. A pass that fails
 * is reported through `report` and the worker goes on.
 */
export function startWorker(
  options: RepairWorkerOptions,
  pass: () => Promise<{ counts: RepairReport; errors: unknown[] }>,
  report: (result: { counts: RepairReport; errors: unknown[] }) => void,
): RepairWorker {
  const intervalMs = options?.intervalMs;
  if (typeof intervalMs !== "number" || !Number.isSafeInteger(intervalMs) || intervalMs <= 0) {
    throw new ValidationError(
      "repair-worker-interval",
      `startRepairWorker needs { intervalMs } as a positive integer, got ${String(intervalMs)}`,
      { field: "intervalMs" },
    );
  }
  const timers = options.timers ?? SYSTEM_TIMERS;
  let stopped = false;
  let handle: unknown;
  let running: Promise<void> | undefined;
  const tick = (): void => {
    handle = undefined;
    if (stopped) return;
    running = pass()
      .then(report, (error: unknown) => report({ counts: {}, errors: [error] }))
      .finally(() => {
        running = undefined;
        if (!stopped) handle = timers.setTimeout(tick, intervalMs);
      });
  };
  handle = timers.setTimeout(tick, 0);
  return {
    async stop() {
      stopped = true;
      if (handle !== undefined) timers.clearTimeout(handle);
      handle = undefined;
      await running;
    },
  };
}
