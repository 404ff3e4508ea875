/**
 * Progress on stderr: a line redrawn in place on a terminal (rows, rows/s, and an ETA when the total
 * is known), nothing otherwise; `finish` prints the one-line summary in any case unless quiet.
 */
export class Progress {
  readonly #label: string;
  readonly #live: boolean;
  readonly #quiet: boolean;
  readonly #started = performance.now();
  #rows = 0;
  #lastDraw = 0;
  total: number | undefined;

  constructor(label: string, options: { quiet?: boolean | undefined; tty?: boolean | undefined } = {}) {
    this.#label = label;
    this.#quiet = options.quiet === true;
    this.#live = !this.#quiet && (options.tty ?? process.stderr.isTTY === true);
  }

  add(rows: number): void {
    this.set(this.#rows + rows);
  }

  /** Sets the rows done so far (and redraws at most five times a second). */
  set(rows: number): void {
    this.#rows = rows;
    if (!this.#live) return;
    const now = performance.now();
    if (now - this.#lastDraw < 200) return;
    this.#lastDraw = now;
    const seconds = (now - this.#started) / 1000;
    const rate = this.#rows / Math.max(seconds, 0.001);
    let line = `${this.#label}: ${this.#rows.toLocaleString("en-US")} rows, ${Math.round(rate).toLocaleString("en-US")} rows/s`;
    if (this.total !== undefined && rate > 0 && this.total > this.#rows) {
      line += `, ETA ${formatSeconds((this.total - this.#rows) / rate)}`;
    }
    process.stderr.write(`\r${line}\u001b[K`);
  }

  /** Seconds since the start. */
  get seconds(): number {
    return (performance.now() - this.#started) / 1000;
  }

  /** Clears the live line and prints `summary` (with the elapsed time and rate of `rows`). */
  finish(summary: string, rows: number): void {
    if (this.#live) process.stderr.write("\r\u001b[K");
    if (this.#quiet) return;
    const seconds = this.seconds;
    const rate = Math.round(rows / Math.max(seconds, 0.001));
    process.stderr.write(`${summary} in ${seconds.toFixed(1)} s (${rate.toLocaleString("en-US")} rows/s)\n`);
  }
}

function formatSeconds(seconds: number): string {
  if (seconds < 60) return `${Math.ceil(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes} min ${Math.ceil(seconds - minutes * 60)} s`;
}
