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

/** The period a `{field:year|month|day|hour}` placeholder keeps of a Date. */
export type PeriodUnit = "year" | "month" | "day" | "hour";

/** Digits each period unit writes: `2026`, `202611`, `20261125`, `2026112513`. */
const PERIOD_WIDTHS: Readonly<Record<PeriodUnit, number>> = { year: 4, month: 6, day: 8, hour: 10 };

/** Answers whether a placeholder format names a period unit. */
export function isPeriodUnit(format: string | undefined): format is PeriodUnit {
  return format === "year" || format === "month" || format === "day" || format === "hour";
}

/**
 * Puts the UTC period of a Date into a key (`{at:month}` → `202611`): fixed-width digits, so keys sort
 * chronologically. The rest of the instant is dropped, so a key decodes to the start of its period only;
 * it is `lossy`, and readers keep the stored column value instead of the decoded one.
 */
export class PeriodCodec implements KeyCodec {
  readonly width: number;
  readonly lossy = true;
  readonly unit: PeriodUnit;
  /** Where the placeholder sits, for error messages. */
  readonly site: PlaceholderSite;

  constructor(site: PlaceholderSite, unit: PeriodUnit) {
    this.site = site;
    this.unit = unit;
    this.width = PERIOD_WIDTHS[unit];
  }

  encode(value: unknown): string {
    return formatPeriod(checkDate(this.site, value), this.unit);
  }

  /** The start instant of the period in `key[start, end)`, or `undefined` for text that names no period. */
  decode(key: string, start: number, end: number): Date | undefined {
    if (end - start !== this.width) return undefined;
    const year = parseDigits(key, start, start + 4);
    const month = this.width > 4 ? parseDigits(key, start + 4, start + 6) : 1;
    const day = this.width > 6 ? parseDigits(key, start + 6, start + 8) : 1;
    const hour = this.width > 8 ? parseDigits(key, start + 8, start + 10) : 0;
    if (year < 1601 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23) return undefined;
    const date = new Date(Date.UTC(year, month - 1, day, hour));
    // Date.UTC rolls 31 February over into March; such text is no period key.
    if (date.getUTCDate() !== day) return undefined;
    return date;
  }
}

/** The sortable UTC text of the period holding `date`. */
export function formatPeriod(date: Date, unit: PeriodUnit): string {
  const year = String(date.getUTCFullYear()).padStart(4, "0");
  if (unit === "year") return year;
  const month = `${year}${pad2(date.getUTCMonth() + 1)}`;
  if (unit === "month") return month;
  const day = `${month}${pad2(date.getUTCDate())}`;
  if (unit === "day") return day;
  return `${day}${pad2(date.getUTCHours())}`;
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}
