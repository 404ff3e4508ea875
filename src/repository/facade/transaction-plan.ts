import { refKey } from "../core/copy-ref.js";
import type { StageDescription } from "../core/group-companion.js";
import type { TableNaming } from "../core/requests.js";
import type { PlanOperation, StepTarget } from "../core/write-plan.js";
import { type ListChange, listReads } from "../index/list-membership.js";
import { planRemoteProtocol, type RemoteProtocol } from "../index/remote-protocol.js";
import { describeSummaryStage } from "../summary/summary-description.js";
import type { PlannedOperation } from "./transaction.js";
import { largeReads, largeRemovals, largeUploads } from "./transaction-large.js";
import type { TransactionParts } from "./transaction-parts.js";

/** What a step of a transaction's plan does (the send path runs each kind; explain renders its requests). */
export type TransactionStepKind =
  /** Before: the large references each replacing operation's row holds now (`readReplaced`). */
  | "replaced references"
  /** Before: the large values uploaded (the rows point at them). */
  | "uploads"
  /** Before, per summary stage: its intent, when a summary is kept in another partition. */
  | "summary intent"
  /** Before: each entity's intent, then its claims of unique values it does not hold yet (`RemoteProtocolRun.begin`). */
  | "remote begin"
  /** Before: the rows riding in the commit read as it is planned, each round (the commit's rounds send them). */
  | "companion reads"
  /** After: each entity's copies elsewhere, its lists, the race settled, the intent removed (`RemoteProtocolRun.finish`). */
  | "remote finish"
  /** After, per summary stage: each remote contribution mirrored, the intent removed. */
  | "summary mirrors"
  /** After: the blobs each replaced row pointed at that its written row no longer does. */
  | "replaced blobs";

/** A step before or after the commit: the requests it sends, in any order among themselves. */
export interface TransactionStep {
  readonly kind: TransactionStepKind;
  /** The summary stage the step is of (`summary intent`, `summary mirrors`). */
  readonly stage?: number;
  readonly requests: readonly StepTarget[];
}

/**
 * The plan of one transaction (or bulk batch), as data: its steps in the order they are sent, and the
 * commit's operations. `commitTransaction` runs each step; `db.explainTransaction` renders each step's
 * requests: both derive from this one description, so the explained plan cannot drift from what is sent.
 */
export interface TransactionPlan {
  readonly before: readonly TransactionStep[];
  readonly commit: {
    readonly request: "transaction";
    readonly table: string;
    readonly partitionKey: string;
    readonly operations: PlanOperation[];
  };
  readonly after: readonly TransactionStep[];
  /** Each caller operation's remote-copy protocol (the `remote begin` and `remote finish` steps' requests). */
  readonly remote: ReadonlyArray<RemoteProtocol | undefined>;
}

/**
 * The plan of a transaction from its parts (`planTransaction`), a pure function of data (issue 30: no
 * planner holds a store). `stored` is the state the plan assumes of each operation's entity: the blobs a
 * replaced row points at are known to the send path only once the first step has read its references,
 * so the send path's plan lists none (its step removes those it finds); an explained plan lists those
 * of the state it is given.
 */
export function transactionPlan(
  naming: TableNaming,
  operations: readonly PlannedOperation[],
  parts: TransactionParts,
  stored: (operation: PlannedOperation) => object | undefined,
): TransactionPlan {
  const { table, partitionKey, summaries, large } = parts;
  const described = summaries.map((stage) => describeSummaryStage(stage, naming));
  const isIntent = (step: StepTarget) => step.request === "insert summary intent";
  const remote = remoteProtocols(naming, operations, parts);
  const before: TransactionStep[] = [
    { kind: "replaced references", requests: largeReads(large) },
    { kind: "uploads", requests: largeUploads(large) },
    ...described.map(
      (description, stage): TransactionStep => ({
        kind: "summary intent",
        stage,
        requests: description.before.filter(isIntent),
      }),
    ),
    { kind: "remote begin", requests: remoteTargets(remote, "before") },
    {
      kind: "companion reads",
      requests: [
        ...described.flatMap((description) => description.before.filter((s) => !isIntent(s))),
        // Each same-partition list row the transaction changes, read once as its round is planned (`listCompanion`).
        ...listReads(uniqueLists(parts.localLists)),
      ],
    },
  ];
  const after: TransactionStep[] = [
    { kind: "remote finish", requests: remoteTargets(remote, "after") },
    ...described.map(
      (description, stage): TransactionStep => ({
        kind: "summary mirrors",
        stage,
        requests: description.after,
      }),
    ),
    { kind: "replaced blobs", requests: largeRemovals(large, stored) },
  ];
  return {
    before,
    commit: { request: "transaction", table, partitionKey, operations: commitOperations(parts, described) },
    after,
    remote,
  };
}

/**
 * The commit's operations: each entity's action, then its copies and rows, then the rows riding along
 * (each summary stage's, then the list entities', rendered by RowKey).
 */
function commitOperations(
  { expanded, localLists }: TransactionParts,
  summaries: readonly StageDescription[],
): PlanOperation[] {
  const operations: PlanOperation[] = expanded.operations.map((operation, at) => ({
    // An entity's first action is its own; the ones after it (same owner) are its copies and rows.
    kind:
      at === 0 || expanded.owners[at - 1] !== expanded.owners[at]
        ? operation.action.kind
        : `${operation.action.kind} copy`,
    rowKey: operation.rowKey,
  }));
  for (const summary of summaries) operations.push(...summary.operations);
  // Named as a single write names them: a list row records no change in the feed (explain-feed.ts).
  for (const { ref } of uniqueLists(localLists))
    operations.push({ kind: `update list (${ref.index})`, rowKey: ref.rowKey });
  return operations;
}

/**
 * Each caller operation's remote-copy protocol (`planRemoteProtocol`, the one single writes run),
 * `undefined` for one without copies elsewhere. A delete is planned as a write (its removals render as
 * `delete replaced copy`, and a refusal reconciles), as transactions always have.
 */
function remoteProtocols(
  naming: TableNaming,
  operations: readonly PlannedOperation[],
  { expanded, remoteLists, table }: TransactionParts,
): Array<RemoteProtocol | undefined> {
  return expanded.remote.map((copies, index) => {
    if (copies === undefined) return undefined;
    const { model, partitionKey, rowKey } = operations[index] as PlannedOperation;
    return planRemoteProtocol({
      model,
      naming,
      table,
      partitionKey,
      rowKey,
      before: copies.before,
      next: copies.next,
      lists: remoteLists[index] ?? [],
      priorEtag: copies.priorEtag,
      unknown: false,
    });
  });
}

/** The requests of one phase of every operation's protocol. */
function remoteTargets(
  protocols: ReadonlyArray<RemoteProtocol | undefined>,
  phase: "before" | "after",
): StepTarget[] {
  return protocols.flatMap((protocol) => (protocol?.[phase] ?? []).map((step) => step.target));
}

/** The list changes of distinct list rows (the companion reads each once, however many entities change it). */
function uniqueLists(lists: TransactionParts["localLists"]): ListChange[] {
  const byRow = new Map<string, ListChange>();
  for (const { change } of lists) if (!byRow.has(refKey(change.ref))) byRow.set(refKey(change.ref), change);
  return [...byRow.values()];
}
