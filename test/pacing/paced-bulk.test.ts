/**
 * Pacing a bulk write on every store, on a virtual clock (no wall-clock limits): the schedule the pacer
 * computes is asserted in virtual seconds. Requests to Azurite take no virtual time (the clock moves
 * only when no request is in flight), so the schedule is the same on both stores.
 */
import { afterEach, describe, expect, it } from "vitest";
import { TableContext, type TableKitEvent } from "../../src/index.js";
import type { TableStore } from "../../src/store/table-store.js";
import { testSeed } from "../support/seeded-random.js";
import { type StoreRequest, StoreWrapper } from "../support/store-wrapper.js";
import { InFlightStore, VirtualClock } from "../support/virtual-clock.js";
import {
  FAST_RETRY,
  type FaultyStores,
  faultyStores,
  freshPrefix,
  readTable,
  storeNames,
} from "../writes/harness.js";
import { Reading, reading } from "../writes/models.js";

const SEED = testSeed(11);
const PER_PARTITION = 500;
const PARTITIONS = 4;
const TOTAL = 20_000;
/** The fault run is about exactness and the drop in pace, not the rate at the limit: fewer entities do. */
const BUSY_TOTAL = 8_000;
/** 200 batches, one in flight at a time on the virtual clock: slow on a loaded Azurite, never a limit asserted. */
const LONG_RUN = { timeout: 240_000 };

type EventOf<K extends TableKitEvent["type"]> = Extract<TableKitEvent, { type: K }>;

/** A batch as the store saw it: when (virtual ms), which partition, how many entities, whether it was throttled. */
interface Sent {
  at: number;
  partitionKey: string;
  entities: number;
}

/** Records every transaction reaching the store (each attempt), on the virtual clock. */
class SendLog extends StoreWrapper {
  readonly sent: Sent[] = [];
  readonly #clock: VirtualClock;

  constructor(inner: TableStore, clock: VirtualClock) {
    super(inner);
    this.#clock = clock;
  }

  protected override around<T>(request: StoreRequest, send: () => Promise<T>): Promise<T> {
    if (request.method === "submitTransaction") {
      // The identity lists the partition then the row keys, one part each.
      const entities = request.identity.split("\u0001").length - 1;
      this.sent.push({ at: this.#clock.now(), partitionKey: request.partitionKey ?? "", entities });
    }
    return send();
  }
}

/**
 * Within any prefix [0, t) of the run a partition was sent at most `limit × t` entities, plus the batch
 * that went at t itself: the bucket never lends ahead.
 */
function assertWithinLimit(sent: readonly Sent[], limitPerSecond: number): void {
  const before = new Map<string, number>();
  for (const { at, partitionKey, entities } of [...sent].sort((a, b) => a.at - b.at)) {
    const total = before.get(partitionKey) ?? 0;
    expect(total, `${partitionKey} at ${at} ms`).toBeLessThanOrEqual((limitPerSecond * at) / 1000 + 1e-6);
    before.set(partitionKey, total + entities);
  }
}

function readings(total: number): Reading[] {
  // Partitions interleaved, as a real feed would deliver them.
  return Array.from({ length: total }, (_, i) => reading(i % PARTITIONS, Math.floor(i / PARTITIONS), 1));
}

describe.each(storeNames)(`pacing a bulk write on %s (seed ${SEED})`, (name) => {
  let stores: FaultyStores | undefined;
  afterEach(async () => {
    await stores?.close();
    stores = undefined;
  });

  async function pacedRun(total: number, faultRate: number) {
    stores = await faultyStores(name, { seed: SEED, rate: 0, mix: ["busy"] });
    const clock = new VirtualClock();
    const inFlight = new InFlightStore(stores.store);
    const log = new SendLog(inFlight, clock);
    const events: EventOf<"throughput">[] = [];
    const db = new TableContext({
      store: log,
      tablePrefix: freshPrefix(),
      retry: FAST_RETRY,
      throughput: { perPartition: PER_PARTITION },
      sleep: clock.sleep,
      now: clock.now,
      onEvent: (event) => {
        if (event.type === "throughput") events.push(event);
      },
    });
    await db.ensureTables(Reading);
    stores.plan.setRate(faultRate);
    const result = await clock.run(() => db.repository(Reading).bulkUpsert(readings(total)), inFlight);
    stores.plan.setRate(0);
    const table = db.repository(Reading).table;
    return { result, elapsedMs: clock.now(), sent: log.sent, events, table, plan: stores.plan };
  }

  it(
    "20,000 entities at 500/s per partition over 4 partitions take at least 10 virtual seconds, at 2,000/s ± 10 %",
    LONG_RUN,
    async () => {
      const run = await pacedRun(TOTAL, 0);
      expect(run.result.written).toBe(TOTAL);
      expect(run.result.failed).toEqual([]);
      expect(run.elapsedMs).toBeGreaterThanOrEqual((TOTAL / (PER_PARTITION * PARTITIONS)) * 1000);
      const rate = TOTAL / (run.elapsedMs / 1000);
      expect(rate).toBeGreaterThanOrEqual(2000 * 0.9);
      expect(rate).toBeLessThanOrEqual(2000 * 1.1);
      assertWithinLimit(run.sent, PER_PARTITION);
      // Slow start: each partition begins below its limit and ramps up to it.
      const ramps = run.events.filter((event) => event.reason === "ramp-up");
      expect(new Set(ramps.map((event) => event.partitionKey)).size).toBe(PARTITIONS);
      for (const event of ramps) expect(event.rate).toBeLessThanOrEqual(PER_PARTITION);
      expect(run.events.some((event) => event.reason === "throttled")).toBe(false);
      // No partition starves: every partition's last batch goes within a second of the others'.
      const lastOf = new Map<string, number>();
      for (const { at, partitionKey } of run.sent)
        lastOf.set(partitionKey, Math.max(lastOf.get(partitionKey) ?? 0, at));
      expect(lastOf.size).toBe(PARTITIONS);
      expect(Math.max(...lastOf.values()) - Math.min(...lastOf.values())).toBeLessThanOrEqual(1000);
    },
  );

  it(
    "with 30 % of requests answered 503 ServerBusy it writes every entity exactly, and the pace drops",
    LONG_RUN,
    async () => {
      const busy = await pacedRun(BUSY_TOTAL, 0.3);
      expect(busy.plan.faults.busy).toBeGreaterThan(0);
      expect(busy.result.written).toBe(BUSY_TOTAL);
      expect(busy.result.failed).toEqual([]);
      const stored = await readTable(stores!.direct, busy.table);
      expect(stored).toHaveLength(BUSY_TOTAL);
      const expected = new Map(
        readings(BUSY_TOTAL).map((r) => [`${r.sensor}/${String(r.seq).padStart(6, "0")}`, r]),
      );
      for (const row of stored) {
        const source = expected.get(`${row.partitionKey}/${row.rowKey.slice(2)}`);
        expect(source, row.rowKey).toBeDefined();
        expect(row.value).toBe(source?.value);
        expect(row.note).toBe(source?.note);
      }
      // The pace went down on throttle answers, and the run took longer than without them.
      const throttled = busy.events.filter((event) => event.reason === "throttled");
      expect(throttled.length).toBeGreaterThan(0);
      for (const event of throttled) expect(event.rate).toBeLessThan(event.previousRate);
      expect(Math.min(...busy.events.map((event) => event.rate))).toBeLessThan(PER_PARTITION / 2);
      // Without faults the write runs at 2,000/s ± 10 % (the test above): with them, at most half of that.
      expect(BUSY_TOTAL / (busy.elapsedMs / 1000)).toBeLessThan(2000 / 2);
      // Every attempt, retries included, kept within the limit.
      assertWithinLimit(busy.sent, PER_PARTITION);
      console.log(
        `pacing on ${name}: ${Math.round(BUSY_TOTAL / (busy.elapsedMs / 1000))}/s (virtual) with ` +
          `${busy.plan.faults.busy} busy answers in ${busy.sent.length} batch attempts`,
      );
    },
  );
});
