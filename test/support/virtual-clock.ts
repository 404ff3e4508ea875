/**
 * A virtual clock for the pacer and the retry backoff (`TableContext`'s internal `now` and `sleep`):
 * time moves only when `run` finds nothing else to do, straight to the earliest sleeper. No real time
 * passes in a sleep, so schedules are asserted in virtual seconds and a test's answer does not depend on
 * the machine's speed. Requests to a real server (Azurite) take no virtual time: `run` waits for the
 * requests in flight (an `InFlightStore` in front of the store) before it moves the clock.
 */
import type { TableStore } from "../../src/store/table-store.js";
import { type StoreRequest, StoreWrapper } from "./store-wrapper.js";

interface Sleeper {
  at: number;
  seq: number;
  wake: () => void;
}

export class VirtualClock {
  #now = 0;
  #seq = 0;
  readonly #sleepers: Sleeper[] = [];

  /** Milliseconds since the clock's start. */
  readonly now = (): number => this.#now;

  /** Resolves when `run` has moved the clock `ms` on (sleepers due at the same time wake in call order). */
  readonly sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
    new Promise((resolve, reject) => {
      // The abort listener leaves with the sleeper: a long-lived signal would gather one per sleep.
      const onAbort = () => {
        this.#sleepers.splice(this.#sleepers.indexOf(sleeper), 1);
        reject(signal?.reason);
      };
      const wake = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      const sleeper = { at: this.#now + Math.max(0, ms), seq: this.#seq++, wake };
      this.#sleepers.push(sleeper);
      signal?.addEventListener("abort", onAbort, { once: true });
    });

  /** Sleepers not yet woken. */
  get pending(): number {
    return this.#sleepers.length;
  }

  /**
   * Runs `work` to its end: whenever it waits only on sleepers (nothing queued, no request in flight),
   * moves the clock to the earliest and wakes it. Fails if the work waits on nothing at all.
   */
  async run<T>(work: () => Promise<T>, inFlight?: InFlightStore): Promise<T> {
    let settled = false;
    const result = work();
    result.then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
    for (;;) {
      await turn();
      if (settled) return result;
      if (inFlight && inFlight.count > 0) {
        await inFlight.idle();
        continue;
      }
      const next = this.#earliest();
      if (next === undefined) throw new Error("virtual clock: the work waits on nothing (a deadlock)");
      this.#now = Math.max(this.#now, next.at);
      next.wake();
    }
  }

  #earliest(): Sleeper | undefined {
    let best = -1;
    this.#sleepers.forEach((sleeper, index) => {
      const current = this.#sleepers[best];
      if (
        current === undefined ||
        sleeper.at < current.at ||
        (sleeper.at === current.at && sleeper.seq < current.seq)
      )
        best = index;
    });
    return best < 0 ? undefined : this.#sleepers.splice(best, 1)[0];
  }
}

/** One macrotask turn: every promise continuation queued so far has run. */
function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Counts requests in flight to the store behind it, so a virtual clock moves only when none is. */
export class InFlightStore extends StoreWrapper {
  #count = 0;
  #idle: Array<() => void> = [];

  constructor(inner: TableStore) {
    super(inner);
  }

  get count(): number {
    return this.#count;
  }

  /** Resolves once no request is in flight. */
  idle(): Promise<void> {
    if (this.#count === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  protected override async around<T>(_request: StoreRequest, send: () => Promise<T>): Promise<T> {
    this.#count++;
    try {
      return await send();
    } finally {
      this.#count--;
      if (this.#count === 0) for (const wake of this.#idle.splice(0)) wake();
    }
  }
}
