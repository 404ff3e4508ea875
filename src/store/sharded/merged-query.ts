import type { StoreContinuation, StoredEntity, StorePage, StoreQuery, TableStore } from "../table-store.js";
import { escapeODataString, partitionRangeOf } from "./filter-partition.js";
import { readPartitionRows } from "./partition-copy.js";
import { isMarkerRow, isTableNotFound, STATE_ROW } from "./partition-markers.js";
import type { PartitionRouter } from "./partition-router.js";
import {
  decodeShardContinuation,
  encodeShardContinuation,
  type ShardCursor,
} from "./sharded-continuation.js";

/** The service's largest page. */
const MAX_PAGE = 1000;

type Key = readonly [string, string];

/** One shard's stream inside a merge: the page being read and the rows of it not yet taken. */
interface ShardStream {
  readonly name: string;
  readonly store: TableStore;
  from: StoreContinuation | undefined;
  next: StoreContinuation | undefined;
  rows: StoredEntity[];
  loaded: boolean;
  done: boolean;
  missingTable: unknown;
  /** A partition the page being read continues past its state row, which an earlier page held: checked when it is read. */
  check: string | undefined;
  /** The partition the page last read ends in, and whether it ends past the partition's state row. */
  tail: Tail | undefined;
}

/** The partition a shard's page ends in; `pastState`: the page (or one before it) held its state row and a row after it. */
interface Tail {
  readonly partitionKey: string;
  readonly pastState: boolean;
}

/** A partition read whole from the shard it moved to, during the query: its rows past the merge's position. */
interface Reread {
  readonly partitionKey: string;
  readonly rows: StoredEntity[];
}

/**
 * One page of a query over every shard, in (PartitionKey, RowKey) order: each shard is read in pages
 * of about its share of `top`, and the smallest head is taken until the page holds `top` rows or every shard is done. A
 * row is taken only from the shard where its partition's rows are complete (the cached map's shard,
 * checked through the partition's markers when another shard also answers for it, as in a move).
 *
 * A partition can move while the query runs: its rows leave the old shard (after the new one was
 * read past them) and would be missed. So each shard's pages also carry the partitions' state rows
 * (the filter widened by `or RowKey eq '<state row>'`); a `moved` state row met in a shard's stream, or
 * a page that starts inside a partition whose shard changed since the page before, has the partition
 * read again whole (past the merge's position) from the shard where it is complete now, and its rows
 * taken from that read only.
 */
export async function queryAcrossShards(
  router: PartitionRouter,
  names: readonly string[],
  table: string,
  query: StoreQuery,
  sorted: boolean,
): Promise<StorePage> {
  const top = Math.min(query.top ?? MAX_PAGE, MAX_PAGE);
  // Each shard gives about its share of a merged page: asking each for a whole page would read (and,
  // on the next page, read again) the rows the merge leaves. A shard that runs short is read on.
  const shardTop = sorted ? Math.min(top, Math.ceil((top * 1.25) / names.length) + 1) : top;
  const state =
    query.continuation === undefined ? { shards: {} } : decodeShardContinuation(query.continuation, names);
  const cursors: Readonly<Record<string, ShardCursor>> = state.shards;
  let last = state.last;
  /** The stream the last row taken came from (in this call), `undefined` for a reread. */
  let lastFrom: string | undefined;
  /** True when the rows of the partition at the merge's position come from a shard other than `shard` (in this call). */
  const servedElsewhere = (partitionKey: string, shard: string | undefined): boolean =>
    last?.[0] === partitionKey && lastFrom !== undefined && lastFrom !== shard;
  const select = withKeys(query.select);
  // Sorted merges also read the partitions' `moved` state rows, to see partitions that move meanwhile.
  const shardQuery = sorted ? withStateRows(query.filter, select) : { filter: query.filter, select };
  // A partition moved by a move that had finished when the query began is open on its new shard, whose
  // stream the query reads after that: its `moved` row on the old shard needs no following.
  const settled = sorted
    ? (state.settled ?? (query.continuation === undefined ? await router.settledVersion() : 0))
    : 0;
  const departed = (row: StoredEntity): boolean =>
    row.rowKey === STATE_ROW &&
    row.state === "moved" &&
    !(typeof row.mapVersion === "number" && row.mapVersion <= settled);
  const streams: ShardStream[] = names.map((name) => ({
    name,
    store: router.shard(name),
    from: cursors[name]?.from,
    next: undefined,
    rows: [],
    loaded: false,
    done: cursors[name]?.done === true,
    missingTable: undefined,
    check: cursors[name]?.check,
    tail: undefined,
  }));
  /** Entries of a stream that are not rows: a partition that left that shard (its `moved` state row). */
  const departures = new WeakSet<StoredEntity>();
  const fill = async (s: ShardStream): Promise<void> => {
    while (!s.done && s.rows.length === 0) {
      if (s.loaded) {
        if (s.next === undefined) {
          s.done = true;
          break;
        }
        s.check = s.tail?.pastState === true ? s.tail.partitionKey : undefined;
        s.from = s.next;
      }
      try {
        const page = await s.store.queryPage(table, {
          ...query,
          ...shardQuery,
          top: shardTop,
          continuation: s.from,
        });
        s.next = page.continuation;
        s.tail = tailOf(page.items, s.tail, page.items.length >= shardTop, departed);
        const after = last;
        s.rows = page.items.filter((row) => {
          if (after !== undefined && compare(keyOf(row), after) <= 0) return false;
          if (!isMarkerRow(row.rowKey)) return true;
          if (sorted && departed(row)) departures.add(row);
          return departures.has(row);
        });
        // The page may continue a partition past its state row, which an earlier page held (so this page
        // has no state row of it to tell a move): if it left this shard in between, read its rest where it went.
        const continued = s.check;
        if (sorted && continued !== undefined && !servedElsewhere(continued, s.name)) {
          const where = await router.readableShard(table, continued);
          if (where !== undefined && where !== s.name) {
            const departure = { partitionKey: continued, rowKey: "" } as StoredEntity;
            departures.add(departure);
            s.rows.unshift(departure);
          }
        }
      } catch (error) {
        // A shard added without this table yet has none of its rows.
        if (!isTableNotFound(error)) throw error;
        s.missingTable = error;
        s.next = undefined;
        s.rows = [];
      }
      s.loaded = true;
      // Unsorted backends: a page is taken whole, in the order it came, one shard after another.
      if (!sorted) break;
    }
  };
  const readable = new Map<string, Promise<string | undefined>>();
  let reread: Reread | undefined;
  /** A partition left shard `from` during the query: read its rows past the merge's position where they are complete now. */
  const follow = async (partitionKey: string, from: string | undefined): Promise<void> => {
    // Already read from where it went, wholly behind the merge's position (its rows were taken), or
    // its rows up to here came from another shard's stream, which the merge trusted for it and reads on.
    if (reread?.partitionKey === partitionKey || (last !== undefined && partitionKey < last[0])) return;
    if (servedElsewhere(partitionKey, from)) return;
    const where = await router.readableShard(table, partitionKey);
    readable.set(partitionKey, Promise.resolve(where));
    if (where === undefined || where === from) return;
    const past = last?.[0] === partitionKey ? last[1] : undefined;
    const rows = await readPartitionRows(router.shard(where), table, partitionKey, {
      filter: partitionFilter(partitionKey, past, query.filter),
      select,
    });
    reread = { partitionKey, rows };
  };
  if (state.reread !== undefined && sorted) await follow(state.reread, undefined);
  const accept = async (
    from: readonly ShardStream[],
    partitionKey: string,
  ): Promise<ShardStream | undefined> => {
    const owner = await router.ownerOf(table, partitionKey);
    if (from.length === 1 && from[0]?.name === owner && !readable.has(partitionKey)) return from[0];
    let where = readable.get(partitionKey);
    if (where === undefined) {
      where = router.readableShard(table, partitionKey);
      readable.set(partitionKey, where);
    }
    const shard = await where;
    // Rows written before the store was sharded carry no markers: the map's shard answers for them.
    return from.find((s) => s.name === (shard ?? owner)) ?? (shard === undefined ? from[0] : undefined);
  };

  const items: StoredEntity[] = [];
  if (sorted) {
    while (items.length < top) {
      await Promise.all(streams.filter((s) => !s.done && s.rows.length === 0).map(fill));
      const heads = streams.filter((s) => s.rows.length > 0);
      const rereadHead = reread?.rows[0];
      if (heads.length === 0 && rereadHead === undefined) break;
      const least = [
        ...heads.map((s) => keyOf(s.rows[0] as StoredEntity)),
        ...(rereadHead === undefined ? [] : [keyOf(rereadHead)]),
      ].reduce((a, b) => (compare(a, b) <= 0 ? a : b));
      const tied = heads.filter((s) => compare(keyOf(s.rows[0] as StoredEntity), least) === 0);
      const departing = tied.filter((s) => departures.has(s.rows[0] as StoredEntity));
      if (departing.length > 0) {
        for (const s of departing) {
          s.rows.shift();
          await follow(least[0], s.name);
        }
        continue;
      }
      if (reread?.partitionKey === least[0]) {
        // The partition is read from where it moved: the shards' own rows of it are left.
        for (const s of tied) s.rows.shift();
        if (rereadHead !== undefined && compare(keyOf(rereadHead), least) === 0) {
          items.push(reread.rows.shift() as StoredEntity);
        }
        last = least;
        lastFrom = undefined;
        continue;
      }
      const chosen = await accept(tied, least[0]);
      const taken = tied.map((s) => s.rows.shift() as StoredEntity);
      if (chosen !== undefined) items.push(taken[tied.indexOf(chosen)] as StoredEntity);
      last = least;
      lastFrom = chosen?.name;
    }
  } else {
    const stream = streams.find((s) => !s.done);
    if (stream !== undefined) {
      await fill(stream);
      for (const row of stream.rows) {
        if ((await accept([stream], row.partitionKey)) !== undefined) items.push(row);
      }
      stream.rows = [];
    }
  }
  if (streams.every((s) => s.missingTable !== undefined)) throw streams[0]?.missingTable;

  const next: Record<string, ShardCursor> = {};
  let more = false;
  for (const s of streams) {
    const consumed = s.loaded && s.rows.length === 0;
    const done = s.done || (consumed && s.next === undefined);
    more ||= !done;
    const check = consumed ? (s.tail?.pastState === true ? s.tail.partitionKey : undefined) : s.check;
    next[s.name] = done ? { done: true } : { from: consumed ? s.next : s.from, ...(check ? { check } : {}) };
  }
  // Still inside a partition read from where it moved: the next page reads it there again.
  const rereading = reread !== undefined && last?.[0] === reread.partitionKey;
  if (rereading && (reread?.rows.length ?? 0) > 0) more = true;
  const page: StorePage = { items: items.map((row) => stripKeys(row, query.select)) };
  if (more) {
    page.continuation = encodeShardContinuation({
      last,
      shards: next,
      ...(rereading ? { reread: reread?.partitionKey } : {}),
      ...(settled > 0 ? { settled } : {}),
    });
  }
  return page;
}

/** `select` with the keys added (a merge orders by them and hides marker rows by RowKey). */
export function withKeys(select: readonly string[] | undefined): readonly string[] | undefined {
  if (select === undefined || select.length === 0) return select;
  return [...new Set([...select, "PartitionKey", "RowKey"])];
}

/** The row without the keys (and the state-row column) `select` did not name, as the service would answer. */
export function stripKeys(row: StoredEntity, select: readonly string[] | undefined): StoredEntity {
  if (select === undefined || select.length === 0) return row;
  const copy: Record<string, unknown> = { ...row };
  if (!select.includes("PartitionKey")) delete copy.partitionKey;
  if (!select.includes("RowKey")) delete copy.rowKey;
  for (const column of STATE_COLUMNS) if (!select.includes(column)) delete copy[column];
  return copy as StoredEntity;
}

/** The state row's columns a merged query reads: where a partition went, and by which map (partition-markers.ts). */
const STATE_COLUMNS = ["state", "mapVersion"];

/**
 * A shard's query in a sorted merge: the user's filter, `or` the `moved` state rows of the partitions
 * it can match (kept to its top-level PartitionKey range, so a range stays a range); the state columns
 * selected. Without a filter every row comes anyway.
 */
function withStateRows(filter: string | undefined, select: readonly string[] | undefined) {
  const movedRows = `RowKey eq '${STATE_ROW}' and state eq 'moved'`;
  const range = partitionRangeOf(filter);
  return {
    filter:
      filter === undefined
        ? undefined
        : `(${filter}) or (${range === undefined ? movedRows : `${range} and ${movedRows}`})`,
    select:
      select === undefined || select.length === 0 ? select : [...new Set([...select, ...STATE_COLUMNS])],
  };
}

/** One partition's rows past `past` (a RowKey), matching the user's filter. */
function partitionFilter(partitionKey: string, past: string | undefined, filter: string | undefined): string {
  const parts = [`PartitionKey eq '${escapeODataString(partitionKey)}'`];
  if (past !== undefined) parts.push(`RowKey gt '${escapeODataString(past)}'`);
  if (filter !== undefined) parts.push(`(${filter})`);
  return parts.join(" and ");
}

/**
 * The partition a page ends in, and whether the page ends past its state row: the page (or, for a
 * partition it continues, an earlier one) holds the state row and either a row of it after that or as
 * many rows as were asked for (it may have stopped right after the state row). Only then can the next
 * page hold rows of it and no state row to tell that it moved meanwhile; a page that stopped short of
 * `top` stopped at the partition's end (the service breaks pages at partitions).
 */
function tailOf(
  items: readonly StoredEntity[],
  before: Tail | undefined,
  full: boolean,
  departed: (row: StoredEntity) => boolean,
): Tail | undefined {
  const partitionKey = items.at(-1)?.partitionKey;
  if (partitionKey === undefined) return before;
  let pastState = before?.partitionKey === partitionKey && before.pastState;
  let rowAfter = false;
  for (let i = items.length - 1; i >= 0 && items[i]?.partitionKey === partitionKey; i--) {
    const rowKey = items[i]?.rowKey;
    if (rowKey === STATE_ROW) {
      // A partition whose move had finished when the query began has no rows here any more.
      const settledAway = items[i]?.state === "moved" && !departed(items[i] as StoredEntity);
      pastState ||= !settledAway && (rowAfter || full);
      break;
    }
    if (!isMarkerRow(rowKey)) rowAfter = true;
  }
  return { partitionKey, pastState };
}

function keyOf(row: StoredEntity): Key {
  return [row.partitionKey, row.rowKey];
}

/** Ordinal comparison, as the service orders keys. */
function compare(a: Key, b: Key): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
  return a[1] === b[1] ? 0 : a[1] < b[1] ? -1 : 1;
}
