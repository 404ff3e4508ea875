import { randomFillSync } from "node:crypto";

/**
 * Cryptographically random bytes drawn from a pool refilled 4 KiB at a time: one call into the CSPRNG
 * per ~100 data keys or ~300 IVs instead of one per value (each call costs microseconds). Every byte
 * is handed out once.
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let next = 0;

/** `count` fresh random bytes (at most 4 KiB); a view into the pool: copy what outlives the call. */
export function randomView(count: number): Buffer {
  if (next + count > pool.length) {
    pool = randomFillSync(Buffer.allocUnsafe(POOL_BYTES));
    next = 0;
  }
  const view = pool.subarray(next, next + count);
  next += count;
  return view;
}
