import { TransactionError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import type { StoredEntity, TableStore, TransactionAction } from "../../store/table-store.js";
import type { Backend, Clock, Requests } from "../core/requests.js";
import type { FeedDirectory, FeedPartition } from "../pipeline/feed/feed-directory.js";
import {
  FeedProperties,
  HEAD_ROW_KEY,
  journalAfterFilter,
  seqOfJournalRowKey,
  tombstonesFilter,
} from "../pipeline/feed/feed-rows.js";
import { withFeedRows } from "../pipeline/feed/feed-visibility.js";
import { isTableNotFound } from "../pipeline/period-table-store.js";

/** What one trimming pass removed. */
export interface FeedTrimCounts {
  changesTrimmed: number;
  tombstonesTrimmed: number;
}

/**
 * Deletes, in every listed partition of each change-fed model, the journal rows and tombstones
 * older than the model's retention by the context's clock. Journal rows go oldest first, with the
 * head's `Trimmed` raised in the same transaction (conditional on the head's ETag), so a reader
 * whose position is older gets a `ChangeFeedGapError`; a lost race on the head leaves the rest to
 * the next pass.
 */
export async function trimFeeds(
  runner: Requests & Clock & Backend,
  directory: FeedDirectory,
  models: Iterable<EntityModel>,
  limits: { maxTransactionOperations: number },
): Promise<FeedTrimCounts> {
  const counts: FeedTrimCounts = { changesTrimmed: 0, tombstonesTrimmed: 0 };
  const seen = new Set<string>();
  for (const model of models) {
    const feed = model.changeFeed;
    if (feed === undefined || seen.has(model.table)) continue;
    seen.add(model.table);
    const cutoff = runner.now() - feed.retentionMs;
    const partitions = await withFeedRows(() =>
      runner.run("listEntities", directory.table, (store) => directory.list(store, model.table)),
    );
    for (const partition of partitions) {
      const max = limits.maxTransactionOperations;
      try {
        counts.changesTrimmed += await trimJournal(runner, partition, cutoff, max);
        counts.tombstonesTrimmed += await trimTombstones(runner, partition, cutoff, max);
      } catch (error) {
        // A period's table dropped by db.dropTables has nothing left to trim.
        if (!isTableNotFound(error)) throw error;
      }
    }
  }
  return counts;
}

async function trimJournal(
  runner: Requests & Backend,
  partition: FeedPartition,
  cutoff: number,
  maxOps: number,
): Promise<number> {
  const { table, partitionKey } = partition;
  const rows = await readWhileOld(runner, table, journalAfterFilter(partitionKey, 0), cutoff, true);
  const head = rows.find((row) => row.rowKey === HEAD_ROW_KEY);
  const old = rows.filter((row) => row.rowKey !== HEAD_ROW_KEY);
  if (head === undefined || old.length === 0) return 0;
  let etag = head.etag;
  let trimmed = 0;
  for (let start = 0; start < old.length; start += maxOps - 1) {
    const chunk = old.slice(start, start + maxOps - 1);
    const last = seqOfJournalRowKey((chunk[chunk.length - 1] as StoredEntity).rowKey);
    const actions: TransactionAction[] = [
      {
        kind: "update",
        mode: "merge",
        ifMatch: etag,
        entity: { partitionKey, rowKey: HEAD_ROW_KEY, [FeedProperties.trimmed]: last },
      },
      ...chunk.map(
        (row): TransactionAction => ({ kind: "delete", partitionKey, rowKey: row.rowKey, ifMatch: "*" }),
      ),
    ];
    try {
      const results = await withFeedRows(() =>
        runner.run("submitTransaction", table, (store) =>
          store.submitTransaction(table, partitionKey, actions),
        ),
      );
      etag = (results[0] as { etag: string }).etag;
      trimmed += chunk.length;
    } catch (error) {
      // A writer of the partition moved the head: the next pass trims the rest.
      if (error instanceof TransactionError) break;
      throw error;
    }
  }
  return trimmed;
}

async function trimTombstones(
  runner: Requests & Backend,
  partition: FeedPartition,
  cutoff: number,
  maxOps: number,
): Promise<number> {
  const { table, partitionKey } = partition;
  const rows = await readWhileOld(runner, table, tombstonesFilter(partitionKey), cutoff, false);
  let trimmed = 0;
  for (let start = 0; start < rows.length; start += maxOps) {
    const actions = rows
      .slice(start, start + maxOps)
      .map(
        (row): TransactionAction => ({ kind: "delete", partitionKey, rowKey: row.rowKey, ifMatch: row.etag }),
      );
    try {
      await withFeedRows(() =>
        runner.run("submitTransaction", table, (store) =>
          store.submitTransaction(table, partitionKey, actions),
        ),
      );
      trimmed += actions.length;
    } catch (error) {
      // A delete rewrote one of them meanwhile: the next pass sees its new date.
      if (!(error instanceof TransactionError)) throw error;
    }
  }
  return trimmed;
}

/**
 * The rows the filter names whose `_tkfAt` is before `cutoff` (the head too). With `ordered`, only the
 * oldest ones up to the first newer one (journal rows are dated in sequence order); a backend without
 * sorted results (Cosmos DB) is read whole and sorted first.
 */
async function readWhileOld(
  runner: Requests & Backend,
  table: string,
  filter: string,
  cutoff: number,
  ordered: boolean,
): Promise<StoredEntity[]> {
  const sorted = runner.backend.capabilities.sortedResults;
  const rows: StoredEntity[] = [];
  let continuation: Awaited<ReturnType<TableStore["queryPage"]>>["continuation"];
  do {
    const page = await withFeedRows(() =>
      runner.run("listEntities", table, (store) =>
        store.queryPage(table, {
          filter,
          select: ["RowKey", FeedProperties.at, FeedProperties.trimmed],
          continuation,
        }),
      ),
    );
    rows.push(...page.items);
    continuation = page.continuation;
    // Sorted: a page that reaches a newer row ends the old ones.
    if (sorted && ordered && page.items.some((row) => row.rowKey !== HEAD_ROW_KEY && !isOld(row, cutoff)))
      break;
  } while (continuation !== undefined);
  if (!sorted) rows.sort((a, b) => (a.rowKey < b.rowKey ? -1 : a.rowKey > b.rowKey ? 1 : 0));
  const out: StoredEntity[] = [];
  for (const row of rows) {
    if (row.rowKey === HEAD_ROW_KEY || isOld(row, cutoff)) out.push(row);
    else if (ordered) break;
  }
  return out;
}

function isOld(row: StoredEntity, cutoff: number): boolean {
  const at = row[FeedProperties.at];
  return at instanceof Date && at.getTime() < cutoff;
}
