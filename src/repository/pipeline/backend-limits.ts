import { ValidationError } from "../../errors.js";
import type { TableStore, TransactionAction } from "../../store/table-store.js";
import { limitViolation } from "../../util/limit-violation.js";
import { AZURE_TABLE_LIMITS, type StoreLimits } from "../../util/store-limits.js";

/** The limits of the store's backend; Azure Table storage's when the store does not say. */
export function limitsOf(store: TableStore): StoreLimits {
  return store.capabilities.limits ?? AZURE_TABLE_LIMITS;
}

/**
 * Refuses a row that breaks a limit of this backend (e.g. the Cosmos DB Table API's 255-byte RowKey
 * or its reserved property names; on every backend the 255 properties and 1 MiB of the row as sent,
 * bookkeeping included) with a `ValidationError`, before any request is sent.
 */
export function assertWithinLimits(
  limits: StoreLimits,
  action: TransactionAction,
  where: string | (() => string),
): void {
  const violation = limitViolation(limits, action);
  if (violation === undefined) return;
  // `where` may be a function so that bulk paths name the write only when it fails.
  const place = typeof where === "function" ? where() : where;
  throw new ValidationError(`backend-${violation.rule}`, `${place}: ${violation.message}`, {
    field: violation.field,
  });
}
