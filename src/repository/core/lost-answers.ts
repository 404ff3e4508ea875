import { ConcurrencyError, type EntityKeys, TableKitError } from "../../errors.js";
import type { StoredEntity, TableStore, WireEntity, WriteMode } from "../../store/table-store.js";
import { holdsWrittenState } from "./written-state.js";

/**
 * The rules for a write whose answer may have been lost. A retry after a timeout, a reset or a
 * 500 can meet the write's own, applied earlier attempt: an insert's 409, a conditional write's
 * 412, a delete's 404, a failed batch. Only the stored state can tell; one place decides, for
 * plain and indexed writes and transactions alike:
 * - no earlier attempt may have applied, or the error is not one our own effect could cause:
 *   the error is the answer;
 * - the stored state is exactly what this write wrote: our attempt committed, a success;
 * - anything else: our attempt may have applied and been overwritten, or never applied. Nobody
 *   can tell, and the caller must not re-apply a non-idempotent change (`isOutcomeUnknown`).
 */
export interface LostAnswerRule<R> {
  /** Errors an earlier, applied attempt of this write would cause on a retry. */
  ownEffect: (error: unknown) => boolean;
  /** The write's result when what is stored is exactly what it wrote, else `undefined`. */
  readBack: () => Promise<R | undefined>;
  /**
   * When the stored state is not ours: keep the error (its type is the documented answer, e.g. an
   * insert's `EntityAlreadyExistsError`), marked as of unknown outcome; or report these keys in a
   * `ConcurrencyError` with `outcomeUnknown`.
   */
  otherwise: "mark" | EntityKeys;
}

/**
 * Marks an error after which the write may or may not have taken effect. The error keeps its class
 * and fields (they are the documented answer, e.g. an insert's `EntityAlreadyExistsError`); only
 * its public `outcomeUnknown` flag and message say that the write may have been applied after all.
 */
export function markOutcomeUnknown<E>(error: E): E {
  if (error instanceof TableKitError && !error.outcomeUnknown) {
    Object.defineProperty(error, "outcomeUnknown", { value: true, enumerable: true });
    error.message = `${error.message.replace(/ Nothing was written\.$/, "")} An earlier attempt's answer was lost: it may have been applied.`;
  }
  return error;
}

/** Whether the write that failed with `error` may nevertheless have been applied: never re-apply it blindly. */
export function isOutcomeUnknown(error: unknown): boolean {
  return error instanceof TableKitError && error.outcomeUnknown;
}

/** Settles a failed attempt by the rules above: resolves the write's result, or throws. */
export async function settleLostAnswer<R>(
  error: unknown,
  possiblyApplied: boolean,
  rule: LostAnswerRule<R>,
): Promise<R> {
  if (!possiblyApplied || !rule.ownEffect(error)) throw error;
  const ours = await rule.readBack();
  if (ours !== undefined) return ours;
  if (rule.otherwise === "mark") throw markOutcomeUnknown(error);
  throw new ConcurrencyError(rule.otherwise, { cause: error, outcomeUnknown: true });
}

/**
 * A delete that finds nothing after an attempt that may have applied: that attempt deleted it
 * (the alternative, that nothing was ever there, cannot be told apart and is the rarer case).
 */
export function deleteExisted(existed: boolean, possiblyApplied: boolean): boolean {
  return existed || possiblyApplied;
}

/** Reads the entity back: its ETag when it holds exactly what `wire` wrote in `mode`. */
export async function ourEtag(
  store: TableStore,
  table: string,
  wire: WireEntity,
  mode: WriteMode,
): Promise<{ etag: string } | undefined> {
  const stored: StoredEntity | undefined = await store.getEntity(table, wire.partitionKey, wire.rowKey);
  return stored && holdsWrittenState(wire, stored, mode) ? { etag: stored.etag } : undefined;
}
