/**
 * Node's longest timer delay, 2^31 − 1 ms (about 24.8 days). Node's `setTimeout` sets a longer delay
 * to 1 ms (the `setTimeout` docs, "When delay is larger than 2147483647 … the delay will be set to 1"),
 * so a long wait would end at once.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** A timer from `setLongTimeout`. */
export interface LongTimeout {
  /** Cancels it (nothing happens if it has run). */
  clear(): void;
}

/**
 * Runs `run` after `ms` milliseconds, however long: a delay beyond `MAX_TIMER_MS` is waited in steps
 * of at most that. `unref`: the timer does not keep the process alive (a background worker's).
 */
export function setLongTimeout(run: () => void, ms: number, unref = false): LongTimeout {
  let timer: ReturnType<typeof setTimeout>;
  const arm = (left: number): void => {
    timer =
      left > MAX_TIMER_MS ? setTimeout(() => arm(left - MAX_TIMER_MS), MAX_TIMER_MS) : setTimeout(run, left);
    if (unref) timer.unref?.();
  };
  arm(ms);
  return { clear: () => clearTimeout(timer) };
}
