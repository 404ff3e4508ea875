/**
 * The pace rule, in entities per second, applied per bucket (one per (table, partition), one for the
 * context). Azure Table storage answers a client above its targets with 503 ServerBusy (or 500
 * OperationTimedOut while it rebalances partitions); the Cosmos DB Table API with 429. The rule:
 *
 * - a new bucket starts at `START` × its limit and doubles after every `WINDOW_MS` without a throttle
 *   answer and with at least one success ("slow start": partition servers get time to balance load);
 * - a throttle answer multiplies the pace by `DECREASE`, at most once per `WINDOW_MS` (answers to
 *   requests sent at the old pace are not counted twice), never below `FLOOR` × the limit, and ends
 *   slow start;
 * - after that, every `WINDOW_MS` without a throttle answer and with a success adds `INCREASE` × the limit,
 *   up to the limit (additive increase, multiplicative decrease).
 *
 * A request that goes late (a timer fires late on a busy machine) is charged from when it was due, up to
 * `CATCH_UP_MS` back, so lateness does not pile up into a slower pace; after an idle spell that is a
 * burst of at most `CATCH_UP_MS` worth of entities.
 */
export const PACE_RULE = Object.freeze({
  START: 1 / 2,
  WINDOW_MS: 1000,
  DECREASE: 1 / 2,
  FLOOR: 1 / 10,
  INCREASE: 1 / 10,
  CATCH_UP_MS: 100,
});

/** A change of a bucket's pace, for the `throughput` event. */
export interface PaceChange {
  rate: number;
  previousRate: number;
  reason: "ramp-up" | "recovered" | "throttled";
}

/**
 * One token bucket of the pacer, kept as its "theoretical arrival time" (GCRA): `paidUntil` is when the
 * entities reserved so far are paid for at the current pace, so a request may go once it has passed,
 * and reserving `n` entities pushes it `n / rate` seconds on. Debt, not tokens: a batch larger than a
 * second's worth still goes (alone), and a query's rows are charged after its page arrives.
 */
export class PaceBucket {
  readonly limit: number;
  #rate: number;
  /** Milliseconds on the pacer's clock until which reserved entities are paid for. */
  #paidUntil: number;
  #slowStart = true;
  #windowStart: number;
  #throttledInWindow = false;
  #lastDecrease = Number.NEGATIVE_INFINITY;
  /** Requests admitted and not yet answered, or waiting: a busy bucket is never evicted. */
  active = 0;
  /** When the bucket was last used, for evicting idle ones. */
  lastUsed: number;

  constructor(limit: number, now: number) {
    this.limit = limit;
    this.#rate = limit * PACE_RULE.START;
    this.#paidUntil = now;
    this.#windowStart = now;
    this.lastUsed = now;
  }

  /** The current pace in entities per second. */
  get rate(): number {
    return this.#rate;
  }

  /** When a request may next go (ms on the pacer's clock). */
  get readyAt(): number {
    return this.#paidUntil;
  }

  /** Charges `entities` at the current pace, from the end of earlier reservations (or now, less the catch-up). */
  charge(entities: number, now: number): void {
    const from = Math.max(this.#paidUntil, now - PACE_RULE.CATCH_UP_MS);
    this.#paidUntil = from + (entities * 1000) / this.#rate;
    this.lastUsed = now;
  }

  /** A successful answer: after a quiet window, ramps up (slow start) or recovers (additive). */
  succeeded(now: number): PaceChange | undefined {
    this.lastUsed = now;
    if (now - this.#windowStart < PACE_RULE.WINDOW_MS) return undefined;
    const quiet = !this.#throttledInWindow;
    this.#windowStart = now;
    this.#throttledInWindow = false;
    if (!quiet || this.#rate >= this.limit) return undefined;
    const next = this.#slowStart ? this.#rate * 2 : this.#rate + this.limit * PACE_RULE.INCREASE;
    return this.#change(Math.min(this.limit, next), this.#slowStart ? "ramp-up" : "recovered", now);
  }

  /** A throttle answer: lowers the pace once per window. */
  throttled(now: number): PaceChange | undefined {
    this.lastUsed = now;
    this.#slowStart = false;
    if (now - this.#lastDecrease < PACE_RULE.WINDOW_MS) {
      this.#throttledInWindow = true;
      return undefined;
    }
    this.#lastDecrease = now;
    this.#windowStart = now;
    this.#throttledInWindow = false;
    const next = Math.max(this.limit * PACE_RULE.FLOOR, this.#rate * PACE_RULE.DECREASE);
    return next < this.#rate ? this.#change(next, "throttled", now) : undefined;
  }

  /** True when the bucket holds nothing but its pace: no debt, nothing waiting or in flight. */
  isIdle(now: number): boolean {
    return this.active === 0 && this.#paidUntil <= now;
  }

  #change(rate: number, reason: PaceChange["reason"], now: number): PaceChange {
    const previousRate = this.#rate;
    // Debt still owed is re-priced at the new pace, so a decrease slows the very next request.
    if (this.#paidUntil > now) this.#paidUntil = now + ((this.#paidUntil - now) * previousRate) / rate;
    this.#rate = rate;
    return { rate, previousRate, reason };
  }
}
