import type { EntityModel } from "../../schema/entity-model.js";
import type { StoredEntity } from "../../store/table-store.js";
import { isLocal } from "../core/copy-ref.js";
import { readEntity } from "../core/entity-layout.js";
import type { CompanionWrite, GroupCompanion } from "../core/group-companion.js";
import { isTableNotFound } from "../core/period-tables.js";
import type {
  Backoff,
  Clock,
  PeriodTableLookup,
  Planning,
  RequestContext,
  Requests,
  Scoped,
  TableNaming,
} from "../core/requests.js";
import { readWide } from "../core/wide-reads.js";
import { type ListChange, listCompanion, listRowKeys } from "../index/list-membership.js";
import { summarySource } from "../summary/remote-summaries.js";
import { SummaryCommitter } from "../summary/summary-committer.js";
import { SummaryStage } from "../summary/summary-stage.js";
import { assertValidTransaction, type PlannedOperation, passedAsIs } from "./transaction.js";
import {
  type ExpandedTransaction,
  expandIndexCopies,
  plannedReads,
  type StoredRead,
} from "./transaction-indexes.js";
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

/**
 * Plans a transaction (see `TransactionParts`) for the executor: the stages that send are built here
 * with `runner`; every rule and every row is planned by pure planners from `planning` and from what the
 * reads step returned (`read`: an entity as stored now). Every rule that needs no request is checked
 * before it resolves.
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

  const committers = summaryCommitters(runner, table, operations);
  // Before: large values (the rows are pointed at them before the copies are derived; nothing is
  // sent for them until every rule has been checked).
  const large = prepareLarge(runner, table, operations);
  const planned = plannedReads(operations, planning, table);
  // The reads step: each operation's in parallel, only after every rule that needs none has passed.
  const stored = await Promise.all(
    operations.map((operation, index) => readStored(runner, table, operation, planned.reads[index], read)),
  );
  const expanded = expandIndexCopies(operations, planning, table, planned, stored);
  const isLocalChange = (change: ListChange, index: number) =>
    isLocal(change.ref, table, (operations[index] as PlannedOperation).partitionKey);
  const localLists = expanded.lists.flatMap((changes, index) =>
    changes
      .filter((change) => isLocalChange(change, index))
      .map((change) => ({ model: (operations[index] as PlannedOperation).model, change })),
  );
  const summaries = summaryStages(runner, planning, table, operations, expanded, committers);
  // Summary rows first: their logs settle a lost answer (see submitRounds).
  const companions = [
    ...summaries.map((stage) => stage.companion),
    ...(localLists.length === 0 ? [] : [listCompanion(localLists, runner)]),
  ];
  assertTransactionFits(planning, table, operations, expanded, localLists, large.length > 0);
  return { table, partitionKey, large, expanded, summaries, companions, isLocalChange };
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

/**
 * The summaries of each entity class with summaries: rows riding in the transaction, intents around it
 * (each stage sends through `runner`; the partition it mirrors is named with `naming`).
 */
function summaryStages(
  runner: Requests & TableNaming & Scoped & Clock & Backoff,
  naming: TableNaming,
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
  return [...byModel].map(([model, writes]) => {
    const source = summarySource(
      model as EntityModel,
      naming,
      table,
      (writes[0] as CompanionWrite).partitionKey,
    );
    return new SummaryStage(model, table, source, runner, committers.get(model) as SummaryCommitter, writes);
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
