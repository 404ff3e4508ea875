import { ValidationError } from "../../../errors.js";
import type { StoreLimits } from "../../../util/store-limits.js";
import { BatchPlanner } from "./batch-planner.js";
import { BatchScheduler } from "./batch-scheduler.js";
import type { BulkOptions, BulkResult, SubmitBatch, WriteUnit } from "./bulk-types.js";
import { ItemSource } from "./item-source.js";

/** Batches a bulk write has in flight by default (`concurrency`), never two of one partition at once. */
export const DEFAULT_BULK_CONCURRENCY = 8;

/**
 * Writes a stream of items as entity group transactions: pulls items one by one (never the whole source),
 * packs each partition's units into as few batches as the service allows (≤ 100 operations, payload under
 * 4 MiB less a margin, each entity once per batch), and submits them with bounded concurrency, one batch
 * per partition at a time, in order.
 *
 * Each batch is atomic; the bulk write is not. A failed batch is reported in `failed` while the others go on
 * (or, with `stopOnError`, no new batch starts and the result reports what happened). `toUnit` gets each item
 * with its position in the source (from 0). When `toUnit` or the
 * source throws (e.g. a `ValidationError` for a bad item), pulling stops, the items pulled before it are
 * still sent, and once every batch has settled the bulk write rejects with that error: batches already
 * committed stay committed. On abort, pulling and sending stop, in-flight batches settle, and it rejects
 * with the signal's reason (unless everything had already been sent).
 *
 * @example
 * const result = await runBulk(items, toUnit, (pk, actions) => send(pk, actions), { concurrency: 8 });
 * console.log(result.written, result.failed.length);
 */
export async function runBulk<T>(
  source: Iterable<T> | AsyncIterable<T>,
  toUnit: (item: T, index: number) => WriteUnit<T>,
  submit: SubmitBatch,
  options: BulkOptions & { total?: number; limits?: StoreLimits } = {},
): Promise<BulkResult<T>> {
  const concurrency = readCount(options.concurrency, DEFAULT_BULK_CONCURRENCY, "concurrency");
  const maxBufferedUnits = readCount(options.maxBufferedUnits, 10_000, "maxBufferedUnits");
  const { signal } = options;
  signal?.throwIfAborted();
  const planner = new BatchPlanner<T>(options.limits);
  const scheduler = new BatchScheduler<T>(submit, {
    concurrency,
    stopOnError: options.stopOnError ?? false,
    onProgress: options.onProgress,
    total: options.total ?? (Array.isArray(source) ? source.length : undefined),
  });
  const items = new ItemSource(source);
  const onAbort = () => {
    scheduler.halt();
    items.interrupt();
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  let failure: { error: unknown } | undefined;
  try {
    failure = await pullAll(items, toUnit, planner, scheduler, maxBufferedUnits);
    try {
      await items.close();
    } catch (error) {
      failure ??= { error };
    }
    // A bad item stops the pulling, not the sending of the items before it: nothing pulled is silently dropped.
    if (!scheduler.halted) for (const batch of planner.closeAll()) scheduler.enqueue(batch);
    await scheduler.drain();
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
  if (failure) throw failure.error;
  const unsent = !items.exhausted || planner.bufferedUnits > 0 || scheduler.queuedUnits > 0;
  if (signal?.aborted && unsent) throw signal.reason;
  return scheduler.result();
}

/** Pulls and plans until the source ends, the scheduler halts, or an item fails (returned, not thrown). */
async function pullAll<T>(
  items: ItemSource<T>,
  toUnit: (item: T, index: number) => WriteUnit<T>,
  planner: BatchPlanner<T>,
  scheduler: BatchScheduler<T>,
  maxBufferedUnits: number,
): Promise<{ error: unknown } | undefined> {
  let position = 0;
  for (;;) {
    if (planner.bufferedUnits + scheduler.queuedUnits >= maxBufferedUnits) {
      await makeRoom(planner, scheduler, maxBufferedUnits);
    }
    if (scheduler.halted) return undefined;
    try {
      const pulled = items.pull();
      const next = pulled instanceof Promise ? await pulled : pulled;
      if (next.done) return undefined;
      const index = position++;
      for (const batch of planner.add(toUnit(next.value, index), index)) scheduler.enqueue(batch);
    } catch (error) {
      return { error };
    }
  }
}

/**
 * Back-pressure: while the units held (open and waiting batches) reach the limit, sends the largest open batch
 * of a partition that can start now, or else waits for a batch to settle; the source is not pulled meanwhile.
 */
async function makeRoom<T>(
  planner: BatchPlanner<T>,
  scheduler: BatchScheduler<T>,
  limit: number,
): Promise<void> {
  while (!scheduler.halted && planner.bufferedUnits + scheduler.queuedUnits >= limit) {
    const batch = scheduler.hasFreeSlot ? planner.closeLargest((pk) => scheduler.isIdle(pk)) : undefined;
    if (batch) scheduler.enqueue(batch);
    else await scheduler.settled();
  }
}

function readCount(value: number | undefined, fallback: number, field: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new ValidationError(
      "positive-integer",
      `${field} must be a positive integer, got ${String(value)}`,
      {
        field,
      },
    );
  }
  return value;
}
