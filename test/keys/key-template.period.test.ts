import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SchemaError, ValidationError } from "../../src/errors.js";
import { MAX_DATE, MIN_DATE, template } from "./fields.js";

const dates = fc.date({ min: MIN_DATE, max: MAX_DATE, noInvalidDate: true });
const units = fc.constantFrom("year", "month", "day", "hour");

/** Digits of the period, taken from the ISO text (an oracle independent of the codec). */
const ISO_DIGITS: Record<string, number> = { year: 4, month: 6, day: 8, hour: 10 };
function oracle(date: Date, unit: string): string {
  const iso = date.toISOString(); // YYYY-MM-DDTHH:mm:ss.sssZ for years 0000-9999
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}`.slice(
    0,
    ISO_DIGITS[unit],
  );
}

/** The start of the period, built from the ISO text too. */
function periodStart(date: Date, unit: string): Date {
  const iso = date.toISOString();
  const cut = {
    year: "-01-01T00:00:00.000Z",
    month: "-01T00:00:00.000Z",
    day: "T00:00:00.000Z",
    hour: ":00:00.000Z",
  };
  const keep = { year: 4, month: 7, day: 10, hour: 13 }[unit] ?? 0;
  return new Date(iso.slice(0, keep) + cut[unit as keyof typeof cut]);
}

function compare(a: string | number, b: string | number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

describe("KeyTemplate: period placeholders", () => {
  it("encodes the design-guide examples in UTC", () => {
    const at = new Date("2026-11-25T13:45:12.345Z");
    expect(template("{at:year}").encode({ at }, "PartitionKey")).toBe("2026");
    expect(template("{at:month}").encode({ at }, "PartitionKey")).toBe("202611");
    expect(template("{at:day}").encode({ at }, "PartitionKey")).toBe("20261125");
    expect(template("{at:hour}").encode({ at }, "PartitionKey")).toBe("2026112513");
    expect(template("log_{at:day}_{n:3}").encode({ at, n: 7 }, "RowKey")).toBe("log_20261125_007");
  });

  it("uses UTC, not the local time zone, at a day boundary", () => {
    const at = new Date("2026-12-31T23:30:00.000Z");
    expect(template("{at:year}").encode({ at }, "RowKey")).toBe("2026");
    expect(template("{at:hour}").encode({ at }, "RowKey")).toBe("2026123123");
    expect(template("{at:hour}").encode({ at: new Date("2027-01-01T00:00:00.000Z") }, "RowKey")).toBe(
      "2027010100",
    );
  });

  it("encodes like the ISO date digits and decodes to the period's start", () => {
    fc.assert(
      fc.property(dates, units, (at, unit) => {
        const t = template(`p{at:${unit}}`);
        const key = t.encode({ at }, "RowKey");
        expect(key).toBe(`p${oracle(at, unit)}`);
        expect(t.decode(key)).toEqual({ at: periodStart(at, unit) });
        // The start of a period encodes back to the same key.
        expect(t.encode({ at: periodStart(at, unit) }, "RowKey")).toBe(key);
      }),
    );
  });

  it("sorts like the periods: encoded order equals the order of the period starts", () => {
    fc.assert(
      fc.property(dates, dates, units, (x, y, unit) => {
        const t = template(`{at:${unit}}`);
        const byKey = compare(t.encode({ at: x }, "RowKey"), t.encode({ at: y }, "RowKey"));
        expect(byKey).toBe(compare(periodStart(x, unit).getTime(), periodStart(y, unit).getTime()));
        // Never against the order of the instants.
        if (byKey !== 0) expect(byKey).toBe(compare(x.getTime(), y.getTime()));
      }),
    );
  });

  it("marks the field lossy, and no other field", () => {
    const t = template("{at:month}_{when}_{n:3}");
    expect(t.lossyFields).toEqual(["at"]);
    expect(template("{at}_{when:ticks}").lossyFields).toEqual([]);
  });

  it("does not decode text that names no period", () => {
    const month = template("{at:month}");
    for (const key of ["202613", "202600", "20261", "2026111", "16000101".slice(0, 6), "2026x1"]) {
      expect(month.decode(key)).toBeUndefined();
    }
    const day = template("{at:day}");
    expect(day.decode("20260231")).toBeUndefined();
    expect(day.decode("20240229")).toEqual({ at: new Date("2024-02-29T00:00:00.000Z") });
    expect(day.decode("20250229")).toBeUndefined();
    expect(template("{at:hour}").decode("2026112524")).toBeUndefined();
  });

  it("ranges and prefixes cover whole periods", () => {
    const t = template("{at:month}_{n:3}");
    expect(t.prefixRange({ at: new Date("2026-11-25T13:00:00Z") })).toEqual({ ge: "202611_", lt: "202611`" });
    const range = t.betweenRange(
      { at: new Date("2026-02-10T00:00:00Z") },
      { at: new Date("2026-04-03T00:00:00Z") },
    );
    expect(range).toEqual({ ge: "202602_", lt: "202604`" });
    const inside = t.encode({ at: new Date("2026-04-30T23:59:59.999Z"), n: 999 }, "RowKey");
    const after = t.encode({ at: new Date("2026-05-01T00:00:00Z"), n: 0 }, "RowKey");
    expect(inside >= range.ge && inside < (range.lt ?? "")).toBe(true);
    expect(after < (range.lt ?? "")).toBe(false);
  });

  it("rejects values that are not service dates before building a key", () => {
    const t = template("{at:day}");
    expect(() => t.encode({ at: "2026-11-25" }, "RowKey")).toThrow(ValidationError);
    expect(() => t.encode({ at: new Date(Number.NaN) }, "RowKey")).toThrow(ValidationError);
    expect(() => t.encode({ at: new Date(Date.UTC(1600, 11, 31)) }, "RowKey")).toThrow(ValidationError);
  });

  it("takes period formats on DateTime fields only, and no unknown unit", () => {
    expect(() => template("{n:month}")).toThrow(SchemaError);
    expect(() => template("{s:year}")).toThrow(SchemaError);
    expect(() => template("{at:week}")).toThrow(/unknown format ':week'/);
    expect(() => template("{at:month:desc}")).toThrow(SchemaError);
    expect(() => template("{n:day}")).toThrow(/period \(year, month, day, hour\)|does not fit/);
  });
});
