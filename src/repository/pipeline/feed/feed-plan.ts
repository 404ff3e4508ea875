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
  checkFeedRoom(input);
  const changes = stampChanges(input);
  const { journal, seq } = planJournal(input, changes);
  const head = headAction(input.state, input.partitionKey, seq);
  return {
    actions: layOut(input, head, changes, journal),
    first: 1,
    count: input.actions.length,
    journalRowKey: journal[0]?.rowKey ?? "",
    versions: new Map(changes.entries.map((entry) => [entry.rowKey, entry.version])),
  };
}

/** The caller's actions stamped with their versions, and the change rows they call for. */
interface StampedChanges {
  /** The caller's actions, each fed row stamped with its next version. */
  written: TransactionAction[];
  /** Per change, the entity it writes (undefined for a delete), for the journal row's copy. */
  copies: Array<WireEntity | undefined>;
  /** Per change, what its journal row records. */
  entries: Array<{ kind: JournalKind; rowKey: string; version: number }>;
  /** Per delete, its tombstone. */
  tombstones: TransactionAction[];
  /** The index in the caller's actions of each change, and of each delete. */
  fedIndexes: number[];
  deleteIndexes: number[];
}

/** Refuses, before anything is sent, a transaction its change rows would take over the service's operation limit. */
function checkFeedRoom(input: FeedPlanInput): void {
  const { actions } = input;
  const needed = feedRowsNeeded(actions, input.fed);
  const total = actions.length + needed;
  if (total > input.limits.maxTransactionOperations) {
    throw new ValidationError(
      "batch-size",
      `a transaction of ${actions.length} operations on table ${input.table} needs ${needed} more for its change feed (a head, a journal row per change, a tombstone per delete): ${total} is over the service's ${input.limits.maxTransactionOperations} operations per entity group transaction`,
    );
  }
}

/** Stamps each fed row with its next version and notes its change (and a delete's tombstone), in the caller's order. */
function stampChanges(input: FeedPlanInput): StampedChanges {
  const { state, fed } = input;
  const changes: StampedChanges = {
    written: [],
    copies: [],
    entries: [],
    tombstones: [],
    fedIndexes: [],
    deleteIndexes: [],
  };
  input.actions.forEach((action, i) => {
    if (!fed[i]) {
      changes.written.push(action);
      return;
    }
    changes.fedIndexes.push(i);
    const rowKey = action.kind === "delete" ? action.rowKey : action.entity.rowKey;
    const version = nextVersion(state, rowKey);
    changes.entries.push({ kind: journalKind(action), rowKey, version });
    if (action.kind === "delete") {
      changes.written.push(action);
      changes.copies.push(undefined);
      changes.deleteIndexes.push(i);
      changes.tombstones.push(tombstoneAction(input, rowKey, version));
      return;
    }
    const entity = { ...action.entity, [FEED_VERSION_PROPERTY]: version };
    changes.written.push({ ...action, entity });
    changes.copies.push(action.entity);
  });
  return changes;
}

/** The tombstone a delete leaves: the deleted row's last version and when. */
function tombstoneAction(input: FeedPlanInput, rowKey: string, version: number): TransactionAction {
  return {
    kind: "upsert",
    mode: "replace",
    entity: {
      partitionKey: input.partitionKey,
      rowKey: tombstoneRowKey(rowKey),
      [FeedProperties.version]: version,
      [FeedProperties.at]: input.at,
    },
  };
}

/**
 * The journal rows with consecutive sequence numbers after the head's, and the head's new sequence
 * number. With copies asked for, they are left out when they would take the transaction too large.
 */
function planJournal(input: FeedPlanInput, changes: StampedChanges): { journal: WireEntity[]; seq: number } {
  const start = headSeq(input.state);
  let journal = journalRows(input, changes, start, input.copies);
  // The copies would pass the service's 4 MiB per transaction (10% kept for the request's framing).
  if (input.copies && bytesOf(changes.written, journal) > input.limits.maxTransactionBytes * 0.9)
    journal = journalRows(input, changes, start, false);
  return { journal, seq: start + changes.entries.length };
}

function journalRows(
  input: FeedPlanInput,
  changes: StampedChanges,
  start: number,
  copyRows: boolean,
): WireEntity[] {
  return changes.entries.map((entry, i) =>
    journalRow(
      input.partitionKey,
      start + i + 1,
      { ...entry, at: input.at, reason: input.reason, write: input.writeId },
      changes.copies[i],
      copyRows,
      input.limits,
    ),
  );
}

/** The head at its new sequence number: updated on the ETag it was read with, or inserted. */
function headAction(state: FeedState, partitionKey: string, seq: number): TransactionAction {
  return state.head === undefined
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
}

/** The transaction's actions laid out as explained plans list them (feed-requests.ts). */
function layOut(
  input: FeedPlanInput,
  head: TransactionAction,
  changes: StampedChanges,
  journal: readonly WireEntity[],
): TransactionAction[] {
  const slots = feedTransactionLayout(
    input.fed,
    input.actions.map((action) => action.kind === "delete"),
  );
  const journalOf = new Map(changes.fedIndexes.map((of, change) => [of, journal[change] as WireEntity]));
  const tombstoneOf = new Map(
    changes.deleteIndexes.map((of, at) => [of, changes.tombstones[at] as TransactionAction]),
  );
  return slots.map((slot): TransactionAction => {
    switch (slot.row) {
      case "head":
        return head;
      case "caller":
        return changes.written[slot.index] as TransactionAction;
      case "journal":
        return { kind: "insert", entity: journalOf.get(slot.of) as WireEntity };
      default:
        return tombstoneOf.get(slot.of) as TransactionAction;
    }
  });
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
