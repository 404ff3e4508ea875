import { ValidationError } from "../errors.js";
/** .NET `DateTime.MaxValue.Ticks`: the top of the tick range (9999-12-31T23:59:59.9999999). */
export const MAX_TICKS = 3155378975999999999n;

/** Milliseconds from 0001-01-01 (tick zero) to the Unix epoch: 719,162 days. */
const EPOCH_OFFSET_MS = 62135596800000n;

/** Ticks per millisecond: one tick is 100 ns. */
const TICKS_PER_MS = 10000n;

/** Digits of `MAX_TICKS`, the width .NET's `ToString("d19")` pads to. */
const TICKS_DIGITS = 19;

/** Converts a valid `Date` to .NET ticks (100 ns units since 0001-01-01T00:00:00Z). */
export function dateToTicks(d: Date): bigint {
  return (BigInt(d.getTime()) + EPOCH_OFFSET_MS) * TICKS_PER_MS;
}

/** Converts .NET ticks to a `Date`, truncating the sub-millisecond part a JS `Date` cannot hold. */
export function ticksToDate(t: bigint): Date {
  return new Date(Number(t / TICKS_PER_MS - EPOCH_OFFSET_MS));
}

/** Inverts ticks (`MAX_TICKS - t`) so that later instants sort first: the log-tail pattern. */
export function invertTicks(t: bigint): bigint {
  return MAX_TICKS - t;
}

/** Formats ticks as exactly 19 zero-padded digits, like .NET's `ticks.ToString("d19")`. */
export function formatTicks(t: bigint): string {
  if (t < 0n || t > MAX_TICKS) {
    throw new ValidationError("ticks", `Ticks ${t} are outside 0..${MAX_TICKS}`);
  }
  return t.toString().padStart(TICKS_DIGITS, "0");
}

/** `MAX_TICKS` split at 10^9: the high part; the low part is 999,999,999. */
export const MAX_TICKS_HIGH = Number(MAX_TICKS / 1_000_000_000n);

/**
 * Converts ticks given as `high = floor(t / 10^9)` and `low = t % 10^9` to a `Date`, truncating to the
 * millisecond, without BigInt: 10^9 is a multiple of the 10^4 ticks in a millisecond, so every step is exact.
 */
export function splitTicksToDate(high: number, low: number): Date {
  return new Date(high * 100_000 + Math.floor(low / 10_000) - Number(EPOCH_OFFSET_MS));
}
