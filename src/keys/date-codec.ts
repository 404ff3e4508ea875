import { ServiceLimits } from "../util/service-limits.js";
import {
  describeValue,
  type KeyCodec,
  keyValueError,
  type PlaceholderSite,
  parseDigits,
} from "./key-codec.js";
import { dateToTicks, formatTicks, invertTicks, MAX_TICKS_HIGH, splitTicksToDate } from "./ticks.js";

/** Length of `toISOString()` for years 0000-9999, which covers the service's DateTime range. */
const ISO_LENGTH = 24;

/** Length of a ticks key component (`ToString("d19")`). */
const TICKS_LENGTH = 19;

/** Ticks decode as a 10-digit high part and a 9-digit low part, each exact as a number. */
const LOW_DIGITS = 9;
const LOW_NINES = 999_999_999;

/** Checks that a value is a Date the service can store (1601-01-01..9999-12-31) and returns it. */
function checkDate(site: PlaceholderSite, value: unknown): Date {
  if (!(value instanceof Date)) {
    throw keyValueError(site, "key-field-type", `must be a Date, got ${describeValue(value)}`);
  }
  const ms = value.getTime();
  if (Number.isNaN(ms)) throw keyValueError(site, "key-field-type", "is an invalid Date");
  if (ms < ServiceLimits.minDateTimeMs || ms > ServiceLimits.maxDateTimeMs) {
    throw keyValueError(
      site,
      "key-out-of-range",
      `is ${value.toISOString()}, outside the service's DateTime range 1601-01-01..9999-12-31`,
    );
  }
  return value;
}

/** Puts a Date into a key as ISO 8601 UTC with milliseconds (`toISOString()`): fixed width, chronological. */
export class IsoDateCodec implements KeyCodec {
  readonly width = ISO_LENGTH;
  readonly #site: PlaceholderSite;

  constructor(site: PlaceholderSite) {
    this.#site = site;
  }

  encode(value: unknown): string {
    return checkDate(this.#site, value).toISOString();
  }

  decode(key: string, start: number, end: number): Date | undefined {
    const text = key.slice(start, end);
    const date = new Date(text);
    // Only the canonical form decodes, so that every decoded key encodes back to itself.
    if (Number.isNaN(date.getTime()) || date.toISOString() !== text) return undefined;
    return date;
  }
}

/** Puts a Date into a key as 19-digit .NET ticks, or inverted ticks (newest first, the log-tail pattern). */
export class TicksCodec implements KeyCodec {
  readonly width = TICKS_LENGTH;
  readonly #site: PlaceholderSite;
  readonly #desc: boolean;

  constructor(site: PlaceholderSite, desc: boolean) {
    this.#site = site;
    this.#desc = desc;
  }

  encode(value: unknown): string {
    const ticks = dateToTicks(checkDate(this.#site, value));
    return formatTicks(this.#desc ? invertTicks(ticks) : ticks);
  }

  /** Keys written by .NET may hold sub-millisecond ticks: they decode truncated to the millisecond. */
  decode(key: string, start: number, end: number): Date | undefined {
    // Runs per row on scans, so it avoids BigInt: ticks = high × 10^9 + low.
    let high = parseDigits(key, start, end - LOW_DIGITS);
    let low = parseDigits(key, end - LOW_DIGITS, end);
    if (high < 0 || low < 0 || high > MAX_TICKS_HIGH) return undefined;
    if (this.#desc) {
      // MAX_TICKS ends in nine 9s, so inverting needs no borrow between the parts.
      high = MAX_TICKS_HIGH - high;
      low = LOW_NINES - low;
    }
    return splitTicksToDate(high, low);
  }
}
