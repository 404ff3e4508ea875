import { ScopedState, type StateScope, UNSCOPED } from "../util/scoped-state.js";

const etags = new ScopedState<string>();

/** The ETag tablekit last saw for this entity (read or written through a repository of any context), if any. */
export function etagOf(entity: object): string | undefined {
  return etags.latest(entity);
}

/** The ETag this entity has in one store and prefix (a version elsewhere is no condition here). */
export function etagIn(entity: object, scope: StateScope): string | undefined {
  return etags.get(entity, scope);
}

/** Records the ETag of an entity instance (after a read or a write) in `scope` (default: not yet placed). */
export function rememberEtag(entity: object, etag: string | undefined, scope: StateScope = UNSCOPED): void {
  etags.set(entity, scope, etag || undefined);
}

/** `rememberEtag` for an instance the mapper has just made (extensible, nothing recorded yet). */
export function rememberFreshEtag(
  entity: object,
  etag: string | undefined,
  scope: StateScope = UNSCOPED,
): void {
  etags.setFresh(entity, scope, etag || undefined);
}
