const EXHAUSTED: IteratorReturnResult<undefined> = { done: true, value: undefined };

/**
 * Pulls items one at a time from an iterable or async iterable, so a bulk write never holds the whole source;
 * a pending pull can be interrupted (on abort) without waiting for the source.
 */
export class ItemSource<T> {
  readonly #iterator: Iterator<T> | AsyncIterator<T>;
  readonly #async: boolean;
  #state: "open" | "exhausted" | "failed" | "closed" = "open";
  #interrupted = false;
  /** Resolves the pull in progress as if the source had ended; set only while an async pull is pending. */
  #wake: (() => void) | undefined;
  /** True when a pull was abandoned while the source was still working on it. */
  #abandoned = false;

  constructor(source: Iterable<T> | AsyncIterable<T>) {
    if (Symbol.asyncIterator in source) {
      this.#iterator = source[Symbol.asyncIterator]();
      this.#async = true;
    } else {
      this.#iterator = source[Symbol.iterator]();
      this.#async = false;
    }
  }

  /** True once the source itself reported its end. */
  get exhausted(): boolean {
    return this.#state === "exhausted";
  }

  /** The next item, synchronously for a synchronous source; `done` at the end, after `interrupt()` or `close()`. */
  pull(): IteratorResult<T, undefined> | Promise<IteratorResult<T, undefined>> {
    if (this.#state !== "open" || this.#interrupted) return EXHAUSTED;
    try {
      const next = this.#iterator.next();
      return this.#async
        ? this.#await(next as Promise<IteratorResult<T>>)
        : this.#record(next as IteratorResult<T>);
    } catch (error) {
      this.#state = "failed";
      throw error;
    }
  }

  /** Ends the pull in progress (and every later one) as if the source had ended. */
  interrupt(): void {
    this.#interrupted = true;
    const wake = this.#wake;
    if (!wake) return;
    this.#abandoned = true;
    wake();
  }

  /** Lets the source release its resources (`return()`) when it was left before its end; errors it throws propagate. */
  async close(): Promise<void> {
    if (this.#state !== "open") return;
    this.#state = "closed";
    const iterator = this.#iterator;
    if (!iterator.return) return;
    if (this.#abandoned) {
      // An async generator queues return() behind the abandoned next(), which may never settle: do not wait.
      Promise.resolve()
        .then(() => iterator.return?.())
        .catch(() => undefined);
      return;
    }
    await iterator.return();
  }

  #await(next: Promise<IteratorResult<T>>): Promise<IteratorResult<T, undefined>> {
    return new Promise((resolve, reject) => {
      this.#wake = () => resolve(EXHAUSTED);
      Promise.resolve(next).then(
        (result) => {
          this.#wake = undefined;
          resolve(this.#record(result));
        },
        (error: unknown) => {
          this.#wake = undefined;
          if (this.#state === "open") this.#state = "failed";
          reject(error);
        },
      );
    });
  }

  #record(result: IteratorResult<T>): IteratorResult<T, undefined> {
    if (!result.done) return result;
    if (this.#state === "open") this.#state = "exhausted";
    return EXHAUSTED;
  }
}
