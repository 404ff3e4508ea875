import type { Sleep } from "../retry-policy.js";
import { PaceBucket, type PaceChange } from "./pace-bucket.js";
import type { ThroughputLimits } from "./throughput-options.js";

/** The pacer's clock: milliseconds that only move forward, and a sleep on the same clock (tests inject a virtual one). */
export interface PaceClock {
  now(): number;
  sleep: Sleep;
}

/** A change of pace, as the `throughput` event reports it. */
export interface PaceReport extends PaceChange {
  scope: "partition" | "account";
  /** The limit the pace ramps up to. */
  limit: number;
  table?: string;
  partitionKey?: string;
}

/** Partition buckets unused this long (and owing nothing) are dropped: the partition slow-starts again. */
export const IDLE_BUCKET_MS = 10_000;
/** Above this many partition buckets, idle ones are dropped however recent. */
export const MAX_IDLE_BUCKETS = 10_000;
/** Partitions whose last turn is remembered after their queue empties (fairness needs only recent ones). */
const REMEMBERED_TURNS = 1024;

interface Waiter {
  seq: number;
  cost: number;
  go: () => void;
}

/** The requests of one partition (or of no partition) waiting for their turn, in arrival order. */
interface Lane {
  key: string;
  bucket: PaceBucket | undefined;
  waiting: Waiter[];
  /** When this lane last sent a request (a counter): the longest-unserved lane goes first. */
  lastServed: number;
}

/**
 * Client-side pacing in entities per second: a token bucket per (table, partition) and one for the
 * context (see pace-bucket.ts for the rule). Requests of a partition go in arrival order; when the
 * context's bucket is the bottleneck, the partition served longest ago goes next, so a busy
 * partition cannot starve the others.
 */
export class Pacer {
  readonly #perPartition: number | undefined;
  readonly #account: PaceBucket | undefined;
  readonly #clock: PaceClock;
  readonly #report: (report: PaceReport) => void;
  /** Partition buckets, least recently admitted first (re-inserted on use). */
  readonly #buckets = new Map<string, PaceBucket>();
  readonly #lanes = new Map<string, Lane>();
  /** When recently served partitions last sent, oldest first: a lane that empties and refills keeps its place. */
  readonly #turns = new Map<string, number>();
  #seq = 0;
  #served = 0;
  #wakeAt = Number.POSITIVE_INFINITY;

  constructor(limits: ThroughputLimits, clock: PaceClock, report: (report: PaceReport) => void) {
    this.#perPartition = limits.perPartition;
    this.#clock = clock;
    this.#report = report;
    this.#account =
      limits.perAccount === undefined ? undefined : new PaceBucket(limits.perAccount, clock.now());
  }

  /** Partition buckets held now (for tests of the memory bound). */
  get bucketCount(): number {
    return this.#buckets.size;
  }

  /**
   * Waits until a request of `cost` entities on this partition (none for a cross-partition query) may
   * go, charges it, and returns the ticket its outcome is reported on.
   */
  admit(table: string, partitionKey: string | undefined, cost: number): Promise<PaceTicket> {
    const now = this.#clock.now();
    const bucket =
      partitionKey === undefined || this.#perPartition === undefined
        ? undefined
        : this.#bucketOf(table, partitionKey, this.#perPartition, now);
    const ticket = new PaceTicket(this, bucket, table, partitionKey);
    if (bucket) bucket.active++;
    const key = partitionKey === undefined ? "" : `${table}\u0000${partitionKey}`;
    return new Promise((resolve) => {
      const lane = this.#lanes.get(key) ?? {
        key,
        bucket,
        waiting: [],
        lastServed: this.#turns.get(key) ?? -1,
      };
      this.#lanes.set(key, lane);
      lane.waiting.push({ seq: this.#seq++, cost, go: () => resolve(ticket) });
      this.#pump();
    });
  }

  /** Charges entities known only once the answer arrived (a query's rows). */
  charge(bucket: PaceBucket | undefined, entities: number): void {
    if (entities <= 0) return;
    const now = this.#clock.now();
    bucket?.charge(entities, now);
    this.#account?.charge(entities, now);
  }

  /** Ends a request: its buckets learn whether the service accepted it or asked to slow down. */
  settle(ticket: PaceTicket, outcome: "ok" | "throttled" | "throttled-account" | "failed"): void {
    const now = this.#clock.now();
    const { bucket } = ticket;
    if (bucket) bucket.active--;
    if (outcome === "ok") {
      if (bucket) this.#emit(bucket.succeeded(now), bucket, ticket);
      if (this.#account) this.#emit(this.#account.succeeded(now), this.#account, undefined);
    } else if (outcome !== "failed") {
      // The answer names the partition unless it says the account is over its limit.
      const target = outcome === "throttled" && bucket ? bucket : (this.#account ?? bucket);
      if (target) this.#emit(target.throttled(now), target, target === bucket ? ticket : undefined);
    }
    // A faster pace may let a waiting request go sooner than its timer.
    if (this.#lanes.size > 0) this.#pump();
  }

  #emit(change: PaceChange | undefined, bucket: PaceBucket, ticket: PaceTicket | undefined): void {
    if (!change) return;
    this.#report(
      ticket?.partitionKey === undefined
        ? { scope: "account", limit: bucket.limit, ...change }
        : {
            scope: "partition",
            limit: bucket.limit,
            table: ticket.table,
            partitionKey: ticket.partitionKey,
            ...change,
          },
    );
  }

  /** Sends every request whose buckets allow it, longest-unserved partition first. */
  #pump(): void {
    const now = this.#clock.now();
    const account = this.#account;
    while (this.#lanes.size > 0) {
      if (account && account.readyAt > now) {
        this.#wake(account.readyAt);
        return;
      }
      let best: Lane | undefined;
      let nextReady = Number.POSITIVE_INFINITY;
      for (const lane of this.#lanes.values()) {
        const readyAt = lane.bucket?.readyAt ?? now;
        if (readyAt > now) nextReady = Math.min(nextReady, readyAt);
        else if (best === undefined || precedes(lane, best)) best = lane;
      }
      if (best === undefined) {
        this.#wake(nextReady);
        return;
      }
      const waiter = best.waiting.shift() as Waiter;
      best.lastServed = ++this.#served;
      this.#rememberTurn(best.key, best.lastServed);
      if (best.waiting.length === 0) this.#lanes.delete(best.key);
      best.bucket?.charge(waiter.cost, now);
      account?.charge(waiter.cost, now);
      waiter.go();
    }
  }

  #rememberTurn(key: string, served: number): void {
    this.#turns.delete(key);
    this.#turns.set(key, served);
    if (this.#turns.size > REMEMBERED_TURNS) this.#turns.delete(this.#turns.keys().next().value as string);
  }

  /** One timer at a time, for the earliest moment a waiting request may go. */
  #wake(at: number): void {
    if (at >= this.#wakeAt) return;
    this.#wakeAt = at;
    const fire = () => {
      if (this.#wakeAt === at) this.#wakeAt = Number.POSITIVE_INFINITY;
      this.#pump();
    };
    this.#clock.sleep(Math.max(0, at - this.#clock.now())).then(fire, fire);
  }

  #bucketOf(table: string, partitionKey: string, limit: number, now: number): PaceBucket {
    const key = `${table}\u0000${partitionKey}`;
    const known = this.#buckets.get(key);
    if (known) {
      this.#buckets.delete(key);
      this.#buckets.set(key, known);
      return known;
    }
    this.#evictIdle(now);
    const bucket = new PaceBucket(limit, now);
    this.#buckets.set(key, bucket);
    return bucket;
  }

  /** Drops partition buckets that owe nothing and were not used lately, least recently used first. */
  #evictIdle(now: number): void {
    for (const [key, bucket] of this.#buckets) {
      if (now - bucket.lastUsed < IDLE_BUCKET_MS && this.#buckets.size < MAX_IDLE_BUCKETS) return;
      if (bucket.isIdle(now)) this.#buckets.delete(key);
    }
  }
}

/** The longest-unserved lane first; among lanes never served, the earliest request. */
function precedes(lane: Lane, other: Lane): boolean {
  if (lane.lastServed !== other.lastServed) return lane.lastServed < other.lastServed;
  return (lane.waiting[0] as Waiter).seq < (other.waiting[0] as Waiter).seq;
}

/** One admitted request, until its answer is reported to the pacer. */
export class PaceTicket {
  readonly #pacer: Pacer;
  readonly bucket: PaceBucket | undefined;
  readonly table: string;
  readonly partitionKey: string | undefined;

  constructor(pacer: Pacer, bucket: PaceBucket | undefined, table: string, partitionKey: string | undefined) {
    this.#pacer = pacer;
    this.bucket = bucket;
    this.table = table;
    this.partitionKey = partitionKey;
  }

  /** The service accepted the request; `entities` more are charged (a query page's rows). */
  done(entities = 0): void {
    this.#pacer.charge(this.bucket, entities);
    this.#pacer.settle(this, "ok");
  }

  /** The request failed: a throttle answer lowers the pace, anything else changes nothing. */
  failed(throttle: "partition" | "account" | undefined): void {
    this.#pacer.settle(
      this,
      throttle === undefined ? "failed" : throttle === "account" ? "throttled-account" : "throttled",
    );
  }
}
