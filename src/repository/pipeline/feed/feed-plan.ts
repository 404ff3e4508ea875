import { ValidationError } from "../../../errors.js";
import { FEED_VERSION_PROPERTY } from "../../../schema/resolve-change-feed.js";
import type { TransactionAction, WireEntity } from "../../../store/table-store.js";
import { wireEntityBytes } from "../../../util/entity-size.js";
import type { StoreLimits } from "../../../util/store-limits.js";
import { feedTransactionLayout } from "./feed-requests.js";
import { FeedProperties, HEAD_ROW_KEY, type JournalKind, journalRow, tombstoneRowKey } from "./feed-rows.js";
import { type FeedState, headSeq, nextVersion } from "./feed-state.js";

/** One transaction of a partition with its change rows: the head first, the caller's actions, then journal rows and tombstones. */
export interface FeedPlan {
  actions: TransactionAction[];
  /** Where the caller's actions start in `actions` (after the head). */
  first: number;
  /** How many of `actions` are the caller's. */
  count: number;
  /** The RowKey of its first journal row (a resend looks for the write id there). */
  journalRowKey: string;
  /** The version each change-fed row gets, by RowKey. */
  versions: Map<string, number>;
}

/** What the plan needs besides the state: which actions are change-fed, the clock and the rules. */
export interface FeedPlanInput {
  table: string;
  partitionKey: string;
  actions: readonly TransactionAction[];
  /** Per action: true when it writes a change-fed entity's row. */
  fed: readonly boolean[];
  state: FeedState;
  at: Date;
  reason: string | undefined;
  /** The write's id, stamped on its journal rows (feed-resend.ts). */
  writeId: string;
  copies: boolean;
  limits: StoreLimits;
}

/**
 * The limits a bulk batch of a change-fed entity is packed within: each item's change rides in its
 * batch (a journal row, a tombstone for a delete) with the partition's head, so a third of the room.
 */
export function feedBatchLimits(limits: StoreLimits, changeFed: boolean): StoreLimits {
  if (!changeFed) return limits;
  return { ...limits, maxTransactionOperations: Math.floor((limits.maxTransactionOperations - 1) / 3) };
}

/** The transaction's room for change rows: the head, one journal row per change, one tombstone per delete. */
export function feedRowsNeeded(actions: readonly TransactionAction[], fed: readonly boolean[]): number {
  let rows = 0;
  actions.forEach((action, i) => {
    if (!fed[i]) return;
    rows += action.kind === "delete" ? 2 : 1;
  });
  return rows === 0 ? 0 : rows + 1;
}

/**
 * Plans the caller's actions with their change rows in one entity group transaction: the head
 * (updated conditionally on its ETag, or inserted), each fed row stamped with its next version, a
 * journal row per change with consecutive sequence numbers, and a tombstone per delete. Over the
 * service's 100 operations it is refused before anything is sent; over its 4 MiB, the journal rows
 * carry keys and versions only.
 */
export function planFeedTransaction(input: FeedPlanInput): FeedPlan {
  const { state, actions, fed, partitionKey } = input;
  const needed = feedRowsNeeded(actions, fed);
  const total = actions.length + needed;
  if (total > input.limits.maxTransactionOperations) {
    throw new ValidationError(
      "batch-size",
      `a transaction of ${actions.length} operations on table ${input.table} needs ${needed} more for its change feed (a head, a journal row per change, a tombstone per delete): ${total} is over the service's ${input.limits.maxTransactionOperations} operations per entity group transaction`,
    );
  }
  let seq = headSeq(state);
  const written: TransactionAction[] = [];
  const journal: WireEntity[] = [];
  const tombstones: TransactionAction[] = [];
  const copies: Array<WireEntity | undefined> = [];
  const entries: Array<{ kind: JournalKind; rowKey: string; version: number }> = [];
  const fedIndexes: number[] = [];
  const deleteIndexes: number[] = [];
  actions.forEach((action, i) => {
    if (!fed[i]) {
      written.push(action);
      return;
    }
    fedIndexes.push(i);
    const rowKey = action.kind === "delete" ? action.rowKey : action.entity.rowKey;
    const version = nextVersion(state, rowKey);
    entries.push({ kind: journalKind(action), rowKey, version });
    if (action.kind === "delete") {
      written.push(action);
      copies.push(undefined);
      deleteIndexes.push(i);
      tombstones.push({
        kind: "upsert",
        mode: "replace",
        entity: {
          partitionKey,
          rowKey: tombstoneRowKey(rowKey),
          [FeedProperties.version]: version,
          [FeedProperties.at]: input.at,
        },
      });
      return;
    }
    const entity = { ...action.entity, [FEED_VERSION_PROPERTY]: version };
    written.push({ ...action, entity });
    copies.push(action.entity);
  });
  let copyRows = input.copies;
  for (let pass = 0; pass < 2; pass++) {
    journal.length = 0;
    entries.forEach((entry, i) => {
      seq++;
      journal.push(
        journalRow(
          partitionKey,
          seq,
          { ...entry, at: input.at, reason: input.reason, write: input.writeId },
          copies[i],
          copyRows,
          input.limits,
        ),
      );
    });
    if (!copyRows || bytesOf(written, journal) <= input.limits.maxTransactionBytes * 0.9) break;
    // The copies would pass the service's 4 MiB per transaction (10% kept for the request's framing).
    seq = headSeq(state);
    copyRows = false;
  }
  const head: TransactionAction =
    state.head === undefined
      ? {
          kind: "insert",
          entity: {
            partitionKey,
            rowKey: HEAD_ROW_KEY,
            [FeedProperties.seq]: seq,
            [FeedProperties.trimmed]: 0,
          },
        }
      : {
          kind: "update",
          mode: "merge",
          ifMatch: state.head.etag,
          entity: { partitionKey, rowKey: HEAD_ROW_KEY, [FeedProperties.seq]: seq },
        };
  // Laid out as explained plans list it (feed-requests.ts).
  const slots = feedTransactionLayout(
    fed,
    actions.map((action) => action.kind === "delete"),
  );
  const journalOf = new Map(fedIndexes.map((of, change) => [of, journal[change] as WireEntity]));
  const tombstoneOf = new Map(deleteIndexes.map((of, at) => [of, tombstones[at] as TransactionAction]));
  const sent = slots.map((slot): TransactionAction => {
    switch (slot.row) {
      case "head":
        return head;
      case "caller":
        return written[slot.index] as TransactionAction;
      case "journal":
        return { kind: "insert", entity: journalOf.get(slot.of) as WireEntity };
      default:
        return tombstoneOf.get(slot.of) as TransactionAction;
    }
  });
  return {
    actions: sent,
    first: 1,
    count: actions.length,
    journalRowKey: journal[0]?.rowKey ?? "",
    versions: new Map(entries.map((entry) => [entry.rowKey, entry.version])),
  };
}

function journalKind(action: TransactionAction): JournalKind {
  switch (action.kind) {
    case "insert":
      return "insert";
    case "delete":
      return "delete";
    default:
      return action.mode === "merge" ? "merge" : "replace";
  }
}

function bytesOf(written: readonly TransactionAction[], journal: readonly WireEntity[]): number {
  let bytes = 0;
  for (const action of written) if (action.kind !== "delete") bytes += wireEntityBytes(action.entity).bytes;
  for (const row of journal) bytes += wireEntityBytes(row).bytes;
  return bytes;
}
