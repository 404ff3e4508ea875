import { ValidationError } from "../../errors.js";
import type { StoreContinuation } from "../table-store.js";

/** Where one shard's part of a cross-shard query stands. */
export interface ShardCursor {
  /** The shard's own continuation of the page being read (absent: its first page). */
  readonly from?: StoreContinuation | undefined;
  /** True once the shard has no more rows. */
  readonly done?: boolean | undefined;
  /** A partition that page may continue, whose state row an earlier page held: its placement is checked when the page is read. */
  readonly check?: string | undefined;
}

/** Where a cross-shard query stands: each shard's cursor and, when sorted, the last key it returned. */
export interface MergeState {
  /** The last key returned ([PartitionKey, RowKey]): every shard's rows up to it were returned, so a re-read skips them. */
  readonly last?: readonly [string, string] | undefined;
  readonly shards: Readonly<Record<string, ShardCursor>>;
  /** A partition that moved during the query and is being read from where it went, past `last`. */
  readonly reread?: string | undefined;
  /** The map version whose moves were all finished when the query began (merged-query.ts). */
  readonly settled?: number | undefined;
}

const PREFIX = "tkshard1:";

/**
 * One continuation for a query over every shard: each shard's own continuation and how far into
 * its page the merge got, packed into the `nextPartitionKey` the port carries (base64url JSON), so it
 * is stored and passed back like any other.
 */
export function encodeShardContinuation(state: MergeState): StoreContinuation {
  return { nextPartitionKey: PREFIX + Buffer.from(JSON.stringify(state), "utf8").toString("base64url") };
}

/**
 * The state in a continuation `encodeShardContinuation` made; `ValidationError` for any other. A shard
 * the token does not name (added since) is read from its start, past `last`.
 */
export function decodeShardContinuation(
  continuation: StoreContinuation,
  shards: readonly string[],
): MergeState {
  const text = continuation.nextPartitionKey;
  if (!text.startsWith(PREFIX) || continuation.nextRowKey !== undefined) throw invalid();
  let state: MergeState;
  try {
    state = JSON.parse(Buffer.from(text.slice(PREFIX.length), "base64url").toString("utf8")) as MergeState;
  } catch (error) {
    throw invalid(error);
  }
  if (typeof state?.shards !== "object" || state.shards === null) throw invalid();
  if (state.reread !== undefined && typeof state.reread !== "string") throw invalid();
  if (state.settled !== undefined && typeof state.settled !== "number") throw invalid();
  for (const name of Object.keys(state.shards)) if (!shards.includes(name)) throw invalid();
  return state;
}

function invalid(cause?: unknown): ValidationError {
  return new ValidationError(
    "continuation",
    "the continuation is not one of this ShardedStore's cross-shard queries (pass back the one a page returned)",
    { cause },
  );
}
