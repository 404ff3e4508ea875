import { describe, expect, it } from "vitest";
import { ValidationError } from "../../src/errors.js";
import {
  BATCH_PAYLOAD_BUDGET,
  BatchPlanner,
  type PlannedBatch,
} from "../../src/repository/core/bulk/batch-planner.js";
import type { WriteUnit } from "../../src/repository/core/bulk/bulk-types.js";
import { BATCH_ENVELOPE_BYTES, estimateActionBytes } from "../../src/repository/core/payload-size.js";
import { ServiceLimits } from "../../src/util/service-limits.js";
import { type Item, toUnit } from "./bulk-helpers.js";

function planAll(items: Item[]): PlannedBatch<Item>[] {
  const planner = new BatchPlanner<Item>();
  const batches = items.flatMap((item, position) => planner.add(toUnit(item), position));
  return [...batches, ...planner.closeAll()];
}

function items(count: number, extra: Partial<Item> = {}, pk = "p"): Item[] {
  return Array.from({ length: count }, (_, seq) => ({ pk, rk: `r${seq}`, seq, ...extra }));
}

function bytesOf(batch: PlannedBatch<Item>): number {
  return batch.actions.reduce((sum, action) => sum + estimateActionBytes(action), 0);
}

function rejection(run: () => unknown): ValidationError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error("expected a ValidationError");
}

describe("BatchPlanner", () => {
  it("closes a batch as soon as it holds 100 operations", () => {
    const planner = new BatchPlanner<Item>();
    const closed = items(100).flatMap((item) => planner.add(toUnit(item)));
    expect(closed).toHaveLength(1);
    expect(closed[0]?.actions).toHaveLength(100);
    expect(planner.bufferedUnits).toBe(0);
  });

  it("packs 250 single-action units of a partition into 100 + 100 + 50, in order", () => {
    const batches = planAll(items(250));
    expect(batches.map((b) => b.actions.length)).toEqual([100, 100, 50]);
    expect(batches.flatMap((b) => b.units.map((u) => u.item.seq))).toEqual(items(250).map((i) => i.seq));
  });

  it("keeps partitions apart", () => {
    const mixed = [...items(150, {}, "a"), ...items(30, {}, "b")].reverse();
    const batches = planAll(mixed);
    for (const batch of batches) {
      expect(batch.actions.every((a) => "entity" in a && a.entity.partitionKey === batch.partitionKey)).toBe(
        true,
      );
    }
    expect(batches.map((b) => [b.partitionKey, b.units.length])).toEqual([
      ["a", 100],
      ["b", 30],
      ["a", 50],
    ]);
  });

  it("never splits a multi-action unit and never exceeds 100 operations", () => {
    // 4 actions per unit: 25 units fill a batch exactly; 3 actions: 33 units (99 actions), the 34th opens a new one.
    expect(planAll(items(60, { copies: 3 })).map((b) => [b.units.length, b.actions.length])).toEqual([
      [25, 100],
      [25, 100],
      [10, 40],
    ]);
    expect(planAll(items(70, { copies: 2 })).map((b) => [b.units.length, b.actions.length])).toEqual([
      [33, 99],
      [33, 99],
      [4, 12],
    ]);
  });

  it("keeps every batch's $batch body (operations and envelope) within 4 MiB", () => {
    const payload = "x".repeat(300_000);
    const batches = planAll(items(40, { payload }));
    expect(BATCH_PAYLOAD_BUDGET).toBe(ServiceLimits.maxTransactionBytes - BATCH_ENVELOPE_BYTES);
    expect(batches.length).toBeGreaterThan(1);
    for (const batch of batches) {
      expect(bytesOf(batch)).toBe(batch.bytes);
      expect(batch.bytes).toBeLessThanOrEqual(BATCH_PAYLOAD_BUDGET);
    }
    // Minimal: each batch but the last was closed only because the next unit would not fit.
    const unitBytes = batches[0]!.bytes / batches[0]!.units.length;
    for (const batch of batches.slice(0, -1))
      expect(batch.bytes + unitBytes).toBeGreaterThan(BATCH_PAYLOAD_BUDGET);
    expect(batches.reduce((n, b) => n + b.units.length, 0)).toBe(40);
  });

  it("sends a unit that fills a batch alone", () => {
    // Ten rows (each under 1 MiB) whose payload fills the budget to within ten bytes.
    const unitBytes = (payload: string) =>
      toUnit({ pk: "p", rk: "big", seq: 1, payload, copies: 9 }).actions.reduce(
        (sum, action) => sum + estimateActionBytes(action),
        0,
      );
    const fill = Math.floor((BATCH_PAYLOAD_BUDGET - unitBytes("")) / 10);
    const big: Item = { pk: "p", rk: "big", seq: 1, payload: "y".repeat(fill), copies: 9 };
    const unit = toUnit(big);
    const bytes = unitBytes(big.payload!);
    expect(bytes + estimateActionBytes(toUnit({ pk: "p", rk: "small", seq: 0 }).actions[0]!)).toBeGreaterThan(
      BATCH_PAYLOAD_BUDGET,
    );
    expect(bytes).toBeLessThanOrEqual(BATCH_PAYLOAD_BUDGET);
    const planner = new BatchPlanner<Item>();
    expect(planner.add(toUnit({ pk: "p", rk: "small", seq: 0 }))).toEqual([]);
    const closed = [...planner.add(unit), ...planner.closeAll()];
    expect(closed.map((b) => b.units.map((u) => u.item.rk))).toEqual([["small"], ["big"]]);
    expect(planner.bufferedUnits).toBe(0);
  });

  it("rejects a unit of more than 100 operations, naming the item and sending nothing", () => {
    const planner = new BatchPlanner<Item>();
    planner.add(toUnit({ pk: "p", rk: "ok", seq: 0 }));
    const error = rejection(() => planner.add(toUnit({ pk: "p", rk: "huge", seq: 1, copies: 100 }), 7));
    expect(error.rule).toBe("transaction-operations");
    expect(error.message).toContain("Bulk item 7");
    expect(error.message).toContain("RowKey 'huge'");
    expect(error.message).toContain("101 operations");
    expect(planner.bufferedUnits).toBe(1);
  });

  it("rejects a unit of 4 MiB or more", () => {
    const error = rejection(() =>
      new BatchPlanner<Item>().add(
        toUnit({ pk: "p", rk: "fat", seq: 0, payload: "z".repeat(500_000), copies: 8 }),
        0,
      ),
    );
    expect(error.rule).toBe("transaction-payload");
    expect(error.message).toContain("RowKey 'fat'");
  });

  it("rejects units that are empty, span partitions or touch a key twice", () => {
    const base = toUnit({ pk: "p", rk: "a", seq: 0 });
    const planner = new BatchPlanner<Item>();
    expect(rejection(() => planner.add({ ...base, actions: [] })).rule).toBe("transaction-empty");
    const other: WriteUnit<Item> = {
      ...base,
      actions: [...base.actions, toUnit({ pk: "q", rk: "b", seq: 0 }).actions[0]!],
    };
    expect(rejection(() => planner.add(other)).rule).toBe("transaction-partition");
    expect(rejection(() => planner.add({ ...base, rowKeys: ["a", "a"] })).rule).toBe("transaction-duplicate");
    expect(planner.bufferedUnits).toBe(0);
  });

  it("closes the open batch before a unit that touches one of its keys again, keeping write order", () => {
    const planner = new BatchPlanner<Item>();
    expect(planner.add(toUnit({ pk: "p", rk: "a", seq: 1 }))).toEqual([]);
    expect(planner.add(toUnit({ pk: "p", rk: "b", seq: 2 }))).toEqual([]);
    expect(planner.add(toUnit({ pk: "q", rk: "a", seq: 3 }))).toEqual([]);
    const closed = planner.add(toUnit({ pk: "p", rk: "a", seq: 4 }));
    expect(closed.map((b) => b.units.map((u) => u.item.seq))).toEqual([[1, 2]]);
    expect(planner.add(toUnit({ pk: "p", rk: "c", seq: 5 }))).toEqual([]);
    expect(planner.closeAll().map((b) => [b.partitionKey, b.units.map((u) => u.item.seq)])).toEqual([
      ["q", [3]],
      ["p", [4, 5]],
    ]);
  });

  it("treats an index copy's key like the entity's key", () => {
    const planner = new BatchPlanner<Item>();
    planner.add(toUnit({ pk: "p", rk: "a", seq: 1, copies: 1 }));
    // Row key "a~0" is the first unit's index copy.
    const closed = planner.add({ ...toUnit({ pk: "p", rk: "a~0", seq: 2 }) });
    expect(closed.map((b) => b.units.map((u) => u.item.seq))).toEqual([[1]]);
  });

  it("closes the largest open batch among eligible partitions", () => {
    const planner = new BatchPlanner<Item>();
    for (const item of [...items(3, {}, "a"), ...items(5, {}, "b"), ...items(4, {}, "c")])
      planner.add(toUnit(item));
    expect(planner.bufferedUnits).toBe(12);
    expect(planner.closeLargest((pk) => pk !== "b")?.partitionKey).toBe("c");
    expect(planner.closeLargest()?.partitionKey).toBe("b");
    expect(planner.bufferedUnits).toBe(3);
    expect(planner.closeLargest((pk) => pk !== "a")).toBeUndefined();
    expect(planner.closeLargest()?.units).toHaveLength(3);
    expect(planner.closeLargest()).toBeUndefined();
    expect(planner.closeAll()).toEqual([]);
  });
});
