import type { PlanOperation, RenderedStep } from "../core/write-plan.js";
import {
  type FeedExplainer,
  feedStateGroups,
  feedTransactionLayout,
} from "../pipeline/feed/feed-requests.js";
import { FEED_ROW_PREFIX, HEAD_ROW_KEY, tombstoneRowKey } from "../pipeline/feed/feed-rows.js";

/** Whether the state a plan assumes holds a row: only a stored row's delete records a change. */
export type StoredRow = (table: string, partitionKey: string, rowKey: string) => boolean;

/** The operations that write an entity's own row (copies and summary rows are named otherwise, and record no change). */
const ENTITY_ROW_KINDS = new Set(["insert", "upsert", "update", "merge", "replace", "delete"]);

/** A journal row's RowKey holds the sequence number the head gives it when sent: unknown to a plan. */
const NEXT_JOURNAL_ROW = `${FEED_ROW_PREFIX}j~(next)`;

/**
 * A rendered plan with the change feed's requests, as the feeding store sends them (the layout and
 * the state queries come from pipeline/feed/feed-requests.ts, which it uses too). Each step that writes
 * a change-fed entity's row is preceded by the partition's directory upsert (only before this process
 * listed the partition, once per plan) and its state queries (one per six rows, in parallel), and is
 * sent as one entity group transaction: the head, its operations, a journal row per change, a tombstone
 * per delete. A delete of a row the state says is absent records nothing.
 */
export function withFeedSteps(
  steps: readonly RenderedStep[],
  feed: FeedExplainer | undefined,
  stored: StoredRow,
): RenderedStep[] {
  if (feed === undefined) return [...steps];
  let groups = Math.max(0, ...steps.map((step) => step.group ?? 0));
  const listed = new Set<string>();
  return steps.flatMap((step): RenderedStep[] => {
    const fedTable = feed.tables.lookup(step.table);
    const { operations, partitionKey } = step;
    if (fedTable === undefined || operations === undefined || partitionKey === undefined) return [step];
    const own = operations.map((operation) => ENTITY_ROW_KINDS.has(operation.kind));
    if (!own.includes(true)) return [step];
    const deletes = operations.map((operation) => operation.kind === "delete");
    const fed = operations.map(
      (operation, i) =>
        own[i] === true && (!deletes[i] || stored(step.table, partitionKey, operation.rowKey)),
    );
    const phase = step.phase === "commit" ? "before" : step.phase;
    const inherited = step.group === undefined ? {} : { group: step.group };
    const reads: RenderedStep[] = [];
    const partition = { table: step.table, partitionKey };
    const key = `${step.table}\u0000${partitionKey}`;
    if (!feed.directory.has(fedTable.logical, partition) && !listed.has(key)) {
      reads.push({ phase, request: "upsert (feed directory)", table: feed.directory.table, ...inherited });
    }
    listed.add(key);
    const queries = feedStateGroups(operations.map((operation) => operation.rowKey));
    const queryGroup = step.group ?? (queries.length > 1 ? ++groups : undefined);
    for (const _ of queries) {
      reads.push({
        phase,
        request: "query (feed head and versions)",
        table: step.table,
        partitionKey,
        ...(queryGroup === undefined ? {} : { group: queryGroup }),
      });
    }
    if (!fed.includes(true)) return [...reads, step];
    const sent = feedTransactionLayout(fed, deletes).map((slot): PlanOperation => {
      switch (slot.row) {
        case "head":
          return { kind: "feed head", rowKey: HEAD_ROW_KEY };
        case "caller":
          return operations[slot.index] as PlanOperation;
        case "journal":
          return { kind: "insert feed journal", rowKey: NEXT_JOURNAL_ROW };
        default:
          return {
            kind: "upsert feed tombstone",
            rowKey: tombstoneRowKey((operations[slot.of] as PlanOperation).rowKey),
          };
      }
    });
    const { rowKey: _single, ...target } = step;
    return [...reads, { ...target, request: "transaction", operations: sent }];
  });
}
