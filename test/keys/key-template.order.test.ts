import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_DATE, MIN_DATE, template } from "./fields.js";

const MAX_INT32 = 2147483647;
const MAX_INT64 = 2n ** 63n - 1n;

function compare<T extends string | number | bigint>(a: T, b: T): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const dates = fc.date({ min: MIN_DATE, max: MAX_DATE, noInvalidDate: true });

/** Two Int32 values that fit `width` digits, with the width. */
const int32Pair = fc.integer({ min: 1, max: 10 }).chain((width) => {
  const max = Math.min(10 ** width - 1, MAX_INT32);
  return fc.tuple(fc.constant(width), fc.integer({ min: 0, max }), fc.integer({ min: 0, max }));
});

/** Two Int64 values that fit `width` digits, with the width. */
const int64Pair = fc.integer({ min: 1, max: 19 }).chain((width) => {
  const tens = 10n ** BigInt(width) - 1n;
  const max = tens < MAX_INT64 ? tens : MAX_INT64;
  return fc.tuple(fc.constant(width), fc.bigInt({ min: 0n, max }), fc.bigInt({ min: 0n, max }));
});

describe("KeyTemplate: encoded order equals value order", () => {
  it("Int32 padded to a width, and to the full width", () => {
    fc.assert(
      fc.property(int32Pair, ([width, x, y]) => {
        const t = template(`{n:${width}}`);
        expect(compare(t.encode({ n: x }, "RowKey"), t.encode({ n: y }, "RowKey"))).toBe(compare(x, y));
        const full = template("{n}");
        expect(compare(full.encode({ n: x }, "RowKey"), full.encode({ n: y }, "RowKey"))).toBe(compare(x, y));
      }),
    );
  });

  it("Int64 padded to a width, and to the full width", () => {
    fc.assert(
      fc.property(int64Pair, ([width, x, y]) => {
        const t = template(`{big:${width}}`);
        expect(compare(t.encode({ big: x }, "RowKey"), t.encode({ big: y }, "RowKey"))).toBe(compare(x, y));
        const full = template("{big}");
        expect(compare(full.encode({ big: x }, "RowKey"), full.encode({ big: y }, "RowKey"))).toBe(
          compare(x, y),
        );
      }),
    );
  });

  it("descending integers sort in reverse", () => {
    fc.assert(
      fc.property(int32Pair, int64Pair, ([w32, x, y], [w64, p, q]) => {
        const t32 = template(`{n:${w32}:desc}`);
        expect(compare(t32.encode({ n: x }, "RowKey"), t32.encode({ n: y }, "RowKey"))).toBe(compare(y, x));
        const full32 = template("{n:desc}");
        expect(compare(full32.encode({ n: x }, "RowKey"), full32.encode({ n: y }, "RowKey"))).toBe(
          compare(y, x),
        );
        const t64 = template(`{big:${w64}:desc}`);
        expect(compare(t64.encode({ big: p }, "RowKey"), t64.encode({ big: q }, "RowKey"))).toBe(
          compare(q, p),
        );
        const full64 = template("{big:desc}");
        expect(compare(full64.encode({ big: p }, "RowKey"), full64.encode({ big: q }, "RowKey"))).toBe(
          compare(q, p),
        );
      }),
    );
  });

  it("ISO dates and ticks sort chronologically, inverted ticks newest first", () => {
    const iso = template("{at}");
    const ticks = template("{at:ticks}");
    const desc = template("{at:desc}");
    fc.assert(
      fc.property(dates, dates, (x, y) => {
        const order = compare(x.getTime(), y.getTime());
        expect(compare(iso.encode({ at: x }, "RowKey"), iso.encode({ at: y }, "RowKey"))).toBe(order);
        expect(compare(ticks.encode({ at: x }, "RowKey"), ticks.encode({ at: y }, "RowKey"))).toBe(order);
        expect(compare(desc.encode({ at: x }, "RowKey"), desc.encode({ at: y }, "RowKey"))).toBe(0 - order); // 0 - 0 is +0, unlike -0
        expect(desc.encode({ at: x }, "RowKey")).toHaveLength(19);
      }),
    );
  });

  it("compound keys of numbers and dates sort as tuples", () => {
    const t = template("{a:4}_{at:ticks}");
    const value = fc.record({ a: fc.integer({ min: 0, max: 9999 }), at: dates });
    fc.assert(
      fc.property(value, value, (x, y) => {
        const order = compare(x.a, y.a) || compare(x.at.getTime(), y.at.getTime());
        expect(compare(t.encode(x, "RowKey"), t.encode(y, "RowKey"))).toBe(order);
      }),
    );
  });
});
