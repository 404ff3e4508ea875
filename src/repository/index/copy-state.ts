import type { StateScope } from "../../util/scoped-state.js";
import { ScopedState } from "../../util/scoped-state.js";
import type { CopyRef } from "../core/copy-ref.js";

const tracked = new ScopedState<readonly CopyRef[]>();

/** The index copies an entity instance had when tablekit last read or wrote it in `scope`. */
export function trackedCopies(entity: object, scope: StateScope): readonly CopyRef[] | undefined {
  return tracked.get(entity, scope);
}

/** Records the copies an instance has in `scope` (after a read or a write). */
export function rememberCopies(
  entity: object,
  refs: readonly CopyRef[] | undefined,
  scope: StateScope,
): void {
  tracked.set(entity, scope, refs);
}
