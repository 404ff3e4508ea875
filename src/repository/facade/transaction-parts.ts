import type { EntityModel } from "../../schema/entity-model.js";
import { isLocal } from "../core/copy-ref.js";
import type { GroupCompanion } from "../core/group-companion.js";
import type { Backoff, Clock, RequestContext, Requests, Scoped, TableNaming } from "../core/requests.js";
import { type ListChange, listCompanion } from "../index/list-membership.js";
import { SummaryCommitter } from "../summary/summary-committer.js";
import { SummaryStage } from "../summary/summary-stage.js";
import { assertValidTransaction, type PlannedOperation, passedAsIs } from "./transaction.js";
import { type ExpandedTransaction, expandIndexCopies, type StoredReader } from "./transaction-indexes.js";
import { type LargeWork, prepareLarge } from "./transaction-large.js";

/**
 * What a transaction writes, planned from what is stored (one read per entity whose copies or
 * summary delta depend on it, through `read`), before anything is sent: its large values pointed at
 * fresh blobs, the caller's operations with each entity's same-partition copies, its copies
 * elsewhere, and the stages whose rows ride in the entity group transaction (summary rows, list
 * entities). `db.transaction` runs it (transaction-commit.ts); `db.explainTransaction` renders it
 * (transaction-explain.ts).
 */
export interface TransactionParts {
  table: string;
  partitionKey: string;
  large: LargeWork[];
  expanded: ExpandedTransaction;
  summaries: SummaryStage[];
  /** The rows riding in the transaction besides the operations: summary rows first, then list entities. */
  companions: GroupCompanion[];
  isLocalChange: (change: ListChange, index: number) => boolean;
}

/** Plans a transaction (see `TransactionParts`); every rule that needs no request is checked before it resolves. */
export async function planTransaction(
  runner: RequestContext,
  operations: readonly PlannedOperation[],
  read?: StoredReader,
): Promise<TransactionParts> {
  const first = operations[0] as PlannedOperation;
  const table = runner.tableName(first.table);
  const partitionKey = first.partitionKey;

  const committers = summaryCommitters(runner, table, operations);
  // Before: large values (the rows are pointed at them before the copies are derived; nothing is
  // sent for them until every rule has been checked).
  const large = prepareLarge(runner, table, operations);
  const expanded = await expandIndexCopies(operations, runner, table, read);
  const isLocalChange = (change: ListChange, index: number) =>
    isLocal(change.ref, table, (operations[index] as PlannedOperation).partitionKey);
  const localLists = expanded.lists.flatMap((changes, index) =>
    changes
      .filter((change) => isLocalChange(change, index))
      .map((change) => ({ model: (operations[index] as PlannedOperation).model, change })),
  );
  const summaries = summaryStages(runner, table, operations, expanded, committers);
  // Summary rows first: their logs settle a lost answer (see submitRounds).
  const companions = [
    ...summaries.map((stage) => stage.companion),
    ...(localLists.length === 0 ? [] : [listCompanion(localLists, runner)]),
  ];
  // Every rule that needs no request, the summary rows counted, before anything is sent (unless these
  // are the caller's operations as they were already checked: no large value, copy or companion row).
  const rows = withCompanionRows(expanded.operations, companions, first);
  if (large.length > 0 || !passedAsIs(rows, operations, runner.limits, table))
    assertValidTransaction(rows, runner.limits, () => table);
  return { table, partitionKey, large, expanded, summaries, companions, isLocalChange };
}

/**
 * The summary committer of each entity class with summaries; refuses, before any request, an entity
 * whose RowKey is a summary row's.
 */
function summaryCommitters(
  runner: Requests & Scoped & Backoff,
  table: string,
  operations: readonly PlannedOperation[],
): Map<EntityModel<object>, SummaryCommitter> {
  const committers = new Map<EntityModel<object>, SummaryCommitter>();
  operations.forEach((operation) => {
    const { model } = operation;
    if (model.summaries.size === 0) return;
    let committer = committers.get(model);
    if (committer === undefined) {
      committer = new SummaryCommitter(model, table, runner);
      committers.set(model, committer);
    }
    committer.assertNotSummaryKey(operation.rowKey);
  });
  return committers;
}

/** The summaries of each entity class with summaries: rows riding in the transaction, intents around it. */
function summaryStages(
  runner: Requests & TableNaming & Scoped & Clock & Backoff,
  table: string,
  operations: readonly PlannedOperation[],
  expanded: ExpandedTransaction,
  committers: ReadonlyMap<EntityModel<object>, SummaryCommitter>,
): SummaryStage[] {
  const byModel = new Map<EntityModel<object>, NonNullable<ExpandedTransaction["summarized"][number]>[]>();
  expanded.summarized.forEach((write, index) => {
    if (write === undefined) return;
    const model = (operations[index] as PlannedOperation).model;
    const writes = byModel.get(model) ?? [];
    writes.push(write);
    byModel.set(model, writes);
  });
  return [...byModel].map(
    ([model, writes]) =>
      new SummaryStage(model, table, runner, committers.get(model) as SummaryCommitter, writes),
  );
}

/** The operations with one placeholder per summary row, for the service rules (count, one partition). */
function withCompanionRows(
  operations: readonly PlannedOperation[],
  companions: readonly GroupCompanion[],
  first: PlannedOperation,
): PlannedOperation[] {
  const rows: PlannedOperation[] = [];
  for (const companion of companions) {
    for (const rowKey of companion.rowKeys) {
      rows.push({
        ...first,
        action: { kind: "upsert", entity: { partitionKey: first.partitionKey, rowKey }, mode: "replace" },
        rowKey,
        entity: undefined,
        describe: `summary row '${rowKey}'`,
      });
    }
  }
  return [...operations, ...rows];
}
