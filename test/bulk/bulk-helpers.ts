import type { WriteUnit } from "../../src/repository/core/bulk/bulk-types.js";
import type { TransactionAction } from "../../src/store/table-store.js";
import { shuffled } from "../support/seeded-random.js";

/** A test item: one entity of a partition, with a sequence number to check write order. */
export interface Item {
  pk: string;
  rk: string;
  seq: number;
  payload?: string;
  copies?: number;
}

/** Converts an item to its unit: one upsert plus `copies` same-partition index copies. */
export function toUnit(item: Item): WriteUnit<Item> {
  const rowKeys = [item.rk];
  const actions: TransactionAction[] = [upsert(item.pk, item.rk, item)];
  for (let copy = 0; copy < (item.copies ?? 0); copy++) {
    rowKeys.push(`${item.rk}~${copy}`);
    actions.push(upsert(item.pk, `${item.rk}~${copy}`, item));
  }
  return { item, partitionKey: item.pk, actions, rowKeys };
}

function upsert(partitionKey: string, rowKey: string, item: Item): TransactionAction {
  const entity = {
    partitionKey,
    rowKey,
    seq: item.seq,
    ...(item.payload === undefined ? {} : { payload: item.payload }),
  };
  return { kind: "upsert", entity, mode: "replace" };
}

/** `count` items per partition over `partitions` partitions, partition-major. */
export function grid(partitions: number, count: number): Item[] {
  const items: Item[] = [];
  let seq = 0;
  for (let p = 0; p < partitions; p++) {
    for (let r = 0; r < count; r++) items.push({ pk: `p${p}`, rk: `r${r}`, seq: seq++ });
  }
  return items;
}

/** A deterministic shuffle (the kit's seeded PRNG), so failures reproduce. */
export function shuffle<T>(values: readonly T[], seed = 42): T[] {
  return shuffled(values, seed);
}

/** A promise with its resolve and reject exposed, for the test to settle. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

/** Creates a promise the test settles by hand. */
export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** One submit call the test holds open. */
export interface HeldCall extends Deferred<{ retries: number }> {
  partitionKey: string;
  actions: TransactionAction[];
}

/**
 * A submit function whose calls stay pending until the test settles them; it records every call and
 * checks, at each call, that no other call of the same partition is in flight.
 */
export class HeldSubmit {
  readonly calls: HeldCall[] = [];
  readonly pending = new Set<HeldCall>();
  maxInFlight = 0;
  samePartitionOverlaps = 0;
  #waiters: { count: number; wake: () => void }[] = [];

  readonly submit = (partitionKey: string, actions: TransactionAction[]): Promise<{ retries: number }> => {
    for (const other of this.pending) if (other.partitionKey === partitionKey) this.samePartitionOverlaps++;
    const call: HeldCall = { partitionKey, actions, ...deferred<{ retries: number }>() };
    this.calls.push(call);
    this.pending.add(call);
    this.maxInFlight = Math.max(this.maxInFlight, this.pending.size);
    const settled = () => this.pending.delete(call);
    call.promise.then(settled, settled);
    this.#waiters = this.#waiters.filter((waiter) => {
      if (this.calls.length < waiter.count) return true;
      waiter.wake();
      return false;
    });
    return call.promise;
  };

  /** Resolves once at least `count` calls were made in all. */
  calledTimes(count: number): Promise<void> {
    if (this.calls.length >= count) return Promise.resolve();
    return new Promise((wake) => this.#waiters.push({ count, wake }));
  }

  /** Settles a pending call and lets the bulk runner react to it. */
  async succeed(call: HeldCall, retries = 0): Promise<void> {
    this.pending.delete(call);
    call.resolve({ retries });
    await flushMicrotasks();
  }

  /** Fails a pending call and lets the bulk runner react to it. */
  async fail(call: HeldCall, error: unknown): Promise<void> {
    this.pending.delete(call);
    call.reject(error);
    await flushMicrotasks();
  }
}

/** Lets every already-queued reaction run (a macrotask turn), without waiting for any time to pass. */
export function flushMicrotasks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Items `0, 1, 2, …` forever, counting how many were pulled and whether the generator was closed. */
export function endless(partitions: number): {
  source: AsyncGenerator<Item>;
  stats: { pulled: number; closed: boolean };
} {
  const stats = { pulled: 0, closed: false };
  async function* generate(): AsyncGenerator<Item> {
    try {
      for (let seq = 0; ; seq++) {
        stats.pulled++;
        yield { pk: `p${seq % partitions}`, rk: `r${seq}`, seq };
      }
    } finally {
      stats.closed = true;
    }
  }
  return { source: generate(), stats };
}
