import { ValidationError } from "../../errors.js";

/** Point reads in flight by default: enough to hide latency, few enough not to flood one partition server. */
export const DEFAULT_GET_MANY_CONCURRENCY = 8;

/**
 * Reads every key with `read`, at most `concurrency` at a time, and resolves the results in the
 * order of `keys`. Point reads, never one `or` filter: the service answers an `or` of keys with a
 * scan of every partition it touches, while a point read costs one row whatever the table holds.
 * Every key is checked (`check`) before the first request, so bad input sends nothing.
 */
export async function getMany<K, R>(
  keys: readonly K[],
  concurrency: number | undefined,
  check: (key: K) => void,
  read: (key: K) => Promise<R>,
): Promise<R[]> {
  const limit = concurrency ?? DEFAULT_GET_MANY_CONCURRENCY;
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new ValidationError("concurrency", `concurrency must be a positive integer, got ${limit}`, {
      field: "concurrency",
    });
  }
  if (!Array.isArray(keys)) {
    throw new ValidationError("keys", "getMany needs an array of keys", { field: "keys" });
  }
  for (const key of keys) check(key);
  const results = new Array<R>(keys.length);
  let next = 0;
  let failed = false;
  // Workers take the next index until none is left; the first failure stops them taking more.
  const worker = async (): Promise<void> => {
    while (!failed && next < keys.length) {
      const index = next++;
      try {
        results[index] = await read(keys[index] as K);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, keys.length) }, worker));
  return results;
}
