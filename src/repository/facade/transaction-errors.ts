import { TransactionError } from "../../errors.js";
import type { TransactionAction } from "../../store/table-store.js";

/** Whether the action as sent carries a condition the caller's action did not (tablekit's own). */
export function conditionAdded(caller: TransactionAction, sent: TransactionAction | undefined): boolean {
  const conditional = (action: TransactionAction) =>
    action.kind === "insert" || (action.kind !== "upsert" && action.ifMatch !== "*");
  return sent !== undefined && conditional(sent) && !conditional(caller);
}

/** Reports a failure at the caller's operation, also when the service failed on one of its index copies. */
export function toCallerIndex(
  error: TransactionError,
  owners: readonly number[],
  firstOf: readonly number[],
): TransactionError {
  const owner = owners[error.index];
  if (
    owner === undefined ||
    (owner === error.index && firstOf[owner] === error.index && owners.length === firstOf.length)
  )
    return error;
  const onCopy = firstOf[owner] !== error.index;
  return new TransactionError(
    {
      index: owner,
      table: error.table,
      partitionKey: error.partitionKey,
      ...(error.rowKey === undefined ? {} : { rowKey: error.rowKey }),
      ...(error.statusCode === undefined ? {} : { statusCode: error.statusCode }),
      ...(error.serviceCode === undefined ? {} : { serviceCode: error.serviceCode }),
      message: onCopy
        ? "on one of its index copies (a unique index value already taken, or a copy changed meanwhile)"
        : "",
    },
    { cause: error },
  );
}
