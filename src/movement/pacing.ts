// How many batches an import has in flight, and how fast it sends rows.

/** A counting semaphore. */
export class Slots {
  #free: number;
  readonly #waiting: Array<() => void> = [];
  constructor(size: number) {
    this.#free = size;
  }
  acquire(): Promise<void> {
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }
  release(): void {
    const next = this.#waiting.shift();
    if (next !== undefined) next();
    else this.#free++;
  }
}

/** Spaces requests so that rows go out at `rate` per second at most. */
export class Pacer {
  #next = 0;
  readonly #msPerRow: number;
  constructor(rate: number) {
    this.#msPerRow = 1000 / rate;
  }
  async take(rows: number): Promise<void> {
    const now = performance.now();
    const at = Math.max(now, this.#next);
    this.#next = at + rows * this.#msPerRow;
    if (at > now) await new Promise((resolve) => setTimeout(resolve, at - now));
  }
}
