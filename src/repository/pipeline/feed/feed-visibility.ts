import { AsyncLocalStorage } from "node:async_hooks";

const feedAccess = new AsyncLocalStorage<true>();

/**
 * Runs `work` with the feed's own rows visible and writable as they are: the change feed's reader
 * and trimmer use it. Everywhere else the feeding store hides them (no entity read, scan, summary
 * recount, index check or export sees a head, journal row or tombstone) and refuses writes to them.
 */
export function withFeedRows<R>(work: () => Promise<R>): Promise<R> {
  return feedAccess.run(true, work);
}

/** True inside `withFeedRows`. */
export function feedRowsVisible(): boolean {
  return feedAccess.getStore() === true;
}
