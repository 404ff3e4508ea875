/**
 * Aborting a bulk write: it rejects with the signal's reason, and every batch is all-or-nothing,
 * so each partition holds whole batches only (here: the first 100 or all 200 of its readings).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { TableKitEvent } from "../../src/index.js";
import { TRANSIENT_FAULTS } from "../support/faulty-store.js";
import { testSeed } from "../support/seeded-random.js";
import {
  type FaultyStores,
  faultyContext,
  faultyStores,
  readTable,
  rejectionOf,
  storeNames,
} from "./harness.js";
import { Reading, reading } from "./models.js";

const SENSORS = 40;
const PER_SENSOR = 200;

/** Rows per partition, and a check that each partition holds a prefix of whole batches. */
function expectWholeBatches(
  rows: ReadonlyArray<{ partitionKey: string; seq?: unknown }>,
): Map<string, number> {
  const seqs = new Map<string, number[]>();
  for (const row of rows) {
    const list = seqs.get(row.partitionKey) ?? [];
    list.push(row.seq as number);
    seqs.set(row.partitionKey, list);
  }
  const counts = new Map<string, number>();
  for (const [partition, list] of seqs) {
    expect([100, 200], partition).toContain(list.length);
    // Batches of a partition go in order: its first batch is seqs 0..99.
    expect(
      list.sort((a, b) => a - b),
      partition,
    ).toEqual(Array.from({ length: list.length }, (_, i) => i));
    counts.set(partition, list.length);
  }
  return counts;
}

const SEED = testSeed(31);

describe.each(storeNames)(`aborting a bulk write on %s (seed ${SEED})`, (name) => {
  let stores: FaultyStores;
  afterEach(() => stores?.close());

  it.each([0, 0.2])(
    "midway rejects with the reason and leaves no batch half-applied (fault rate %s)",
    async (rate) => {
      // Retries cannot run out (3 faults per request at most, 8 retries): every batch commits or is never sent.
      stores = await faultyStores(name, { seed: SEED, rate: 0, mix: TRANSIENT_FAULTS });
      const committed: TableKitEvent[] = [];
      const { db } = await faultyContext(stores, [Reading], {
        onEvent: (event) => {
          if (event.type === "batch-committed") committed.push(event);
        },
      });
      const readings = db.repository(Reading);
      // Readings in seq order within each partition, partitions interleaved.
      const items = Array.from({ length: SENSORS * PER_SENSOR }, (_, i) =>
        reading(i % SENSORS, Math.floor(i / SENSORS), 1),
      );
      const controller = new AbortController();
      const reason = new Error("stop here");
      stores.plan.setRate(rate);
      const error = await rejectionOf(
        readings.bulkUpsert(items, {
          concurrency: 3,
          signal: controller.signal,
          onProgress: (progress) => {
            if (progress.batches >= 6) controller.abort(reason);
          },
        }),
      );
      stores.plan.setRate(0);
      expect(error).toBe(reason);
      const rows = await readTable(stores.direct, readings.table);
      const counts = expectWholeBatches(rows);
      // In-flight batches settled before the rejection; then nothing more was sent.
      expect(rows).toHaveLength(committed.length * 100);
      expect(committed.length).toBeGreaterThanOrEqual(6);
      expect(rows.length).toBeLessThan((SENSORS * PER_SENSOR) / 2);
      expect(counts.size).toBeLessThan(SENSORS);
    },
  );

  it("while the source is waiting: the open batch is never sent", async () => {
    stores = await faultyStores(name);
    const { db } = await faultyContext(stores, [Reading]);
    const readings = db.repository(Reading);
    const controller = new AbortController();
    async function* source() {
      for (let seq = 0; seq < 250; seq++) yield reading(1, seq, 1);
      // A source that stalls: only the abort ends the bulk write.
      await new Promise(() => {});
    }
    const reason = new Error("stalled");
    const error = await rejectionOf(
      readings.bulkUpsert(source(), {
        onProgress: (progress) => {
          if (progress.done >= 100) controller.abort(reason);
        },
        signal: controller.signal,
      }),
    );
    expect(error).toBe(reason);
    const rows = await readTable(stores.direct, readings.table);
    expectWholeBatches(rows);
    expect(rows.length).toBeGreaterThanOrEqual(100);
    // The last 50 readings never formed a full batch.
    expect(rows.every((row) => (row.seq as number) < 200)).toBe(true);
  });

  it("an already aborted signal sends nothing", async () => {
    stores = await faultyStores(name);
    const { db, counter } = await faultyContext(stores, [Reading]);
    const reason = new Error("never started");
    const error = await rejectionOf(
      db.repository(Reading).bulkUpsert([reading(1, 1, 1)], { signal: AbortSignal.abort(reason) }),
    );
    expect(error).toBe(reason);
    expect(counter.requests).toBe(0);
    expect(stores.plan.requests).toBe(0);
  });
});
