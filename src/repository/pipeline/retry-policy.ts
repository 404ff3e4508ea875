import { StoreError, ValidationError } from "../../errors.js";
import { setLongTimeout } from "../../util/long-timeout.js";

/**
 * Retry settings of a `TableContext` (transient faults only: 503 ServerBusy, 429, 500, 408 and
 * client timeouts, connection resets, 409 TableBeingDeleted). Retrying is bounded by time, not by a
 * count: an operation retries until `maxElapsedMs` (60 s) after its first attempt, so a storm of
 * faults of at least 30 s is ridden out. Delay n is drawn between half its exponential ceiling
 * `minDelayMs × 2^(n−1)` (never below `minDelayMs`) and that ceiling, capped at `maxDelayMs`: with
 * the defaults at least 0.5, 0.5, 1, 2, 4, 8, 10, 10, … s and at most 0.5, 1, 2, 4, 8, 16, 20, … s;
 * the last one is shortened to end with the window. A service's Retry-After (`Retry-After`,
 * `x-ms-retry-after-ms`) replaces the backoff and is waited as given; one longer than what is left of
 * the window fails at once, with an error that says so.
 */
export interface RetryOptions {
  /** A cap on retries after the first attempt (default: none, the window alone bounds them; 0 disables retrying). */
  retries?: number | undefined;
  /** Base delay of the exponential backoff (default 500 ms). */
  minDelayMs?: number | undefined;
  /** Upper bound of any one backoff delay (default 20,000 ms); a service's Retry-After is waited as given. */
  maxDelayMs?: number | undefined;
  /**
   * The whole retry window of one operation, from its first attempt (default 60,000 ms): no attempt
   * starts after it, and the last error is thrown.
   */
  maxElapsedMs?: number | undefined;
}

/** The default retry settings (see `RetryOptions`); no retry count: the window bounds the retries. */
export const DEFAULT_RETRY = Object.freeze({
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

/** The first attempt of every run: nothing was tried before it. */
const FIRST_ATTEMPT: AttemptContext = Object.freeze({ attempt: 1, possiblyApplied: false });

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

/** Runs operations with exponential backoff and jitter on transient faults only (never 400/403/404/409/412/413). */
export class RetryPolicy {
  /** The cap on retries the caller set; undefined: only the time window bounds them. */
  readonly retries: number | undefined;
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
    this.retries = options.retries === undefined ? undefined : count(options.retries, 0, "retry.retries");
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

  /**
   * The delay before retry number `attempt` (1-based) after `error`: the service's Retry-After as
   * given, else the jittered exponential backoff (see `RetryOptions`).
   */
  delayFor(attempt: number, error: unknown): number {
    const retryAfterMs = retryAfterOf(error);
    if (retryAfterMs !== undefined) return retryAfterMs;
    return this.#backoff(attempt, error);
  }

  #backoff(attempt: number, error: unknown): number {
    // A reset connection usually means a recycled socket: retry at once the first time.
    if (classifyFault(error) === "connection" && attempt === 1) return 0;
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
  run<T>(
    operation: (context: AttemptContext) => Promise<T>,
    onRetry?: (decision: RetryDecision) => void,
    signal?: AbortSignal,
  ): Promise<T> {
    // The window counts from the first attempt. The first attempt runs directly: most requests succeed,
    // and they should not pay for the retry loop (nor for an async frame: one `then` is all they cost).
    const started = this.#now();
    let first: Promise<T>;
    try {
      first = Promise.resolve(operation(FIRST_ATTEMPT));
    } catch (error) {
      first = Promise.reject(error);
    }
    return first.then(undefined, (error: unknown) => {
      if (this.retries === 0 || classifyFault(error) === "final") throw error;
      return this.#retry(operation, error, started, onRetry, signal);
    });
  }

  /** Attempts 2 and later, after the first failed with a transient fault, while the window lasts. */
  async #retry<T>(
    operation: (context: AttemptContext) => Promise<T>,
    firstError: unknown,
    started: number,
    onRetry: ((decision: RetryDecision) => void) | undefined,
    signal: AbortSignal | undefined,
  ): Promise<T> {
    let possiblyApplied = mayHaveApplied(firstError);
    let error = firstError;
    // Slept delays count even on an injected clock that does not move (tests that record sleeps).
    let slept = 0;
    for (let attempt = 1; ; attempt++) {
      if (this.retries !== undefined && attempt > this.retries) throw error;
      const left = this.maxElapsedMs - Math.max(this.#now() - started, slept);
      const retryAfterMs = retryAfterOf(error);
      if (retryAfterMs !== undefined && retryAfterMs > left)
        throw this.#beyondWindow(error, retryAfterMs, left);
      // A backoff of our own choosing is shortened to end with the window: one last attempt at its end.
      const delayMs = retryAfterMs ?? Math.min(this.#backoff(attempt, error), left);
      if (left <= 0) throw error;
      onRetry?.({ attempt, delayMs, error });
      this.observer?.onRetry({ attempt, delayMs, error });
      slept += delayMs;
      await this.#sleep(delayMs, signal);
      signal?.throwIfAborted();
      const next = { attempt: attempt + 1, possiblyApplied };
      try {
        return await (this.observer
          ? this.observer.runAttempt(next.attempt, () => operation(next))
          : operation(next));
      } catch (failure) {
        // Final errors stop at once, with no delay.
        if (classifyFault(failure) === "final") throw failure;
        if (mayHaveApplied(failure)) possiblyApplied = true;
        error = failure;
      }
    }
  }

  /** The service asked for a pause longer than the window has left: give up now and say so. */
  #beyondWindow(error: unknown, retryAfterMs: number, leftMs: number): StoreError {
    const cause = error as StoreError;
    return new StoreError(
      `${cause.message} (the service asked to retry after ${retryAfterMs} ms, more than the ${Math.max(0, Math.round(leftMs))} ms left of the ${this.maxElapsedMs} ms retry window, retry.maxElapsedMs; not retried)`,
      {
        statusCode: cause.statusCode,
        serviceCode: cause.serviceCode,
        retryAfterMs,
        cause: error,
      },
    );
  }
}

/** The service's Retry-After hint of a transient fault, in ms (never negative). */
function retryAfterOf(error: unknown): number | undefined {
  if (!(error instanceof StoreError) || error.retryAfterMs === undefined) return undefined;
  return Math.max(0, error.retryAfterMs);
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

/**
 * Sleeps on the real clock (`setTimeout`, in steps for a wait beyond Node's timer limit), abortable. The
 * abort listener is removed when the sleep ends: a long-lived signal (a change-feed consumer's, one sleep
 * per poll) would otherwise gather one per sleep.
 */
export const defaultSleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (ms <= 0) return resolve();
    const onAbort = () => {
      timer.clear();
      reject(signal?.reason);
    };
    // Any length: a Retry-After within a long retry window, or a long poll interval, is waited whole.
    const timer = setLongTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
