import { ValidationError } from "../../errors.js";
import type { BulkOptions, BulkResult, FailedBatch } from "../core/bulk/bulk-types.js";

/**
 * A bulk write of wide entities: each entity is its own entity group transaction (its rows may take
 * up to 100 operations, and a replace first reads which rows are stored), `concurrency` entities in
 * flight. As with other bulk writes, each entity is atomic and the bulk write is not: a failed entity
 * is listed in `failed` (one "batch" per entity) and the others go on. An item that fails its checks
 * (`check`, run when it is pulled, before it is sent) stops the pulling; the bulk write rejects with
 * that error once the entities in flight settle.
 */
export async function wideBulk<T>(
  source: Iterable<T> | AsyncIterable<T>,
  options: BulkOptions,
  check: (item: T) => string,
  write: (item: T) => Promise<void>,
): Promise<BulkResult<T>> {
  const concurrency = options.concurrency ?? 8;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
    throw new ValidationError("concurrency", `concurrency must be a positive integer, got ${concurrency}`, {
      field: "concurrency",
    });
  }
  const { signal } = options;
  signal?.throwIfAborted();
  // An array is in memory already: check every item before the first request, so bad input sends nothing.
  if (Array.isArray(source)) for (const item of source) check(item);
  const total = Array.isArray(source) ? source.length : undefined;
  const failed: FailedBatch<T>[] = [];
  let written = 0;
  let settled = 0;
  let stop = false;
  let exhausted = false;
  let failure: { error: unknown } | undefined;
  const progress = (): void => {
    try {
      options.onProgress?.({
        done: written,
        ...(total === undefined ? {} : { total }),
        batches: settled,
        retries: 0,
        failed: failed.length,
      });
    } catch {
      // A throwing progress callback is ignored.
    }
  };
  const iterator =
    Symbol.asyncIterator in Object(source)
      ? (source as AsyncIterable<T>)[Symbol.asyncIterator]()
      : (source as Iterable<T>)[Symbol.iterator]();
  const next = async (): Promise<T | undefined> => {
    if (stop || signal?.aborted) return undefined;
    const result = await iterator.next();
    if (result.done) {
      exhausted = true;
      return undefined;
    }
    return result.value;
  };
  const worker = async (): Promise<void> => {
    for (;;) {
      let item: T | undefined;
      let partitionKey: string;
      try {
        item = await next();
        if (item === undefined) return;
        partitionKey = check(item);
      } catch (error) {
        failure ??= { error };
        stop = true;
        return;
      }
      try {
        await write(item);
        written++;
      } catch (error) {
        failed.push({ partitionKey, items: [item], error });
        if (options.stopOnError) stop = true;
      }
      settled++;
      progress();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  if (failure) throw failure.error;
  if (signal?.aborted && !exhausted) throw signal.reason;
  return { written, batches: settled, retries: 0, failed };
}
