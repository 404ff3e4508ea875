import type { EntityModel } from "../../schema/entity-model.js";
import { etagIn } from "../../serialization/entity-etag.js";
import type { StoredEntity } from "../../store/table-store.js";
import type { StateScope } from "../../util/scoped-state.js";
import { ScopedState } from "../../util/scoped-state.js";
import { COPY_REFS_PROPERTY, type CopyRef, decodeCopyRefs, deriveCopyRefs } from "../core/copy-ref.js";
import { keepsCopies } from "../core/entity-features.js";
import type { BlindIndexing, TableNaming } from "../core/requests.js";
import type { Existing } from "./indexed-target.js";

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

/** The copies of an entity without indexes. */
const NO_COPIES: readonly CopyRef[] = [];

/** The copies a stored row says it has (or, for rows written without them, what its values derive). */
export function refsOfStored(
  model: EntityModel<object>,
  stored: StoredEntity,
  naming: TableNaming & Partial<BlindIndexing>,
): readonly CopyRef[] {
  // An entity without indexes has no copies.
  if (!keepsCopies(model)) return NO_COPIES;
  return (
    decodeCopyRefs(stored[COPY_REFS_PROPERTY]) ??
    deriveCopyRefs(model, model.mapper.fromWire(stored), naming, true)
  );
}

/**
 * The instance's version and copies as tracked in `scope` (no read needed), if known. An entity
 * without indexes has no copies. `stated`: the version the caller states of a wide entity without
 * stages' rows (it needs only its version): one other than `"*"` is the one its transaction is
 * conditional on, with no read first (a stale one fails it: `ConcurrencyError`).
 */
export function trackedPrior<T extends object>(
  model: EntityModel<T>,
  entity: T,
  scope: StateScope,
  stated: string | undefined,
): Existing | undefined {
  if (!keepsCopies(model)) {
    const etag = (stated !== undefined && stated !== "*" ? stated : undefined) ?? etagIn(entity, scope);
    return etag === undefined ? undefined : { exists: true, etag, refs: NO_COPIES };
  }
  const etag = etagIn(entity, scope);
  const refs = trackedCopies(entity, scope);
  return etag !== undefined && refs !== undefined ? { exists: true, etag, refs } : undefined;
}
