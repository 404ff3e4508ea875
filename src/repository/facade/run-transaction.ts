import type { TableStore } from "../../store/table-store.js";
import { registerPeriodTables } from "../core/period-tables.js";
import type { Planning, RequestContext } from "../core/requests.js";
import { assertBlobStore } from "../large/large-values.js";
import type { PeriodTableNames } from "../pipeline/period-table-store.js";
import { assertValidTransaction, type PlannedOperation } from "./transaction.js";
import { commitTransaction, type TransactionResult } from "./transaction-commit.js";

/**
 * `db.transaction` after the callback: every operation checked (a large column's blob store, the
 * service rules; no request), period tables registered, then committed (`commitTransaction`): `runner`
 * sends, `planning` is all its planners are given.
 */
export function runTransaction(
  runner: RequestContext,
  planning: Planning,
  store: TableStore,
  periodTables: PeriodTableNames,
  operations: readonly PlannedOperation[],
): Promise<TransactionResult> {
  // A large column's blob container is named after the entity's table: the context must know it.
  for (const operation of operations) assertBlobStore(operation.model, store);
  // The caller's operations first (no request), then again with what each entity keeps added.
  assertValidTransaction(operations, planning.limits, (t) => planning.tableName(t));
  const first = operations[0] as PlannedOperation;
  // A period's table that does not exist yet is created by the transaction's first write of it.
  registerPeriodTables(periodTables, first.model);
  return commitTransaction(runner, planning, operations);
}
