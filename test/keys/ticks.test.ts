import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../src/errors.js";
import {
  dateToTicks,
  formatTicks,
  invertTicks,
  MAX_TICKS,
  MAX_TICKS_HIGH,
  splitTicksToDate,
  ticksToDate,
} from "../../src/keys/ticks.js";
import { MAX_DATE, MIN_DATE } from "./fields.js";

/** Ticks of 2012-07-01T00:00:00Z from the .NET definition: whole days since 0001-01-01 × 864,000,000,000. */
function expectedTicks20120701(): bigint {
  // Days in years 1..2011: 365 per year plus leap days (divisible by 4, not by 100 unless by 400).
  const years = 2011;
  const leapDays = Math.floor(years / 4) - Math.floor(years / 100) + Math.floor(years / 400); // 502 - 20 + 5
  // Days of 2012 (a leap year) before July 1: Jan 31 + Feb 29 + Mar 31 + Apr 30 + May 31 + Jun 30.
  const daysInto2012 = 31 + 29 + 31 + 30 + 31 + 30;
  const days = 365 * years + leapDays + daysInto2012;
  expect(days).toBe(734684);
  return BigInt(days) * 864_000_000_000n;
}

describe("ticks", () => {
  it("MAX_TICKS is DateTime.MaxValue.Ticks", () => {
    expect(MAX_TICKS).toBe(3155378975999999999n);
  });

  it("converts a known date to the .NET tick count", () => {
    expect(dateToTicks(new Date("2012-07-01T00:00:00Z"))).toBe(expectedTicks20120701());
    expect(dateToTicks(new Date("0001-01-01T00:00:00Z"))).toBe(0n);
  });

  it("inverts ticks against DateTime.MaxValue.Ticks", () => {
    expect(invertTicks(expectedTicks20120701())).toBe(3155378975999999999n - 634766976000000000n);
  });

  it("formats ticks as exactly 19 zero-padded digits", () => {
    expect(formatTicks(0n)).toBe("0000000000000000000");
    expect(formatTicks(MAX_TICKS)).toBe("3155378975999999999");
    expect(formatTicks(dateToTicks(MIN_DATE))).toBe("0504911232000000000");
    expect(() => formatTicks(-1n)).toThrow(ValidationError);
    expect(() => formatTicks(MAX_TICKS + 1n)).toThrow(ValidationError);
  });

  it("ticksToDate truncates sub-millisecond ticks", () => {
    const t = dateToTicks(new Date("2012-07-01T00:00:00.123Z"));
    expect(ticksToDate(t + 9999n).toISOString()).toBe("2012-07-01T00:00:00.123Z");
    expect(ticksToDate(MAX_TICKS).getTime()).toBe(MAX_DATE.getTime());
  });

  it("round-trips every date in the service's range", () => {
    fc.assert(
      fc.property(fc.date({ min: MIN_DATE, max: MAX_DATE, noInvalidDate: true }), (d) => {
        expect(ticksToDate(dateToTicks(d)).getTime()).toBe(d.getTime());
      }),
    );
  });

  it("splitTicksToDate agrees with ticksToDate on every tick count", () => {
    expect(MAX_TICKS_HIGH).toBe(3155378975);
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: MAX_TICKS }), (t) => {
        const high = Number(t / 1_000_000_000n);
        const low = Number(t % 1_000_000_000n);
        expect(splitTicksToDate(high, low).getTime()).toBe(ticksToDate(t).getTime());
      }),
    );
  });
});
