import type { WriteMode } from "../../store/table-store.js";
import type { DataField } from "../../util/entity-fields.js";

/** Options of `upsert`. */
export interface UpsertOptions {
  /** `replace` (default) drops properties not sent; `merge` keeps them. */
  mode?: WriteMode | undefined;
}

/** Options of `update`. */
export interface UpdateOptions {
  /** `replace` (default) drops properties not sent; `merge` keeps them. */
  mode?: WriteMode | undefined;
  /** The ETag to match; default: the one tracked for the entity. `"*"` writes unconditionally. */
  ifMatch?: string | undefined;
}

/** Options of `delete`. */
export interface DeleteOptions {
  /** The ETag to match; default: the one tracked for the object passed, else `"*"`. */
  ifMatch?: string | undefined;
}

/** Options of `mutate`. */
export interface MutateOptions<T> {
  /** Read-apply-write rounds before giving up with the last `ConcurrencyError` (default 10). */
  attempts?: number | undefined;
  /** Creates the entity when it is absent (otherwise `mutate` resolves `undefined` and writes nothing). */
  create?: (() => T) | undefined;
}

/** Options of point reads. */
export interface GetOptions<T, K extends DataField<T> = DataField<T>> {
  /** Fields to fetch (the result type narrows to them); key fields are always present. */
  select?: readonly K[] | undefined;
}

/** Options of `getMany`. */
export interface GetManyOptions {
  /** Point reads in flight at once (default 8). */
  concurrency?: number | undefined;
}

/** Options of `patch`. */
export interface PatchOptions {
  /** Patch only this version (a conditional Merge); without it the patch is an InsertOrMerge. */
  ifMatch?: string | undefined;
}

/** The keys of an entity, derived from its key fields. */
export interface EntityKey {
  partitionKey: string;
  rowKey: string;
}
