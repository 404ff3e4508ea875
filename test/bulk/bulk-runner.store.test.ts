import { describe, expect, it } from "vitest";
import { TransactionError } from "../../src/errors.js";
import { runBulk } from "../../src/repository/core/bulk/bulk-runner.js";
import type { BulkProgress, SubmitBatch, WriteUnit } from "../../src/repository/core/bulk/bulk-types.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import type { StoredEntity, TableStore } from "../../src/store/table-store.js";
import { readAll as readTable } from "../support/read-all.js";
import { grid, type Item, shuffle, toUnit } from "./bulk-helpers.js";

const TABLE = "BulkTest";

async function freshStore(): Promise<{ store: MemoryStore; submit: SubmitBatch; requests: () => number }> {
  const store = new MemoryStore();
  await store.createTable(TABLE);
  let requests = 0;
  const submit: SubmitBatch = async (partitionKey, actions) => {
    requests++;
    await store.submitTransaction(TABLE, partitionKey, actions);
    return { retries: 0 };
  };
  return { store, submit, requests: () => requests };
}

function readAll(store: TableStore): Promise<StoredEntity[]> {
  return readTable(store, TABLE);
}

async function* streamOf<T>(items: readonly T[]): AsyncGenerator<T> {
  for (const item of items) yield item;
}

function interleave(items: Item[], partitions: number): Item[] {
  const perPartition = items.length / partitions;
  return Array.from(
    { length: items.length },
    (_, i) => items[(i % partitions) * perPartition + Math.floor(i / partitions)]!,
  );
}

describe("runBulk on MemoryStore", () => {
  const tenThousand = grid(100, 100);
  const orders: [string, () => Iterable<Item> | AsyncIterable<Item>][] = [
    ["partition by partition", () => tenThousand],
    ["interleaved", () => interleave(tenThousand, 100)],
    ["shuffled", () => shuffle(tenThousand)],
    ["shuffled, from an async generator", () => streamOf(shuffle(tenThousand, 7))],
  ];

  it.each(orders)(
    "writes 10,000 entities over 100 partitions (%s) in exactly 100 requests",
    async (_, source) => {
      const { store, submit, requests } = await freshStore();
      const result = await runBulk(source(), toUnit, submit, {});
      expect(requests()).toBe(100);
      expect(result).toEqual({ written: 10_000, batches: 100, retries: 0, failed: [] });
      const stored = await readAll(store);
      expect(stored).toHaveLength(10_000);
      const bySeq = new Map(tenThousand.map((item) => [`${item.pk}/${item.rk}`, item.seq]));
      for (const entity of stored)
        expect(entity.seq).toBe(bySeq.get(`${entity.partitionKey}/${entity.rowKey}`));
    },
  );

  it("needs ceil(N/100) requests for N units of one partition", async () => {
    for (const n of [1, 99, 100, 101, 250]) {
      const { submit, requests } = await freshStore();
      await runBulk(grid(1, n), toUnit, submit, {});
      expect(requests()).toBe(Math.ceil(n / 100));
    }
  });

  it("applies repeated writes of one entity in source order", async () => {
    const { store, submit } = await freshStore();
    const items: Item[] = [];
    for (let round = 0; round < 3; round++) {
      for (let r = 0; r < 150; r++) items.push({ pk: `p${r % 3}`, rk: `r${r % 40}`, seq: items.length });
    }
    const result = await runBulk(items, toUnit, submit, { concurrency: 4 });
    expect(result.written).toBe(items.length);
    const last = new Map(items.map((item) => [`${item.pk}/${item.rk}`, item.seq]));
    const stored = await readAll(store);
    expect(stored).toHaveLength(last.size);
    for (const entity of stored) expect(entity.seq).toBe(last.get(`${entity.partitionKey}/${entity.rowKey}`));
  });

  it("stays correct when memory pressure sends partial batches (1,000 partitions, 500 units held)", async () => {
    const { store, submit, requests } = await freshStore();
    const items = shuffle(grid(1000, 10), 3);
    const result = await runBulk(streamOf(items), toUnit, submit, { maxBufferedUnits: 500 });
    expect(result.written).toBe(10_000);
    expect(result.batches).toBe(requests());
    expect(requests()).toBeGreaterThanOrEqual(1000);
    expect(await readAll(store)).toHaveLength(10_000);
  });

  it("records a failed batch with its items and error while the other batches commit", async () => {
    const { store, submit } = await freshStore();
    await store.insert(TABLE, { partitionKey: "p3", rowKey: "r5", seq: -1 });
    const insertUnit = (item: Item): WriteUnit<Item> => {
      const unit = toUnit(item);
      return {
        ...unit,
        actions: unit.actions.map((a) => ("entity" in a ? { kind: "insert", entity: a.entity } : a)),
      };
    };
    const items = shuffle(grid(6, 30));
    const result = await runBulk(items, insertUnit, submit, { concurrency: 3 });
    expect(result.written).toBe(150);
    expect(result.batches).toBe(6);
    expect(result.failed).toHaveLength(1);
    const [failed] = result.failed;
    expect(failed?.partitionKey).toBe("p3");
    expect(failed?.error).toBeInstanceOf(TransactionError);
    expect(failed?.items.map((i) => i.seq).sort((a, b) => a - b)).toEqual(
      grid(6, 30)
        .slice(90, 120)
        .map((i) => i.seq),
    );
    const stored = await readAll(store);
    expect(stored).toHaveLength(151);
    expect(stored.filter((e) => e.partitionKey === "p3")).toEqual([
      expect.objectContaining({ rowKey: "r5", seq: -1 }),
    ]);
  });

  it("reports monotonic progress whose last report matches the result", async () => {
    const { submit: store } = await freshStore();
    let calls = 0;
    const submit: SubmitBatch = async (partitionKey, actions) => {
      await store(partitionKey, actions);
      calls++;
      return { retries: calls % 2 };
    };
    const reports: BulkProgress[] = [];
    const items = shuffle(grid(10, 130));
    const result = await runBulk(items, toUnit, submit, {
      concurrency: 3,
      onProgress: (p) => reports.push(p),
    });
    expect(reports).toHaveLength(result.batches);
    reports.forEach((report, index) => {
      expect(report.batches).toBe(index + 1);
      expect(report.total).toBe(1300);
      expect(report.failed).toBe(0);
      if (index > 0) {
        expect(report.done).toBeGreaterThan(reports[index - 1]!.done);
        expect(report.retries).toBeGreaterThanOrEqual(reports[index - 1]!.retries);
      }
    });
    expect(reports.at(-1)).toEqual({ done: 1300, total: 1300, batches: 20, retries: 10, failed: 0 });
    expect(result).toMatchObject({ written: 1300, batches: 20, retries: 10 });
  });

  it("reports total from options, or none for a stream of unknown length", async () => {
    const { submit } = await freshStore();
    const seen: (number | undefined)[] = [];
    await runBulk(streamOf(grid(2, 3)), toUnit, submit, { onProgress: (p) => seen.push(p.total) });
    await runBulk(streamOf(grid(1, 3)), toUnit, submit, { total: 3, onProgress: (p) => seen.push(p.total) });
    expect(seen).toEqual([undefined, undefined, 3]);
  });

  it("ignores a throwing progress callback", async () => {
    const { submit } = await freshStore();
    const result = await runBulk(grid(3, 5), toUnit, submit, {
      onProgress: () => {
        throw new Error("observer bug");
      },
    });
    expect(result.written).toBe(15);
  });
});
