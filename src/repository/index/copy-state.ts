import type { CopyRef } from "./copy-ref.js";

const tracked = new WeakMap<object, readonly CopyRef[]>();

/** The index copies an entity instance had when tablekit last read or wrote it. */
export function trackedCopies(entity: object): readonly CopyRef[] | undefined {
  return tracked.get(entity);
}

/** Records the copies an instance has (after a read or a write). */
export function rememberCopies(entity: object, refs: readonly CopyRef[] | undefined): void {
  if (refs) tracked.set(entity, refs);
  else tracked.delete(entity);
}
