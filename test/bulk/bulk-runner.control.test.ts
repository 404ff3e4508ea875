import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ValidationError } from "../../src/errors.js";
import { runBulk } from "../../src/repository/core/bulk/bulk-runner.js";
import type { BulkResult } from "../../src/repository/core/bulk/bulk-types.js";
import { deferred, endless, flushMicrotasks, grid, HeldSubmit, type Item, toUnit } from "./bulk-helpers.js";

/** The bulk write's outcome as a value, so a rejection is never left unhandled while the test drives it. */
function outcomeOf<T>(run: Promise<BulkResult<T>>): {
  settled: () => boolean;
  value: Promise<{ result?: BulkResult<T>; error?: unknown }>;
} {
  let settled = false;
  const value = run.then(
    (result) => ({ result }),
    (error: unknown) => ({ error }),
  );
  void value.then(() => {
    settled = true;
  });
  return { settled: () => settled, value };
}

async function settleAll(held: HeldSubmit): Promise<void> {
  for (const call of [...held.pending]) await held.succeed(call);
}

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(() => {
  process.on("unhandledRejection", onUnhandled);
});
afterAll(() => {
  process.off("unhandledRejection", onUnhandled);
});

describe("runBulk back-pressure and abort", () => {
  it("stops pulling an endless source while batches are in flight and memory is full, then aborts cleanly", async () => {
    const { source, stats } = endless(1000);
    const held = new HeldSubmit();
    const controller = new AbortController();
    const outcome = outcomeOf(
      runBulk(source, toUnit, held.submit, {
        concurrency: 2,
        maxBufferedUnits: 50,
        signal: controller.signal,
      }),
    );
    await held.calledTimes(2);
    for (let turn = 0; turn < 20; turn++) await flushMicrotasks();
    const pulled = stats.pulled;
    // Held units (50) + the units of the two in-flight batches + the one being planned.
    expect(pulled).toBeLessThanOrEqual(50 + 2 + 1);
    expect(held.calls).toHaveLength(2);
    for (let turn = 0; turn < 20; turn++) await flushMicrotasks();
    expect(stats.pulled).toBe(pulled);

    // A settled batch makes room: the runner pulls again, sends, and stalls again.
    await held.succeed(held.calls[0]!);
    await held.calledTimes(3);
    for (let turn = 0; turn < 20; turn++) await flushMicrotasks();
    expect(stats.pulled).toBeLessThanOrEqual(pulled + 1);
    expect(held.pending.size).toBe(2);

    controller.abort();
    for (let turn = 0; turn < 5; turn++) await flushMicrotasks();
    expect(outcome.settled()).toBe(false);
    const callsAtAbort = held.calls.length;
    await settleAll(held);
    const { error } = await outcome.value;
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).name).toBe("AbortError");
    expect(held.calls).toHaveLength(callsAtAbort);
    expect(stats.closed).toBe(true);
  });

  it("bounds memory with few partitions too", async () => {
    const { source, stats } = endless(3);
    const held = new HeldSubmit();
    const controller = new AbortController();
    const reason = new Error("enough");
    const outcome = outcomeOf(
      runBulk(source, toUnit, held.submit, {
        concurrency: 2,
        maxBufferedUnits: 120,
        signal: controller.signal,
      }),
    );
    await held.calledTimes(2);
    for (let turn = 0; turn < 20; turn++) await flushMicrotasks();
    // Every in-flight batch holds at most 100 units.
    expect(stats.pulled).toBeLessThanOrEqual(120 + 2 * 100 + 1);
    expect(held.pending.size).toBe(2);
    controller.abort(reason);
    await settleAll(held);
    expect((await outcome.value).error).toBe(reason);
    expect(stats.closed).toBe(true);
  });

  it("interrupts a pull the source never answers, sending nothing", async () => {
    const gate = deferred<void>();
    let closed = false;
    async function* stalling(): AsyncGenerator<Item> {
      try {
        yield* grid(1, 5);
        await gate.promise;
        yield { pk: "p0", rk: "late", seq: 99 };
      } finally {
        closed = true;
      }
    }
    const held = new HeldSubmit();
    const controller = new AbortController();
    const outcome = outcomeOf(runBulk(stalling(), toUnit, held.submit, { signal: controller.signal }));
    for (let turn = 0; turn < 5; turn++) await flushMicrotasks();
    controller.abort();
    const { error } = await outcome.value;
    expect((error as Error).name).toBe("AbortError");
    expect(held.calls).toHaveLength(0);
    // The generator finishes its pending step, then closes (return() was queued behind it).
    gate.resolve();
    for (let turn = 0; turn < 5; turn++) await flushMicrotasks();
    expect(closed).toBe(true);
  });

  it("rejects at once, pulling nothing, when the signal is already aborted", async () => {
    const { source, stats } = endless(1);
    const held = new HeldSubmit();
    const { error } = await outcomeOf(runBulk(source, toUnit, held.submit, { signal: AbortSignal.abort() }))
      .value;
    expect((error as Error).name).toBe("AbortError");
    expect(stats.pulled).toBe(0);
    expect(held.calls).toHaveLength(0);
  });

  it("resolves when the abort comes after everything was sent", async () => {
    const held = new HeldSubmit();
    const controller = new AbortController();
    const outcome = outcomeOf(runBulk(grid(1, 10), toUnit, held.submit, { signal: controller.signal }));
    await held.calledTimes(1);
    controller.abort();
    await settleAll(held);
    expect((await outcome.value).result?.written).toBe(10);
  });
});

describe("runBulk failures", () => {
  it("with stopOnError, starts no new batch after a failure and resolves once in-flight batches settle", async () => {
    // Four partitions, then more items for ever: the source is closed once the bulk write stops.
    const { source, stats } = endless(4);
    const held = new HeldSubmit();
    const outcome = outcomeOf(
      runBulk(source, toUnit, held.submit, { concurrency: 2, stopOnError: true, maxBufferedUnits: 2 }),
    );
    await held.calledTimes(2);
    const boom = new Error("boom");
    await held.fail(held.calls[0]!, boom);
    for (let turn = 0; turn < 5; turn++) await flushMicrotasks();
    expect(held.calls).toHaveLength(2);
    expect(outcome.settled()).toBe(false);
    await held.succeed(held.calls[1]!);
    const { result } = await outcome.value;
    expect(result).toEqual({
      written: 1,
      batches: 2,
      retries: 0,
      failed: [{ partitionKey: held.calls[0]!.partitionKey, items: [expect.any(Object)], error: boom }],
    });
    expect(held.calls).toHaveLength(2);
    expect(stats.closed).toBe(true);
  });

  it("with stopOnError, records every failure among the batches in flight", async () => {
    const held = new HeldSubmit();
    const outcome = outcomeOf(
      runBulk(grid(4, 1), toUnit, held.submit, { concurrency: 2, stopOnError: true }),
    );
    await held.calledTimes(2);
    await held.fail(held.calls[1]!, new Error("b"));
    await held.fail(held.calls[0]!, new Error("a"));
    const { result } = await outcome.value;
    expect(result?.failed.map((f) => (f.error as Error).message)).toEqual(["b", "a"]);
    expect(result?.written).toBe(0);
    expect(held.calls).toHaveLength(2);
  });

  it("without stopOnError, a failed batch does not stop the others", async () => {
    const held = new HeldSubmit();
    const outcome = outcomeOf(runBulk(grid(5, 1), toUnit, held.submit, { concurrency: 2 }));
    await held.calledTimes(2);
    await held.fail(held.calls[0]!, new Error("first"));
    await held.calledTimes(3);
    await held.fail(held.calls[1]!, new Error("second"));
    await held.calledTimes(4);
    await held.succeed(held.calls[2]!, 2);
    await held.calledTimes(5);
    await settleAll(held);
    const { result } = await outcome.value;
    expect(result?.written).toBe(3);
    expect(result?.batches).toBe(5);
    expect(result?.retries).toBe(2);
    expect(result?.failed.map((f) => [f.partitionKey, (f.error as Error).message])).toEqual([
      ["p0", "first"],
      ["p1", "second"],
    ]);
  });

  it("a batch sent as several transactions reports the failed ones' items alone, the rest written", async () => {
    const failure = new Error("second half");
    const result = await runBulk(
      grid(2, 4),
      toUnit,
      // p0's batch went as two transactions, its last two units in the failed one; p1's as one.
      (partitionKey) =>
        Promise.resolve(
          partitionKey === "p0"
            ? { retries: 1, transactions: 2, failed: [{ units: [2, 3], error: failure }] }
            : { retries: 0 },
        ),
      { concurrency: 1 },
    );
    expect(result.written).toBe(6);
    expect(result.batches).toBe(3);
    expect(result.retries).toBe(1);
    expect(result.failed).toEqual([{ partitionKey: "p0", items: grid(2, 4).slice(2, 4), error: failure }]);
  });

  it("records a submit that throws synchronously as a failed batch", async () => {
    const result = await runBulk(
      grid(2, 1),
      toUnit,
      (partitionKey) => {
        if (partitionKey === "p0") throw new Error("sync");
        return Promise.resolve({ retries: 0 });
      },
      {},
    );
    expect(result.written).toBe(1);
    expect(result.failed.map((f) => (f.error as Error).message)).toEqual(["sync"]);
  });

  it("rejects with a bad item's ValidationError after sending what came before it and settling", async () => {
    let pulled = 0;
    let closed = false;
    async function* source(): AsyncGenerator<Item> {
      try {
        for (const item of grid(1, 250)) {
          pulled++;
          yield item;
        }
      } finally {
        closed = true;
      }
    }
    const invalid = new ValidationError("key", "bad item 150");
    const held = new HeldSubmit();
    const outcome = outcomeOf(
      runBulk(
        source(),
        (item) => {
          if (item.seq === 150) throw invalid;
          return toUnit(item);
        },
        held.submit,
        {},
      ),
    );
    await held.calledTimes(1);
    for (let turn = 0; turn < 5; turn++) await flushMicrotasks();
    expect(pulled).toBe(151);
    expect(closed).toBe(true);
    expect(outcome.settled()).toBe(false);
    await held.succeed(held.calls[0]!);
    await held.calledTimes(2);
    expect(outcome.settled()).toBe(false);
    await held.succeed(held.calls[1]!);
    expect((await outcome.value).error).toBe(invalid);
    expect(held.calls.map((call) => call.actions.length)).toEqual([100, 50]);
  });

  it("rejects an item that can never fit in a transaction, naming it", async () => {
    const held = new HeldSubmit();
    const items = grid(1, 6).map((item) => (item.seq === 3 ? { ...item, copies: 100 } : item));
    const outcome = outcomeOf(runBulk(items, toUnit, held.submit, {}));
    await held.calledTimes(1);
    await settleAll(held);
    const { error } = await outcome.value;
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).rule).toBe("transaction-operations");
    expect((error as ValidationError).message).toContain("Bulk item 3 (PartitionKey 'p0', RowKey 'r3')");
    expect(held.calls.map((call) => call.actions.length)).toEqual([3]);
  });

  it("rejects bad options before pulling or sending anything", async () => {
    const held = new HeldSubmit();
    for (const options of [{ concurrency: 0 }, { concurrency: 1.5 }, { maxBufferedUnits: -1 }]) {
      const { error } = await outcomeOf(runBulk(grid(1, 1), toUnit, held.submit, options)).value;
      expect(error).toBeInstanceOf(ValidationError);
    }
    expect(held.calls).toHaveLength(0);
  });

  it("rejects with the source's own error after in-flight batches settle", async () => {
    const broken = new Error("source broke");
    async function* source(): AsyncGenerator<Item> {
      yield* grid(1, 120);
      throw broken;
    }
    const held = new HeldSubmit();
    const outcome = outcomeOf(runBulk(source(), toUnit, held.submit, {}));
    await held.calledTimes(1);
    await held.succeed(held.calls[0]!);
    await held.calledTimes(2);
    await held.succeed(held.calls[1]!);
    expect((await outcome.value).error).toBe(broken);
    expect(held.calls.map((call) => call.actions.length)).toEqual([100, 20]);
  });

  it("leaves no rejection unhandled", async () => {
    for (let turn = 0; turn < 5; turn++) await flushMicrotasks();
    expect(unhandled).toEqual([]);
  });
});
