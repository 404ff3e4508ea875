import { AsyncLocalStorage } from "node:async_hooks";
import { changeFedModels } from "../../schema/entity-model.js";

/**
 * The attempt of a store request in progress, as the runner sends it through the retry policy: a
 * token shared by every attempt of one request, and whether an earlier attempt may have been applied
 * (its answer lost). A store in the stack that adds rows of its own (the change feed) keeps what it
 * sent under the token, so a resend can tell that the first attempt committed instead of committing
 * again.
 */
export interface RequestAttempt {
  /** The same object for every attempt of one request. */
  readonly request: object;
  readonly possiblyApplied: boolean;
}

const attempts = new AsyncLocalStorage<RequestAttempt>();

/** Runs one attempt of a request with its `RequestAttempt` visible to the stores below. */
export function withRequestAttempt<R>(attempt: RequestAttempt, send: () => Promise<R>): Promise<R> {
  // Only the change feed reads it (feeding-store.ts), for the tables of change-fed classes: with none
  // defined, nothing below can, and the attempt runs outside any async context. Entering one turns on
  // Node's promise hooks for good, and every promise of the process pays them (~5 µs per upsert).
  if (changeFedModels().length === 0) return send();
  return attempts.run(attempt, send);
}

/** The attempt in progress, when the request was sent through the runner. */
export function currentRequestAttempt(): RequestAttempt | undefined {
  return attempts.getStore();
}
