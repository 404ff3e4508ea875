import pRetry, { AbortError } from "p-retry";
import { StoreError, ValidationError } from "../../errors.js";

/**
 * Retry settings of a `TableContext` (transient faults only: 503 ServerBusy, 429, 500, 408 and
 * client timeouts, connection resets, 409 TableBeingDeleted). The defaults ride out at least 30 s of
 * faults: delay n is drawn between half its exponential ceiling `minDelayMs × 2^(n−1)` (never below
 * `minDelayMs`) and that ceiling, capped at `maxDelayMs`; a service's Retry-After replaces it. With
 * the defaults the delays are at least 0.5, 0.5, 1, 2, 4, 8, 10, 10, 10, 10 s (56 s in all, so a
 * 30 s storm is ridden out whatever the jitter) and at most 0.5, 1, 2, 4, 8, 16, 20, … s, and no
 * operation retries for longer than `maxElapsedMs` (60 s).
 */
export interface RetryOptions {
  /** Retries after the first attempt (default 10; 0 disables retrying). */
  retries?: number | undefined;
  /** Base delay of the exponential backoff (default 500 ms). */
  minDelayMs?: number | undefined;
  /** Upper bound of any one delay, including a service's Retry-After (default 20,000 ms). */
  maxDelayMs?: number | undefined;
  /**
   * The whole retry window of one operation, from its first attempt (default 60,000 ms): a retry
   * whose delay would end past it is not made, and the last error is thrown.
   */
  maxElapsedMs?: number | undefined;
}

/** The default retry settings (see `RetryOptions`). */
export const DEFAULT_RETRY = Object.freeze({
  retries: 10,
  minDelayMs: 500,
  maxDelayMs: 20_000,
  maxElapsedMs: 60_000,
});

/** Why a retry was scheduled. */
export interface RetryDecision {
  attempt: number;
  delayMs: number;
  error: unknown;
}

/** Hears every retry of a policy and runs each attempt after the first (telemetry: retry events, attempt numbers). */
export interface RetryObserver {
  onRetry(decision: RetryDecision): void;
  runAttempt<T>(attempt: number, run: () => Promise<T>): Promise<T>;
}

/** Sleeps; injectable so tests can drive retries without real time passing. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

const CONNECTION_FAULTS = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "ETIMEDOUT",
  "ECONNABORTED",
  "UND_ERR_SOCKET",
]);

/** The fault kind of an error: transient faults are retried, everything else is final. */
export function classifyFault(error: unknown): "throttled" | "server" | "timeout" | "connection" | "final" {
  if (!(error instanceof StoreError)) return "final";
  const { statusCode, serviceCode } = error;
  // 503 ServerBusy is Azure Table storage's throttling; 429 TooManyRequests is the Cosmos DB Table API's
  // with an x-ms-retry-after-ms hint (https://learn.microsoft.com/en-us/training/modules/monitor-responses-events-azure-cosmos-db-sql-api/4-review-rate-limiting-errors).
  if (statusCode === 503 || statusCode === 429) return "throttled";
  if (statusCode === 500) return "server";
  // Azure holds a deleted table's name for about 40 s: creating it again meanwhile is refused, then works.
  if (statusCode === 409 && serviceCode === "TableBeingDeleted") return "server";
  if (statusCode === 408 || serviceCode === "Timeout" || serviceCode === "OperationTimedOut")
    return "timeout";
  if (statusCode === undefined && serviceCode !== undefined && CONNECTION_FAULTS.has(serviceCode))
    return "connection";
  return "final";
}

/** What an attempt knows about the attempts before it. */
export interface AttemptContext {
  /** 1-based attempt number. */
  attempt: number;
  /**
   * True when an earlier attempt failed in a way that may have applied the write anyway
   * (timeout, reset or server error after the request was sent): a conflict now may be our own success.
   */
  possiblyApplied: boolean;
}

/**
 * Whether a failed attempt may nevertheless have been carried out. 503 ServerBusy, 429 (Cosmos DB
 * rate limiting) and 408 are answered before the service processes the request, and a refused
 * connection never reached it;
 * a 500, a client-side timeout or a reset after sending may hide a write that was applied.
 */
function mayHaveApplied(error: unknown): boolean {
  if (!(error instanceof StoreError)) return false;
  if (error.statusCode === 503 || error.statusCode === 429 || error.statusCode === 408) return false;
  if (error.statusCode === 409) return false; // TableBeingDeleted: refused, nothing was written
  return error.serviceCode !== "ECONNREFUSED";
}

/** Runs operations with exponential backoff and full jitter on transient faults only (never 400/403/404/409/412/413). */
export class RetryPolicy {
  readonly retries: number;
  readonly minDelayMs: number;
  readonly maxDelayMs: number;
  readonly maxElapsedMs: number;
  readonly #sleep: Sleep;
  readonly #random: () => number;
  /** Hears every retry of every run (set once by the context, e.g. for tracing). */
  observer: RetryObserver | undefined;
  readonly #now: () => number;

  constructor(
    options: RetryOptions = {},
    sleep: Sleep = defaultSleep,
    random: () => number = Math.random,
    now: () => number = () => performance.now(),
  ) {
    this.retries = count(options.retries, DEFAULT_RETRY.retries, "retry.retries");
    this.minDelayMs = count(options.minDelayMs, DEFAULT_RETRY.minDelayMs, "retry.minDelayMs");
    this.maxDelayMs = count(options.maxDelayMs, DEFAULT_RETRY.maxDelayMs, "retry.maxDelayMs");
    this.maxElapsedMs = count(options.maxElapsedMs, DEFAULT_RETRY.maxElapsedMs, "retry.maxElapsedMs");
    this.#now = now;
    if (this.maxDelayMs < this.minDelayMs) {
      throw new ValidationError(
        "retry-options",
        `retry.maxDelayMs (${this.maxDelayMs}) must not be below retry.minDelayMs (${this.minDelayMs})`,
        { field: "retry.maxDelayMs" },
      );
    }
    this.#sleep = sleep;
    this.#random = random;
  }

  /** The delay before retry number `attempt` (1-based) after `error`. */
  delayFor(attempt: number, error: unknown): number {
    const fault = classifyFault(error);
    // A reset connection usually means a recycled socket: retry at once the first time.
    if (fault === "connection" && attempt === 1) return 0;
    const retryAfterMs = error instanceof StoreError ? error.retryAfterMs : undefined;
    if (retryAfterMs !== undefined) return Math.min(this.maxDelayMs, Math.max(retryAfterMs, 0));
    const ceiling = Math.min(this.maxDelayMs, this.minDelayMs * 2 ** Math.min(attempt - 1, 40));
    // Jitter keeps clients from retrying in lockstep; its floor (half the ceiling) makes the delays grow
    // whatever the draw, so the retries cover a known window (see RetryOptions).
    const floor = Math.max(this.minDelayMs, ceiling / 2);
    return Math.round(floor + (ceiling - floor) * this.#random());
  }

  /**
   * A short random pause before going again after losing a race to another writer (not a fault):
   * contending writers spread out. Same injectable clock and jitter as the fault retries.
   */
  contend(round: number, signal?: AbortSignal): Promise<void> {
    return this.#sleep(this.#random() * Math.min(50, 2 * round), signal);
  }

  /** Runs `operation`, retrying transient faults; `onRetry` hears each scheduled retry. */
  async run<T>(
    operation: (context: AttemptContext) => Promise<T>,
    onRetry?: (decision: RetryDecision) => void,
    signal?: AbortSignal,
  ): Promise<T> {
    // The first attempt runs directly: most requests succeed, and they should not pay for the retry loop.
    try {
      return await operation({ attempt: 1, possiblyApplied: false });
    } catch (error) {
      if (this.retries === 0 || classifyFault(error) === "final") throw error;
      return this.#retry(operation, error, onRetry, signal);
    }
  }

  /** Attempts 2 and later, after the first failed with a transient fault. */
  async #retry<T>(
    operation: (context: AttemptContext) => Promise<T>,
    firstError: unknown,
    onRetry: ((decision: RetryDecision) => void) | undefined,
    signal: AbortSignal | undefined,
  ): Promise<T> {
    let possiblyApplied = mayHaveApplied(firstError);
    // The window counts from the first attempt; slept delays count even on an injected clock that does not move.
    const started = this.#now();
    let slept = 0;
    const pause = async (attempt: number, error: unknown) => {
      const delayMs = this.delayFor(attempt, error);
      const elapsed = Math.max(this.#now() - started, slept);
      if (elapsed + delayMs > this.maxElapsedMs) throw new AbortError(error as Error);
      onRetry?.({ attempt, delayMs, error });
      this.observer?.onRetry({ attempt, delayMs, error });
      slept += delayMs;
      await this.#sleep(delayMs, signal);
    };
    try {
      await pause(1, firstError);
    } catch (error) {
      throw unwrapAbort(error);
    }
    return pRetry(
      async (retry) => {
        try {
          const next = { attempt: retry + 1, possiblyApplied };
          return await (this.observer
            ? this.observer.runAttempt(next.attempt, () => operation(next))
            : operation(next));
        } catch (error) {
          // Final errors stop at once, unwrapped, with no delay.
          if (classifyFault(error) === "final") throw new AbortError(error as Error);
          if (mayHaveApplied(error)) possiblyApplied = true;
          throw error;
        }
      },
      {
        retries: this.retries - 1,
        // Delays are computed here (Retry-After, immediate reconnect) and slept through the injectable clock.
        minTimeout: 0,
        maxTimeout: 0,
        factor: 1,
        ...(signal ? { signal } : {}),
        onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
          if (retriesLeft > 0) await pause(attemptNumber + 1, error);
        },
      },
    ).catch((error: unknown) => {
      throw unwrapAbort(error);
    });
  }
}

function count(value: number | undefined, fallback: number, field: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new ValidationError(
      "retry-options",
      `${field} must be a non-negative integer, got ${String(value)}`,
      { field },
    );
  }
  return value;
}

function unwrapAbort(error: unknown): unknown {
  if (error instanceof AbortError && error.originalError) return error.originalError;
  if (error instanceof Error && error.name === "AbortError" && "originalError" in error) {
    return (error as { originalError: unknown }).originalError ?? error;
  }
  return error;
}

/** Sleeps on the real clock (`setTimeout`), abortable. */
export const defaultSleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (ms <= 0) return resolve();
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
