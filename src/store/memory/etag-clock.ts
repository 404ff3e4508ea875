import { msToTicks, ticksToIso } from "../../util/unix-ticks.js";

/**
 * The store's server clock: hands out Timestamps (in ticks) that strictly increase, even for writes
 * in the same millisecond, so every write yields a distinct ETag. Like the service's Timestamp it
 * follows wall-clock time; when the wall clock stalls or steps back it counts on in 100-ns ticks.
 */
export class EtagClock {
  #last = 0n;
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** The next Timestamp, strictly greater than every one issued or observed before. */
  next(): bigint {
    const wall = msToTicks(this.#now());
    this.#last = wall > this.#last ? wall : this.#last + 1n;
    return this.#last;
  }

  /** The latest Timestamp issued or observed. */
  get last(): bigint {
    return this.#last;
  }

  /** Records a Timestamp issued earlier (e.g. loaded from disk) so later ones stay greater. */
  observe(ticks: bigint): void {
    if (ticks > this.#last) this.#last = ticks;
  }
}

/**
 * The ETag the service derives from an entity's Timestamp:
 * `W/"datetime'2024-05-01T10%3A00%3A00.1234567Z'"` (the date-time is URL-encoded).
 */
export function etagFromTicks(ticks: bigint): string {
  // The rows of one request (and of one journal commit) share a Timestamp: they share its ETag string too.
  if (ticks !== lastTicks) {
    lastTicks = ticks;
    lastEtag = `W/"datetime'${encodeURIComponent(ticksToIso(ticks))}'"`;
  }
  return lastEtag;
}

let lastTicks: bigint | undefined;
let lastEtag = "";
