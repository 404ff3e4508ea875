import {
  ConcurrencyError,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  TransactionError,
  UniqueConstraintError,
} from "../../errors.js";
import type { TransactionAction } from "../../store/table-store.js";
import type { CopyRef } from "../core/copy-ref.js";
import { isOutcomeUnknown, markOutcomeUnknown } from "../core/lost-answers.js";

/** What to do about a failed entity transaction (the entity's action first, then its copies, then list entities). */
export type SubmitFailure =
  /** A stale copy that is already gone needs no deleting: drop this action and send the rest. */
  | { drop: number }
  /** An index entity changed since it was read: read the lists again and resend. */
  | { listConflict: TransactionError }
  /** The caller's answer. */
  | { error: unknown };

/**
 * Translates a failed entity transaction into the error a single write would give: the entity's
 * own 409/412/404 as `EntityAlreadyExistsError`/`ConcurrencyError`/`EntityNotFoundError`, a 409 on
 * a new copy as `UniqueConstraintError`. A failure after an attempt that may have applied (marked
 * by the lost-answer rules) is never resent: an insert keeps its 409, marked; anything else is a
 * `ConcurrencyError` with `outcomeUnknown`.
 */
export function translateSubmitError(
  error: unknown,
  pending: readonly TransactionAction[],
  refs: readonly CopyRef[],
  listStart: number,
  table: string,
  partitionKey: string,
  own: { count: number; rowKey: string } = { count: 1, rowKey: rowKeyOf(pending[0]) ?? "" },
): SubmitFailure {
  if (!(error instanceof TransactionError)) return { error };
  const failed = pending[error.index];
  const keys = { table, partitionKey, rowKey: error.rowKey ?? "" };
  const entityKeys = { ...keys, rowKey: own.rowKey || keys.rowKey };
  if (isOutcomeUnknown(error)) {
    if (error.index === 0 && error.statusCode === 409 && failed?.kind === "insert")
      return { error: markOutcomeUnknown(new EntityAlreadyExistsError(entityKeys, { cause: error })) };
    return { error: new ConcurrencyError(entityKeys, { cause: error, outcomeUnknown: true }) };
  }
  if (error.index >= listStart) return { listConflict: error };
  if (error.index === 0) {
    if (error.statusCode === 409)
      return { error: new EntityAlreadyExistsError(entityKeys, { cause: error }) };
    if (error.statusCode === 412) return { error: new ConcurrencyError(entityKeys, { cause: error }) };
    if (error.statusCode === 404) return { error: new EntityNotFoundError(entityKeys, { cause: error }) };
    return { error };
  }
  if (error.index < own.count) {
    // Another row of a wide entity: it changed (or appeared, or went) since its version was read.
    if (error.statusCode === 409 || error.statusCode === 412 || error.statusCode === 404)
      return { error: new ConcurrencyError(entityKeys, { cause: error }) };
    return { error };
  }
  if (failed?.kind === "delete" && error.statusCode === 404) return { drop: error.index };
  if (failed?.kind === "insert" && error.statusCode === 409) {
    const ref = refs.find((r) => r.rowKey === failed.entity.rowKey);
    return {
      error: new UniqueConstraintError(
        { index: ref?.index ?? "?", ...keys, rowKey: failed.entity.rowKey },
        { cause: error },
      ),
    };
  }
  return { error };
}

/**
 * Whether the service definitely refused a write, so what was prepared for it (claims, the
 * intent) can be undone. After a fault, or a refusal after an attempt that may have applied, the
 * write may stand: the intent stays for repair.
 */
export function isDefinitive(error: unknown): boolean {
  if (isOutcomeUnknown(error)) return false;
  return (
    error instanceof TransactionError ||
    error instanceof EntityAlreadyExistsError ||
    error instanceof EntityNotFoundError ||
    error instanceof ConcurrencyError ||
    error instanceof UniqueConstraintError
  );
}

function rowKeyOf(action: TransactionAction | undefined): string | undefined {
  if (!action) return undefined;
  return action.kind === "delete" ? action.rowKey : action.entity.rowKey;
}
