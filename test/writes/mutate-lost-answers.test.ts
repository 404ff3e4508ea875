/**
 * Concurrent `mutate` calls on an entity without and with secondary indexes, while requests fail at
 * random (lost answers among them): no change is ever applied twice, every change reported done is
 * applied exactly once, and a change that failed was applied at most once (an unknown outcome is
 * reported, never retried). Afterwards the index copies are exact (after a repair of the intents
 * that unknown outcomes may leave).
 *
 * Determinism: each writer has its own fault layer, and whether a request fails is decided by a
 * hash of (seed, writer, method, the writer's n-th request of that method), not by the order in
 * which the writers' requests arrive. Interleavings still vary between runs; the assertions are
 * invariants that hold for every interleaving. Retries (12 at a 20% fault rate: 0.2^13 per request)
 * do not realistically run out; if they did, that failure is an outcome the invariants allow. What
 * must succeed follows from each writer's own faults: a change fails only when a fault that may have
 * applied it hit its commit (the outcome is unknown) or one request met a fault on every attempt.
 */
import { afterEach, describe, expect, inject, it } from "vitest";
import { Column, ConcurrencyError, Entity, StoreError, TableContext } from "../../src/index.js";
import { AzureStore } from "../../src/store/azure/azure-store.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import type { TableStore } from "../../src/store/table-store.js";
import { type FaultProxy, startFaultProxy } from "../support/fault-proxy.js";
import {
  type FaultDecision,
  type FaultKind,
  FaultPlan,
  FaultyStore,
  seededRandom,
} from "../support/faulty-store.js";
import type { StoreMethod } from "../support/store-wrapper.js";
import { freshPrefix, REQUEST_TIMEOUT_MS, storeNames } from "./harness.js";

@Entity({
  table: "IxTallies",
  partitionKey: "{group}",
  rowKey: "t_{name}",
  indexes: {
    byTag: { rowKey: "tag_{tag}", unique: true },
    byCount: { table: "IxTalliesByCount", partitionKey: "n_{count:6}", rowKey: "{group}_{name}" },
  },
})
class IxTally {
  @Column({ type: "String" }) group!: string;
  @Column({ type: "String" }) name!: string;
  @Column({ type: "Int32" }) count!: number;
  @Column({ type: "String" }) tag!: string;
  /** The ids of the changes applied, in order. */
  @Column({ type: "String" }) log!: string;
}

/** The same tally without indexes: one request per write, so lost answers meet the plain write path. */
@Entity({ table: "PlTallies", partitionKey: "{group}", rowKey: "t_{name}" })
class PlainTally {
  @Column({ type: "String" }) group!: string;
  @Column({ type: "String" }) name!: string;
  @Column({ type: "Int32" }) count!: number;
  @Column({ type: "String" }) tag!: string;
  /** The ids of the changes applied, in order. */
  @Column({ type: "String" }) log!: string;
}

/**
 * The variants every seed runs on. The plain write path has fewer requests to fault, so one seed
 * covers it; the indexed one (intents, copies elsewhere, a transaction) gets three.
 */
const VARIANTS = [
  // A plain mutate commits with one insert or update.
  {
    variant: "plain",
    Tally: PlainTally as unknown as typeof IxTally,
    seeds: [101],
    commits: ["insert", "update"] as const,
  },
  // An indexed one with the entity's transaction (intents, claims and copies are other requests).
  { variant: "indexed", Tally: IxTally, seeds: [101, 202, 303], commits: ["submitTransaction"] as const },
] as const;
const CASES = VARIANTS.flatMap(({ variant, Tally, seeds, commits }) =>
  seeds.map((seed) => ({ variant, Tally, seed, commits })),
);

const KEY = { group: "g", name: "t" };
const WRITERS = 3;
const CHANGES_PER_WRITER = 10;
const FAULT_RATE = 0.2;
const KINDS: readonly FaultKind[] = ["internal", "timeout", "reset", "lost", "lost", "lost"];
const RETRIES = 12;
/** The fault kinds the plan draws from (each may have applied the request it hit). */
const KINDS_DRAWN = [...new Set(KINDS)];

/** FNV-1a: a request's identity to a 32-bit seed. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Faults decided per request from its identity (seed, writer, method, ordinal), not from arrival order. */
class PerRequestPlan extends FaultPlan {
  readonly #label: string;
  readonly #ordinals = new Map<StoreMethod, number>();

  constructor(label: string) {
    super();
    this.#label = label;
  }

  override decide(method: StoreMethod): FaultDecision | undefined {
    this.requestsByMethod[method] += 1;
    const ordinal = (this.#ordinals.get(method) ?? 0) + 1;
    this.#ordinals.set(method, ordinal);
    const kind = this.#faultAt(method, ordinal);
    if (kind === undefined) return undefined;
    this.faults[kind] += 1;
    this.faultsByMethod[method][kind] += 1;
    return { kind };
  }

  /** The fault the plan puts on the writer's `ordinal`-th request of `method`, if any. */
  #faultAt(method: StoreMethod, ordinal: number): FaultKind | undefined {
    const random = seededRandom(hash(`${this.#label}:${method}:${ordinal}`));
    if (random() >= FAULT_RATE) return undefined;
    return KINDS[Math.floor(random() * KINDS.length)] as FaultKind;
  }

  /**
   * How many requests the plan faulted on every one of `attempts` attempts: a writer sends one
   * request at a time, so one request's attempts are consecutive requests of its method, and each
   * such request is a run of at least `attempts` faulted ordinals.
   */
  exhausting(attempts: number): number {
    let requests = 0;
    for (const [method, sent] of this.#ordinals) {
      let run = 0;
      for (let ordinal = 1; ordinal <= sent; ordinal++) {
        run = this.#faultAt(method, ordinal) === undefined ? 0 : run + 1;
        if (run === attempts) {
          requests += 1;
          run = 0;
        }
      }
    }
    return requests;
  }
}

/** Applies change `id` once: appended to the log; the count and both indexed values follow. */
function apply(id: string): (current: IxTally) => void {
  return (current) => {
    current.log = current.log ? `${current.log},${id}` : id;
    current.count = current.log.split(",").length;
    current.tag = `t-${id}`;
  };
}

describe.each(storeNames)("mutate under lost answers on %s", (name) => {
  const proxies: FaultProxy[] = [];
  afterEach(async () => {
    await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
  });

  /** One fault layer per writer over the same data, and the data without faults. */
  async function layers(
    seed: number,
  ): Promise<{ direct: TableStore; faulty: TableStore[]; plans: PerRequestPlan[] }> {
    const plans = Array.from({ length: WRITERS }, (_, w) => new PerRequestPlan(`${seed}:${w}`));
    if (name === "memory") {
      const direct = new MemoryStore();
      return { direct, faulty: plans.map((plan) => new FaultyStore(direct, plan)), plans };
    }
    const target = inject(name === "serve" ? "serveConnectionString" : "azuriteConnectionString");
    const faulty: TableStore[] = [];
    for (const plan of plans) {
      const proxy = await startFaultProxy(target, plan);
      proxies.push(proxy);
      faulty.push(
        AzureStore.fromConnectionString(proxy.connectionString, { requestTimeoutMs: REQUEST_TIMEOUT_MS }),
      );
    }
    const direct = AzureStore.fromConnectionString(target, { requestTimeoutMs: REQUEST_TIMEOUT_MS });
    return { direct, faulty, plans };
  }

  it.each(CASES)(
    "$variant, seed $seed: every change applied at most once, every reported one exactly once",
    async ({ Tally, seed, commits }) => {
      const { direct, faulty, plans } = await layers(seed);
      const prefix = freshPrefix();
      const setup = new TableContext({ store: direct, tablePrefix: prefix });
      await setup.ensureTables(Tally);

      const done: string[] = [];
      const failed: Array<{ id: string; error: unknown }> = [];
      const writers = faulty.map(async (store, w) => {
        const db = new TableContext({
          store,
          tablePrefix: prefix,
          retry: { retries: RETRIES, minDelayMs: 5, maxDelayMs: 20 },
          random: seededRandom(hash(`${seed}:jitter:${w}`)),
        });
        const tallies = db.repository(Tally);
        for (let k = 0; k < CHANGES_PER_WRITER; k++) {
          const id = `w${w}c${k}`;
          try {
            await tallies.mutate(KEY, apply(id), {
              attempts: 100,
              create: () => Object.assign(new Tally(), { ...KEY, count: 0, tag: "none", log: "" }),
            });
            done.push(id);
          } catch (error) {
            failed.push({ id, error });
          }
        }
      });
      await Promise.all(writers);

      const context = `seed ${seed}; faults ${JSON.stringify(plans.map((p) => p.faults))}; failed ${failed
        .map(({ id, error }) => `${id}: ${String(error)}`)
        .join(" | ")}`;
      const log = (await setup.repository(Tally).getOrThrow(KEY)).log.split(",").filter(Boolean);
      const times = (id: string) => log.filter((entry) => entry === id).length;
      for (const id of done) expect(times(id), `${context}; ${id} reported done`).toBe(1);
      for (const { id } of failed) expect(times(id), `${context}; ${id} failed`).toBeLessThanOrEqual(1);
      expect(log.length, context).toBe(new Set(log).size);
      expect(done.length + failed.length).toBe(WRITERS * CHANGES_PER_WRITER);
      // What must succeed, per writer, from the faults its plan decided: a change fails only when a fault
      // that may have applied it (500, timeout, reset, lost answer; every kind the plan draws) hit the
      // request committing it, leaving its outcome unknown, or when one request was faulted on each of
      // its RETRIES + 1 attempts. Any other fault is retried away, so every other change is done.
      plans.forEach((plan, w) => {
        const onCommits = commits.reduce(
          (sum, method) => sum + KINDS_DRAWN.reduce((n, kind) => n + plan.faultsByMethod[method][kind], 0),
          0,
        );
        const exhausted = plan.exhausting(RETRIES + 1);
        const mustSucceed = CHANGES_PER_WRITER - onCommits - exhausted;
        const doneByWriter = done.filter((id) => id.startsWith(`w${w}c`)).length;
        expect(doneByWriter, `${context}; writer ${w}: ${onCommits} commit faults`).toBeGreaterThanOrEqual(
          mustSucceed,
        );
      });
      // A failure is an unknown outcome (reported, not retried) or retries running out; nothing else.
      for (const { error } of failed) {
        const allowed =
          (error instanceof ConcurrencyError && error.outcomeUnknown) || error instanceof StoreError;
        expect(allowed, `${context}; unexpected ${String(error)}`).toBe(true);
      }
      expect(
        plans.reduce((sum, plan) => sum + plan.faults.lost, 0),
        context,
      ).toBeGreaterThan(0);

      // Copies exact once the intents left by unknown outcomes are replayed.
      await setup.repairIndexes(Tally);
      const drift = await setup.verifyIndexes(Tally);
      expect(drift, context).toEqual({ missing: [], stale: [], orphans: [] });
    },
  );
});
