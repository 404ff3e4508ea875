import { ValidationError } from "../../../errors.js";
import type { BulkOptions, BulkResult } from "./bulk-types.js";

/**
 * Runs a bulk write one item at a time, `concurrency` items in flight, for entities whose writes
 * cannot be batched blindly (indexed entities: each write must also move its index copies). Same
 * contract as the batched path: streamed input, progress, abort, failures listed per item.
 */
export async function writeEach<T>(
  items: Iterable<T> | AsyncIterable<T>,
  write: (item: T) => Promise<unknown>,
  keyOf: (item: T) => string,
  options: BulkOptions,
): Promise<BulkResult<T>> {
  const concurrency = options.concurrency ?? 8;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
    throw new ValidationError(
      "positive-integer",
      `concurrency must be a positive integer, got ${concurrency}`,
      { field: "concurrency" },
    );
  }
  const total = Array.isArray(items) ? items.length : undefined;
  const result: BulkResult<T> = { written: 0, batches: 0, retries: 0, failed: [] };
  const iterator = (
    Symbol.asyncIterator in items ? items[Symbol.asyncIterator]() : (items as Iterable<T>)[Symbol.iterator]()
  ) as AsyncIterator<T> | Iterator<T>;
  let stop = false;
  let failure: unknown;
  const report = () => {
    try {
      options.onProgress?.({
        done: result.written,
        ...(total === undefined ? {} : { total }),
        batches: result.batches,
        retries: result.retries,
        failed: result.failed.length,
      });
    } catch {
      // Progress reporting must not change the outcome.
    }
  };
  const worker = async () => {
    while (!stop) {
      if (options.signal?.aborted) {
        stop = true;
        failure ??= options.signal.reason;
        return;
      }
      let next: IteratorResult<T>;
      try {
        next = await iterator.next();
      } catch (error) {
        stop = true;
        failure ??= error;
        return;
      }
      if (next.done) return;
      const item = next.value;
      try {
        await write(item);
        result.written++;
      } catch (error) {
        if (error instanceof ValidationError) {
          stop = true;
          failure ??= error;
          return;
        }
        result.failed.push({ partitionKey: keyOf(item), items: [item], error });
        if (options.stopOnError) stop = true;
      }
      result.batches++;
      report();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  if (failure !== undefined) throw failure;
  return result;
}
