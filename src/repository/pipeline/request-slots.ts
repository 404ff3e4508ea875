import { ValidationError } from "../../errors.js";

/**
 * A context's requests in flight by default (`maxConcurrentRequests`). The Table storage performance
 * checklist asks that parallelism be "bounded appropriately so that you don't overload your client's
 * capabilities or approach the scalability targets", and gives 100 as the connection limit to set for
 * .NET clients (`ServicePointManager.DefaultConnectionLimit = 100`): 100 requests in flight, far above what
 * tablekit's own defaults use at once (8 batches of a bulk write, 8 reads of `getMany`, 32 buckets of a
 * fan-out), so only many concurrent calls of the application wait for a slot.
 */
export const DEFAULT_MAX_CONCURRENT_REQUESTS = 100;

/**
 * A first-come, first-served cap on requests in flight: a request waits for a slot in arrival
 * order (no starvation), and a slot is held only while the request is on the wire, so a retry's
 * backoff sleep lets others through.
 */
export class RequestSlots {
  readonly #max: number;
  #inFlight = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(max: number) {
    if (!Number.isSafeInteger(max) || max < 1) {
      throw new ValidationError(
        "max-concurrent-requests",
        `maxConcurrentRequests must be a positive integer, got ${String(max)}`,
      );
    }
    this.#max = max;
  }

  /** Runs `request` once a slot is free, and frees the slot when it settles. */
  async run<T>(request: () => Promise<T>): Promise<T> {
    if (!this.tryTake()) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await request();
    } finally {
      this.#release();
    }
  }

  /**
   * Takes a slot at once if one is free and nobody is queued (a queued request keeps its turn), for a
   * request then sent with `releaseWhenSettled`; false when the request must wait (`run`). The usual
   * request goes this way, with no async frame or extra promise of its own.
   */
  tryTake(): boolean {
    if (this.#inFlight < this.#max && this.#waiting.length === 0) {
      this.#inFlight++;
      return true;
    }
    return false;
  }

  /** `sent`'s outcome, once it has freed the slot `tryTake` took for it. */
  releaseWhenSettled<T>(sent: Promise<T>): Promise<T> {
    return sent.then(this.#passValue as (value: T) => T, this.#passError);
  }

  readonly #passValue = (value: unknown): unknown => {
    this.#release();
    return value;
  };

  readonly #passError = (error: unknown): never => {
    this.#release();
    throw error;
  };

  #release(): void {
    const next = this.#waiting.shift();
    // The slot passes straight to the longest waiter, so a newcomer cannot overtake it.
    if (next) next();
    else this.#inFlight--;
  }
}
