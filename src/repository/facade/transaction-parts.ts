import type { EntityModel } from "../../schema/entity-model.js";
import type { StoredEntity } from "../../store/table-store.js";
import { isLocal } from "../core/copy-ref.js";
import { readEntity } from "../core/entity-layout.js";
import type { CompanionWrite } from "../core/group-companion.js";
import { isTableNotFound } from "../core/period-tables.js";
import type { PeriodTableLookup, Planning, RequestContext, Requests } from "../core/requests.js";
import { readWide } from "../core/wide-reads.js";
import { type ListChange, listRowKeys } from "../index/list-membership.js";
import { assertNotSummaryKey } from "../summary/summary-committer.js";
import {
  cachedContributions,
  cachedSummaries,
  planSummaryStage,
  type SummaryStagePlan,
} from "../summary/summary-description.js";
import { assertValidTransaction, type PlannedOperation, passedAsIs } from "./transaction.js";
import {
  type ExpandedTransaction,
  expandIndexCopies,
  plannedReads,
  type StoredRead,
} from "./transaction-indexes.js";
import { type LargeWrite, planLargeWrites } from "./transaction-large.js";

/**
 * What a transaction writes, as data, planned from what is stored (one read per entity whose copies or
 * summary delta depend on it, through `read`), before anything is sent: its large values pointed at
 * fresh blobs, the caller's operations with each entity's same-partition copies, its copies elsewhere,
 * and the stages whose rows ride in the entity group transaction (summary rows, list entities). Nothing
 * in it sends: `transactionPlan` describes it, and the executor builds what sends from it
 * (`transactionStages`). `db.transaction` runs it (transaction-commit.ts); `db.explainTransaction`
 * renders it (transaction-explain.ts).
 */
export interface TransactionParts {
  table: string;
  partitionKey: string;
  large: LargeWrite[];
  expanded: ExpandedTransaction;
  /** The summaries of each entity class with summaries (their rows ride first among the companions). */
  summaries: SummaryStagePlan[];
  /** The list entities of this partition the operations change (their rows ride after the summary rows). */
  localLists: Array<{ model: EntityModel<object>; change: ListChange }>;
  /** For each caller operation, its list changes elsewhere (its remote-copy protocol's). */
  remoteLists: ListChange[][];
}

/**
 * Plans a transaction (see `TransactionParts`) for the executor: the reads step sends through `runner`;
 * every rule and every row is planned by pure planners from `planning` and from what the reads step
 * returned (`read`: an entity as stored now). Every rule that needs no request is checked before it
 * resolves.
 */
export async function planTransaction(
  runner: RequestContext,
  planning: Planning,
  operations: readonly PlannedOperation[],
  read?: StoredReader,
): Promise<TransactionParts> {
  const first = operations[0] as PlannedOperation;
  const table = planning.tableName(first.table);
  const partitionKey = first.partitionKey;

  for (const { model, rowKey } of operations)
    if (model.summaries.size > 0) assertNotSummaryKey(model, rowKey);
  // Before: large values (the rows are pointed at them before the copies are derived; nothing is
  // sent for them until every rule has been checked).
  const large = planLargeWrites(table, operations, planning.largeValues);
  const planned = plannedReads(operations, planning, table);
  // The reads step: each operation's in parallel, only after every rule that needs none has passed. A
  // transaction that reads nothing (a plain one, or every entity tracked) awaits nothing: no promise per operation.
  const stored = planned.reads.some((wanted) => wanted !== undefined)
    ? await Promise.all(
        operations.map((operation, index) =>
          readStored(runner, table, operation, planned.reads[index], read),
        ),
      )
    : operations.map(() => undefined);
  const expanded = expandIndexCopies(operations, planning, table, planned, stored);
  const localLists: TransactionParts["localLists"] = [];
  const remoteLists = expanded.lists.map((changes, index) => {
    if (changes.length === 0) return changes;
    const { model, partitionKey } = operations[index] as PlannedOperation;
    const remote: ListChange[] = [];
    for (const change of changes) {
      if (isLocal(change.ref, table, partitionKey)) localLists.push({ model, change });
      else remote.push(change);
    }
    return remote;
  });
  const summaries = summaryPlans(planning, table, operations, expanded);
  assertTransactionFits(planning, table, operations, expanded, localLists, large.length > 0);
  return { table, partitionKey, large, expanded, summaries, localLists, remoteLists };
}

/** Reads the entity an operation writes as stored now (undefined: absent). */
export type StoredReader = (operation: PlannedOperation) => Promise<StoredEntity | undefined>;

/**
 * The reads step, for one operation: what `plannedReads` says its plan needs of what is stored, read for
 * the pure planners (undefined: nothing read, or absent): its entity whole, or a wide entity's rows.
 */
function readStored(
  runner: Requests & PeriodTableLookup,
  table: string,
  operation: PlannedOperation,
  wanted: StoredRead | undefined,
  read: StoredReader = (operation) => readCurrent(operation, runner, table),
): Promise<StoredEntity | undefined> | undefined {
  if (wanted?.kind === "entity") return read(operation);
  if (wanted === undefined) return undefined;
  return readWide(runner, table, operation.partitionKey, operation.rowKey, wanted.select);
}

function readCurrent(
  operation: PlannedOperation,
  runner: Requests & PeriodTableLookup,
  table: string,
): Promise<StoredEntity | undefined> {
  return readEntity(operation.model, runner, table, operation.partitionKey, operation.rowKey).catch(
    (error: unknown) => {
      // A period's table nobody has written to yet holds no entity (the commit creates it).
      if (isTableNotFound(error) && runner.periodTables.has(table)) return undefined;
      throw error;
    },
  );
}

/**
 * Every rule that needs no request, the rows riding along counted (one placeholder per summary row and
 * list entity), before anything is sent; unless these are the caller's operations as they were already
 * checked (no large value, copy or companion row).
 */
function assertTransactionFits(
  planning: Planning,
  table: string,
  operations: readonly PlannedOperation[],
  expanded: ExpandedTransaction,
  localLists: ReadonlyArray<{ change: ListChange }>,
  withLarge: boolean,
): void {
  const rowKeys = companionRowKeys(operations, expanded, localLists);
  const rows = withCompanionRows(expanded.operations, rowKeys, operations[0] as PlannedOperation);
  if (withLarge || !passedAsIs(rows, operations, planning.limits, table))
    assertValidTransaction(rows, planning.limits, () => table);
}

/** The RowKeys of the rows riding in the transaction, as its companions add them: summary rows, then list entities. */
function companionRowKeys(
  operations: readonly PlannedOperation[],
  expanded: ExpandedTransaction,
  localLists: ReadonlyArray<{ change: ListChange }>,
): string[] {
  const models = new Set<EntityModel<object>>();
  expanded.summarized.forEach((write, index) => {
    if (write !== undefined) models.add((operations[index] as PlannedOperation).model);
  });
  const summaryRows = [...models].flatMap((model) => [...model.summaries.values()].map((s) => s.rowKey));
  return [...summaryRows, ...listRowKeys(localLists.map(({ change }) => change))];
}

/**
 * The summaries of each entity class with summaries, as data: rows riding in the transaction, intents
 * around it (the partition it mirrors named with `planning`; what the scope's cache holds of its rows).
 */
function summaryPlans(
  planning: Planning,
  table: string,
  operations: readonly PlannedOperation[],
  expanded: ExpandedTransaction,
): SummaryStagePlan[] {
  const byModel = new Map<EntityModel<object>, CompanionWrite[]>();
  expanded.summarized.forEach((write, index) => {
    if (write === undefined) return;
    const model = (operations[index] as PlannedOperation).model;
    const writes = byModel.get(model) ?? [];
    writes.push(write);
    byModel.set(model, writes);
  });
  return [...byModel].map(([model, writes]) => {
    const cached = cachedSummaries(planning.scope, model, table, (writes[0] as CompanionWrite).partitionKey);
    const plan = planSummaryStage(model, planning, table, writes, cached);
    return { ...plan, mirrored: cachedContributions(planning.scope, model, planning, plan.source) };
  });
}

/** The operations with one placeholder per companion row, for the service rules (count, one partition). */
function withCompanionRows(
  operations: readonly PlannedOperation[],
  rowKeys: readonly string[],
  first: PlannedOperation,
): PlannedOperation[] {
  const rows: PlannedOperation[] = [];
  for (const rowKey of rowKeys) {
    rows.push({
      ...first,
      action: { kind: "upsert", entity: { partitionKey: first.partitionKey, rowKey }, mode: "replace" },
      rowKey,
      entity: undefined,
      describe: `summary row '${rowKey}'`,
    });
  }
  return [...operations, ...rows];
}
