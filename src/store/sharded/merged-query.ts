import type { StoreContinuation, StoredEntity, StorePage, StoreQuery, TableStore } from "../table-store.js";
import { isMarkerRow, isTableNotFound } from "./partition-markers.js";
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
}

/**
 * One page of a query over every shard, in (PartitionKey, RowKey) order: each shard is read in pages
 * of about its share of `top`, and the smallest head is taken until the page holds `top` rows or every shard is done. A
 * row is taken only from the shard where its partition's rows are complete (the cached map's shard,
 * checked through the partition's markers when another shard also answers for it, as in a move).
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
  const select = withKeys(query.select);
  const streams: ShardStream[] = names.map((name) => ({
    name,
    store: router.shard(name),
    from: cursors[name]?.from,
    next: undefined,
    rows: [],
    loaded: false,
    done: cursors[name]?.done === true,
    missingTable: undefined,
  }));
  const fill = async (s: ShardStream): Promise<void> => {
    while (!s.done && s.rows.length === 0) {
      if (s.loaded) {
        if (s.next === undefined) {
          s.done = true;
          break;
        }
        s.from = s.next;
      }
      try {
        const page = await s.store.queryPage(table, {
          ...query,
          select,
          top: shardTop,
          continuation: s.from,
        });
        s.next = page.continuation;
        const after = last;
        s.rows = page.items.filter(
          (row) => !isMarkerRow(row.rowKey) && (after === undefined || compare(keyOf(row), after) > 0),
        );
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
      if (heads.length === 0) break;
      const least = heads
        .map((s) => keyOf(s.rows[0] as StoredEntity))
        .reduce((a, b) => (compare(a, b) <= 0 ? a : b));
      const tied = heads.filter((s) => compare(keyOf(s.rows[0] as StoredEntity), least) === 0);
      const chosen = await accept(tied, least[0]);
      const taken = tied.map((s) => s.rows.shift() as StoredEntity);
      if (chosen !== undefined) items.push(taken[tied.indexOf(chosen)] as StoredEntity);
      last = least;
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
    next[s.name] = done ? { done: true } : { from: consumed ? s.next : s.from };
  }
  const page: StorePage = { items: items.map((row) => stripKeys(row, query.select)) };
  if (more) page.continuation = encodeShardContinuation({ last, shards: next });
  return page;
}

/** `select` with the keys added (a merge orders by them and hides marker rows by RowKey). */
export function withKeys(select: readonly string[] | undefined): readonly string[] | undefined {
  if (select === undefined || select.length === 0) return select;
  return [...new Set([...select, "PartitionKey", "RowKey"])];
}

/** The row without the keys `select` did not name, as the service would answer. */
export function stripKeys(row: StoredEntity, select: readonly string[] | undefined): StoredEntity {
  if (select === undefined || select.length === 0) return row;
  const copy: Record<string, unknown> = { ...row };
  if (!select.includes("PartitionKey")) delete copy.partitionKey;
  if (!select.includes("RowKey")) delete copy.rowKey;
  return copy as StoredEntity;
}

function keyOf(row: StoredEntity): Key {
  return [row.partitionKey, row.rowKey];
}

/** Ordinal comparison, as the service orders keys. */
function compare(a: Key, b: Key): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
  return a[1] === b[1] ? 0 : a[1] < b[1] ? -1 : 1;
}
