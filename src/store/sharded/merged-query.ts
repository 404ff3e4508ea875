import type { StoreContinuation, StoredEntity, StorePage, StoreQuery, TableStore } from "../table-store.js";
import {
  compare,
  type Key,
  keyOf,
  partitionFilter,
  stripKeys,
  type Tail,
  tailOf,
  withKeys,
  withStateRows,
} from "./merge-rows.js";
import { readPartitionRows } from "./partition-copy.js";
import { isMarkerRow, isTableNotFound, STATE_ROW } from "./partition-markers.js";
import type { PartitionRouter } from "./partition-router.js";
import {
  decodeShardContinuation,
  encodeShardContinuation,
  type MergeState,
  type ShardCursor,
} from "./sharded-continuation.js";

/** The service's largest page. */
const MAX_PAGE = 1000;

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
  const state =
    query.continuation === undefined ? { shards: {} } : decodeShardContinuation(query.continuation, names);
  // A partition moved by a move that had finished when the query began is open on its new shard, whose
  // stream the query reads after that: its `moved` row on the old shard needs no following.
  const settled = sorted
    ? (state.settled ?? (query.continuation === undefined ? await router.settledVersion() : 0))
    : 0;
  const merge = new ShardMerge(router, names, table, query, sorted, state, settled);
  return merge.page(state.reread);
}

/** One page of a merged query (`queryAcrossShards`): the shards' streams, the merge's position, the partitions read again. */
class ShardMerge {
  readonly #router: PartitionRouter;
  readonly #table: string;
  readonly #query: StoreQuery;
  readonly #sorted: boolean;
  readonly #settled: number;
  readonly #top: number;
  readonly #shardTop: number;
  readonly #select: readonly string[] | undefined;
  readonly #shardQuery: Pick<StoreQuery, "filter" | "select">;
  readonly #streams: ShardStream[];
  /** Entries of a stream that are not rows: a partition that left that shard (its `moved` state row). */
  readonly #departures = new WeakSet<StoredEntity>();
  /** Where each partition met is readable now (asked once per page). */
  readonly #readable = new Map<string, Promise<string | undefined>>();
  /** The merge's position: the last key taken (or passed). */
  #last: Key | undefined;
  /** The stream the last row taken came from (in this call), `undefined` for a reread. */
  #lastFrom: string | undefined;
  #reread: Reread | undefined;

  constructor(
    router: PartitionRouter,
    names: readonly string[],
    table: string,
    query: StoreQuery,
    sorted: boolean,
    state: MergeState,
    settled: number,
  ) {
    this.#router = router;
    this.#table = table;
    this.#query = query;
    this.#sorted = sorted;
    this.#settled = settled;
    this.#top = Math.min(query.top ?? MAX_PAGE, MAX_PAGE);
    // Each shard gives about its share of a merged page: asking each for a whole page would read (and,
    // on the next page, read again) the rows the merge leaves. A shard that runs short is read on.
    this.#shardTop = sorted
      ? Math.min(this.#top, Math.ceil((this.#top * 1.25) / names.length) + 1)
      : this.#top;
    this.#last = state.last;
    this.#select = withKeys(query.select);
    // Sorted merges also read the partitions' `moved` state rows, to see partitions that move meanwhile.
    this.#shardQuery = sorted
      ? withStateRows(query.filter, this.#select)
      : { filter: query.filter, select: this.#select };
    const cursors = state.shards;
    this.#streams = names.map((name) => ({
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
  }

  /** The page: `rereading`, a partition the page before was reading from where it moved. */
  async page(rereading: string | undefined): Promise<StorePage> {
    if (rereading !== undefined && this.#sorted) await this.#follow(rereading, undefined);
    const items = this.#sorted ? await this.#mergeSorted() : await this.#takeUnsorted();
    if (this.#streams.every((s) => s.missingTable !== undefined)) throw this.#streams[0]?.missingTable;
    const page: StorePage = { items: items.map((row) => stripKeys(row, this.#query.select)) };
    const continuation = this.#continuation();
    if (continuation !== undefined) page.continuation = continuation;
    return page;
  }

  /** Takes the smallest head of the shards' streams (or of the partition read again) until the page is full. */
  async #mergeSorted(): Promise<StoredEntity[]> {
    const items: StoredEntity[] = [];
    while (items.length < this.#top) {
      await Promise.all(
        this.#streams.filter((s) => !s.done && s.rows.length === 0).map((s) => this.#fill(s)),
      );
      const heads = this.#streams.filter((s) => s.rows.length > 0);
      const reread = this.#reread;
      const rereadHead = reread?.rows[0];
      if (heads.length === 0 && rereadHead === undefined) break;
      const least = [
        ...heads.map((s) => keyOf(s.rows[0] as StoredEntity)),
        ...(rereadHead === undefined ? [] : [keyOf(rereadHead)]),
      ].reduce((a, b) => (compare(a, b) <= 0 ? a : b));
      const tied = heads.filter((s) => compare(keyOf(s.rows[0] as StoredEntity), least) === 0);
      const departing = tied.filter((s) => this.#departures.has(s.rows[0] as StoredEntity));
      if (departing.length > 0) {
        for (const s of departing) {
          s.rows.shift();
          await this.#follow(least[0], s.name);
        }
        continue;
      }
      if (reread?.partitionKey === least[0]) {
        // The partition is read from where it moved: the shards' own rows of it are left.
        for (const s of tied) s.rows.shift();
        if (rereadHead !== undefined && compare(keyOf(rereadHead), least) === 0) {
          items.push(reread.rows.shift() as StoredEntity);
        }
        this.#last = least;
        this.#lastFrom = undefined;
        continue;
      }
      const chosen = await this.#accept(tied, least[0]);
      const taken = tied.map((s) => s.rows.shift() as StoredEntity);
      if (chosen !== undefined) items.push(taken[tied.indexOf(chosen)] as StoredEntity);
      this.#last = least;
      this.#lastFrom = chosen?.name;
    }
    return items;
  }

  /** Unsorted backends: a page is taken whole, in the order it came, one shard after another. */
  async #takeUnsorted(): Promise<StoredEntity[]> {
    const items: StoredEntity[] = [];
    const stream = this.#streams.find((s) => !s.done);
    if (stream !== undefined) {
      await this.#fill(stream);
      for (const row of stream.rows) {
        if ((await this.#accept([stream], row.partitionKey)) !== undefined) items.push(row);
      }
      stream.rows = [];
    }
    return items;
  }

  /** True when the rows of the partition at the merge's position come from a shard other than `shard` (in this call). */
  #servedElsewhere(partitionKey: string, shard: string | undefined): boolean {
    return this.#last?.[0] === partitionKey && this.#lastFrom !== undefined && this.#lastFrom !== shard;
  }

  #departed(row: StoredEntity): boolean {
    return (
      row.rowKey === STATE_ROW &&
      row.state === "moved" &&
      !(typeof row.mapVersion === "number" && row.mapVersion <= this.#settled)
    );
  }

  /** Reads the stream's pages until it has rows past the merge's position, or is done. */
  async #fill(s: ShardStream): Promise<void> {
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
        await this.#readPage(s);
      } catch (error) {
        // A shard added without this table yet has none of its rows.
        if (!isTableNotFound(error)) throw error;
        s.missingTable = error;
        s.next = undefined;
        s.rows = [];
      }
      s.loaded = true;
      // Unsorted backends: a page is taken whole, in the order it came, one shard after another.
      if (!this.#sorted) break;
    }
  }

  /** One page of the stream: its rows past the merge's position, its departures. */
  async #readPage(s: ShardStream): Promise<void> {
    const departed = (row: StoredEntity) => this.#departed(row);
    const page = await s.store.queryPage(this.#table, {
      ...this.#query,
      ...this.#shardQuery,
      top: this.#shardTop,
      continuation: s.from,
    });
    s.next = page.continuation;
    s.tail = tailOf(page.items, s.tail, page.items.length >= this.#shardTop, departed);
    const after = this.#last;
    s.rows = page.items.filter((row) => {
      if (after !== undefined && compare(keyOf(row), after) <= 0) return false;
      if (!isMarkerRow(row.rowKey)) return true;
      if (this.#sorted && departed(row)) this.#departures.add(row);
      return this.#departures.has(row);
    });
    // The page may continue a partition past its state row, which an earlier page held (so this page
    // has no state row of it to tell a move): if it left this shard in between, read its rest where it went.
    const continued = s.check;
    if (this.#sorted && continued !== undefined && !this.#servedElsewhere(continued, s.name)) {
      const where = await this.#router.readableShard(this.#table, continued);
      if (where !== undefined && where !== s.name) {
        const departure = { partitionKey: continued, rowKey: "" } as StoredEntity;
        this.#departures.add(departure);
        s.rows.unshift(departure);
      }
    }
  }

  /** A partition left shard `from` during the query: read its rows past the merge's position where they are complete now. */
  async #follow(partitionKey: string, from: string | undefined): Promise<void> {
    const last = this.#last;
    // Already read from where it went, wholly behind the merge's position (its rows were taken), or
    // its rows up to here came from another shard's stream, which the merge trusted for it and reads on.
    if (this.#reread?.partitionKey === partitionKey || (last !== undefined && partitionKey < last[0])) return;
    if (this.#servedElsewhere(partitionKey, from)) return;
    const where = await this.#router.readableShard(this.#table, partitionKey);
    this.#readable.set(partitionKey, Promise.resolve(where));
    if (where === undefined || where === from) return;
    const at = this.#last;
    const past = at?.[0] === partitionKey ? at[1] : undefined;
    const rows = await readPartitionRows(this.#router.shard(where), this.#table, partitionKey, {
      filter: partitionFilter(partitionKey, past, this.#query.filter),
      select: this.#select,
    });
    this.#reread = { partitionKey, rows };
  }

  /** Of the streams whose heads hold a row of `partitionKey`, the one whose rows of it are complete (or none). */
  async #accept(from: readonly ShardStream[], partitionKey: string): Promise<ShardStream | undefined> {
    const owner = await this.#router.ownerOf(this.#table, partitionKey);
    if (from.length === 1 && from[0]?.name === owner && !this.#readable.has(partitionKey)) return from[0];
    let where = this.#readable.get(partitionKey);
    if (where === undefined) {
      where = this.#router.readableShard(this.#table, partitionKey);
      this.#readable.set(partitionKey, where);
    }
    const shard = await where;
    // Rows written before the store was sharded carry no markers: the map's shard answers for them.
    return from.find((s) => s.name === (shard ?? owner)) ?? (shard === undefined ? from[0] : undefined);
  }

  /** Where the next page starts: each shard's cursor, the merge's position, a partition still read again. */
  #continuation(): StoreContinuation | undefined {
    const next: Record<string, ShardCursor> = {};
    let more = false;
    for (const s of this.#streams) {
      const consumed = s.loaded && s.rows.length === 0;
      const done = s.done || (consumed && s.next === undefined);
      more ||= !done;
      const check = consumed ? (s.tail?.pastState === true ? s.tail.partitionKey : undefined) : s.check;
      next[s.name] = done
        ? { done: true }
        : { from: consumed ? s.next : s.from, ...(check ? { check } : {}) };
    }
    // Still inside a partition read from where it moved: the next page reads it there again.
    const reread = this.#reread;
    const rereading = reread !== undefined && this.#last?.[0] === reread.partitionKey;
    if (rereading && reread.rows.length > 0) more = true;
    if (!more) return undefined;
    return encodeShardContinuation({
      last: this.#last,
      shards: next,
      ...(rereading ? { reread: reread.partitionKey } : {}),
      ...(this.#settled > 0 ? { settled: this.#settled } : {}),
    });
  }
}
