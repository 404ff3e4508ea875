import type { RepairWorkerOptions } from "../../src/index.js";

type Timers = NonNullable<RepairWorkerOptions["timers"]>;

/** Timers a test fires by hand: a worker's next pass starts only when the test says so. */
export class ManualTimers implements Timers {
  readonly #pending = new Map<number, { run: () => void; ms: number }>();
  #next = 1;

  setTimeout(run: () => void, ms: number): unknown {
    const id = this.#next++;
    this.#pending.set(id, { run, ms });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#pending.delete(handle as number);
  }

  /** Delays of the timers waiting now. */
  get waiting(): number[] {
    return [...this.#pending.values()].map((timer) => timer.ms);
  }

  /** Fires every waiting timer. */
  fire(): void {
    const due = [...this.#pending.values()];
    this.#pending.clear();
    for (const timer of due) timer.run();
  }
}

/** A promise the test resolves or rejects by hand. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
