import { ServiceLimits } from "../util/service-limits.js";
import type { StoreContinuation } from "../wire/wire-entity.js";
import { mapBounded } from "./bounded-map.js";
import {
  type BucketPosition,
  decodeFanOutContinuation,
  encodeFanOutContinuation,
  type FanOutState,
} from "./fan-out-token.js";
import { quoteString } from "./odata.js";

/**
 * Buckets a fan-out reads at a time (their first pages; later pages are read one bucket at a time as the
 * merge takes results). A hash-bucketed key has up to 1,024 buckets: reading them all at once is the
 * unbounded parallelism the Table storage performance checklist warns of ("Parallelism: ... bounded
 * appropriately so that you don't overload your client's capabilities or approach the scalability
 * targets"). 32 reads 16 buckets (the benchmarked shape) in one wave, and keeps one fan-out to under a
 * third of the context's default 100 requests in flight (`DEFAULT_MAX_CONCURRENT_REQUESTS`).
 */
export const FAN_OUT_READS_AT_ONCE = 32;

/** The reads a fan-out needs from a query executor (the same signatures as `QueryExecutor`). */
export interface FanOutExecutor<T> {
  fetchPage(
    table: string,
    filter: string,
    select: readonly string[] | undefined,
    top: number,
    continuation: StoreContinuation | undefined,
  ): Promise<{ items: T[]; continuation?: StoreContinuation }>;
  fetchFirst?(
    table: string,
    filter: string,
    select: readonly string[] | undefined,
    top: number,
  ): Promise<T[]>;
}

/** One fan-out read: the same query over each hash bucket's partition of one table. */
export interface FanOut<T> {
  readonly executor: FanOutExecutor<T>;
  readonly table: string;
  /** Each bucket's filter, in bucket (and so PartitionKey) order; each starts with `PartitionKey eq`. */
  readonly filters: readonly string[];
  readonly select: readonly string[] | undefined;
  /** The RowKey of a result (its key fields are always present). */
  readonly rowKeyOf: (item: T) => string;
  /** Binds continuations to this query. */
  readonly fingerprint: string;
}

/** One bucket's read: at most one page of results held at a time. */
interface Cursor<T> {
  readonly bucket: number;
  readonly filter: string;
  items: T[];
  keys: string[];
  pos: number;
  store: StoreContinuation | undefined;
  /** No more pages to fetch. */
  ended: boolean;
  /** The RowKey of the last result handed out, for the continuation. */
  after: string | undefined;
}

/**
 * Every result of the buckets in RowKey order (ties by bucket, i.e. PartitionKey): a k-way merge that
 * holds at most one page per bucket and fetches a bucket's next page only when its last result is taken.
 * The first pages are fetched in parallel, `FAN_OUT_READS_AT_ONCE` at a time. `top` sizes each request
 * (what the caller still wants).
 */
async function* mergeBuckets<T>(
  fan: FanOut<T>,
  cursors: Array<Cursor<T>>,
  top: () => number,
): AsyncGenerator<T> {
  await mapBounded(cursors, FAN_OUT_READS_AT_ONCE, (cursor) => refill(fan, cursor, top()));
  for (;;) {
    let best: Cursor<T> | undefined;
    // A linear scan: N is at most MAX_HASH_BUCKETS and each step costs far less than a request.
    for (const cursor of cursors) {
      if (cursor.pos >= cursor.items.length) continue;
      if (best === undefined || (cursor.keys[cursor.pos] as string) < (best.keys[best.pos] as string))
        best = cursor;
    }
    if (best === undefined) return;
    const item = best.items[best.pos] as T;
    best.after = best.keys[best.pos];
    best.pos++;
    yield item;
    if (best.pos >= best.items.length) await refill(fan, best, top());
  }
}

/** Fetches a bucket's next non-empty page (the service may answer an empty page with a continuation). */
async function refill<T>(fan: FanOut<T>, cursor: Cursor<T>, top: number): Promise<void> {
  cursor.items = [];
  cursor.keys = [];
  cursor.pos = 0;
  while (!cursor.ended && cursor.items.length === 0) {
    const size = Math.max(1, Math.min(top, ServiceLimits.maxPageSize));
    const page = await fan.executor.fetchPage(fan.table, cursor.filter, fan.select, size, cursor.store);
    cursor.items = page.items;
    cursor.keys = page.items.map(fan.rowKeyOf);
    cursor.store = page.continuation;
    cursor.ended = page.continuation === undefined;
  }
}

/** Opens each bucket at its position: a resumed bucket reads only RowKeys after its last result. */
function openCursors<T>(fan: FanOut<T>, positions: readonly BucketPosition[] | undefined): Array<Cursor<T>> {
  return fan.filters.map((base, bucket) => {
    const position = positions?.[bucket] ?? {};
    // Each bucket filter starts with PartitionKey and parenthesises user filters, so a conjunct is safe.
    const filter =
      position.after === undefined ? base : `${base} and RowKey gt ${quoteString(position.after)}`;
    return {
      bucket,
      filter,
      items: [],
      keys: [],
      pos: 0,
      store: undefined,
      ended: position.done === true,
      after: position.after,
    };
  });
}

/** Iterates every result in RowKey order across the buckets (at most `take`). */
export async function* iterateFanOut<T>(fan: FanOut<T>, take: number | undefined): AsyncGenerator<T> {
  let remaining = take ?? Number.POSITIVE_INFINITY;
  if (remaining <= 0) return;
  if (fan.executor.fetchFirst !== undefined) {
    // Unsorted store: with take, the first n in key order; without, every result in the store's order.
    if (take !== undefined) {
      yield* await firstOfFanOut(fan, take);
      return;
    }
    for (const filter of fan.filters) {
      let store: StoreContinuation | undefined;
      do {
        const page = await fan.executor.fetchPage(
          fan.table,
          filter,
          fan.select,
          ServiceLimits.maxPageSize,
          store,
        );
        yield* page.items;
        store = page.continuation;
      } while (store !== undefined);
    }
    return;
  }
  for await (const item of mergeBuckets(fan, openCursors(fan, undefined), () => remaining)) {
    yield item;
    if (--remaining <= 0) return;
  }
}

/**
 * The first `top` results in RowKey order (`top` may be `Infinity`). On an unsorted store each bucket is
 * read whole and sorted by the executor's `fetchFirst`, then the sorted buckets are merged.
 */
export async function firstOfFanOut<T>(fan: FanOut<T>, top: number): Promise<T[]> {
  if (top <= 0) return [];
  const fetchFirst = fan.executor.fetchFirst;
  if (fetchFirst === undefined) {
    const items: T[] = [];
    for await (const item of iterateFanOut(fan, Number.isFinite(top) ? top : undefined)) items.push(item);
    return items;
  }
  const sorted = await mapBounded(fan.filters, FAN_OUT_READS_AT_ONCE, (filter) =>
    fetchFirst.call(fan.executor, fan.table, filter, fan.select, top),
  );
  const keyed = sorted.flatMap((items, bucket) =>
    items.map((item) => ({ item, bucket, key: fan.rowKeyOf(item) })),
  );
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.bucket - b.bucket));
  return (Number.isFinite(top) ? keyed.slice(0, top) : keyed).map((k) => k.item);
}

/**
 * One page of at most `size` results and one continuation over every bucket. Sorted stores merge the
 * buckets in RowKey order and record each bucket's last RowKey; unsorted stores (Cosmos DB Table API)
 * read the buckets one after another in the store's order (every result exactly once, as any page there).
 */
export async function pageFanOut<T>(
  fan: FanOut<T>,
  size: number,
  take: number | undefined,
  continuation: string | undefined,
): Promise<{ items: T[]; continuation?: string }> {
  const sequential = fan.executor.fetchFirst !== undefined;
  const buckets = fan.filters.length;
  const state =
    continuation === undefined
      ? undefined
      : decodeFanOutContinuation(
          continuation,
          fan.fingerprint,
          buckets,
          sequential ? "sequential" : "merged",
        );
  const remaining = state?.remaining ?? take;
  const limit = Math.min(size, remaining ?? Number.POSITIVE_INFINITY);
  const left = (count: number): { remaining?: number } =>
    remaining === undefined ? {} : { remaining: remaining - count };
  if (state?.kind === "sequential" || (state === undefined && sequential)) {
    return pageSequential(fan, limit, state?.kind === "sequential" ? state : undefined, left);
  }
  const cursors = openCursors(fan, state?.kind === "merged" ? state.buckets : undefined);
  const items: T[] = [];
  if (limit > 0) {
    for await (const item of mergeBuckets(fan, cursors, () => limit - items.length)) {
      items.push(item);
      if (items.length >= limit) break;
    }
  }
  const positions = cursors.map(
    (c): BucketPosition =>
      c.ended && c.pos >= c.items.length ? { done: true } : c.after === undefined ? {} : { after: c.after },
  );
  const rest = left(items.length);
  if (positions.every((p) => p.done) || rest.remaining === 0) return { items };
  return {
    items,
    continuation: encodeFanOutContinuation({ kind: "merged", buckets: positions, ...rest }, fan.fingerprint),
  };
}

async function pageSequential<T>(
  fan: FanOut<T>,
  limit: number,
  start: Extract<FanOutState, { kind: "sequential" }> | undefined,
  left: (count: number) => { remaining?: number },
): Promise<{ items: T[]; continuation?: string }> {
  const items: T[] = [];
  let bucket = start?.bucket ?? 0;
  let store = start?.store;
  while (items.length < limit && bucket < fan.filters.length) {
    const top = Math.min(limit - items.length, ServiceLimits.maxPageSize);
    const page = await fan.executor.fetchPage(
      fan.table,
      fan.filters[bucket] as string,
      fan.select,
      top,
      store,
    );
    items.push(...page.items);
    store = page.continuation;
    if (store === undefined) bucket++;
  }
  const rest = left(items.length);
  if (bucket >= fan.filters.length || rest.remaining === 0) return { items };
  const state: FanOutState =
    store === undefined
      ? { kind: "sequential", bucket, ...rest }
      : { kind: "sequential", bucket, store, ...rest };
  return { items, continuation: encodeFanOutContinuation(state, fan.fingerprint) };
}
