import { AsyncLocalStorage } from "node:async_hooks";

/**
 * Why a write happens, when it is not the caller's own write: `"ttl"` for the deletes of
 * `db.sweepExpired`. Carried through async calls so the change feed can record it on the change
 * (`Change.reason`) without a parameter threaded through every write form.
 */
export type ChangeReason = "ttl";

const reasons = new AsyncLocalStorage<ChangeReason>();

/** Runs `write` with `reason` as the reason of every change it records. */
export function withChangeReason<R>(reason: ChangeReason, write: () => Promise<R>): Promise<R> {
  return reasons.run(reason, write);
}

/** The reason of the write in progress, if one was given. */
export function currentChangeReason(): ChangeReason | undefined {
  return reasons.getStore();
}
