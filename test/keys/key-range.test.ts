import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../src/errors.js";
import type { KeyRange } from "../../src/keys/key-range.js";
import { successor } from "../../src/keys/key-range.js";
import { template } from "./fields.js";

function inRange(key: string, range: KeyRange): boolean {
  return range.ge <= key && (range.lt === undefined || key < range.lt);
}

function expectValidationError(fn: () => unknown, rule: string, field: string, ...mentions: string[]): void {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(ValidationError);
  const error = caught as ValidationError;
  expect(error.rule).toBe(rule);
  expect(error.field).toBe(field);
  for (const mention of [field, ...mentions]) expect(error.message).toContain(mention);
}

describe("successor", () => {
  it("increments the last UTF-16 unit, dropping trailing U+FFFF", () => {
    expect(successor("empid_000123")).toBe("empid_000124");
    expect(successor("a_")).toBe("a`");
    expect(successor("a\uffff\uffff")).toBe("b");
    expect(successor("")).toBeUndefined();
    expect(successor("\uffff")).toBeUndefined();
  });
});

describe("KeyTemplate.encodePrefix", () => {
  const t = template("{department}_{employeeId:6}_{at:desc}");

  it("encodes the leading fields and the literal after the last one", () => {
    expect(t.encodePrefix({}, "RowKey")).toEqual({ prefix: "", complete: false });
    expect(t.encodePrefix({ department: "x" }, "RowKey")).toEqual({ prefix: "x_", complete: false });
    expect(t.encodePrefix({ department: "x", employeeId: 7 }, "RowKey")).toEqual({
      prefix: "x_000007_",
      complete: false,
    });
    const at = new Date("2012-07-01T00:00:00Z");
    expect(t.encodePrefix({ department: "x", employeeId: 7, at }, "RowKey")).toEqual({
      prefix: "x_000007_2520611999999999999",
      complete: true,
    });
    expect(template("empid_{employeeId:6}").encodePrefix({}, "RowKey")).toEqual({
      prefix: "empid_",
      complete: false,
    });
    expect(template("CONST").encodePrefix({}, "RowKey")).toEqual({ prefix: "CONST", complete: true });
  });

  it("treats undefined and null as absent", () => {
    expect(t.encodePrefix({ department: "x", employeeId: undefined, at: null }, "RowKey").prefix).toBe("x_");
  });

  it("key-prefix-gap when a field follows a missing one", () => {
    expectValidationError(
      () => t.encodePrefix({ employeeId: 7 }, "RowKey"),
      "key-prefix-gap",
      "employeeId",
      "department",
    );
    expectValidationError(
      () => t.encodePrefix({ department: "x", at: new Date() }, "RowKey"),
      "key-prefix-gap",
      "at",
      "employeeId",
    );
  });

  it("key-field-unknown for fields the template does not have", () => {
    expectValidationError(
      () => t.encodePrefix({ lastName: "Jones" }, "RowKey"),
      "key-field-unknown",
      "lastName",
    );
  });

  it("validates the values it encodes", () => {
    expectValidationError(
      () => t.encodePrefix({ department: "a_b" }, "RowKey"),
      "key-separator",
      "department",
    );
    expectValidationError(
      () => t.encodePrefix({ department: "a/b" }, "RowKey"),
      "key-characters",
      "department",
    );
    expectValidationError(
      () => t.encodePrefix({ department: "x", employeeId: -3 }, "RowKey"),
      "key-negative",
      "employeeId",
    );
    expectValidationError(() => t.encodePrefix({ department: 5 }, "RowKey"), "key-field-type", "department");
    expectValidationError(
      () => t.encodePrefix({ department: "x".repeat(512) }, "RowKey"),
      "key-size",
      "department",
    );
  });
});

describe("KeyTemplate.prefixRange and betweenRange", () => {
  it("give the design guide's compound-key range", () => {
    const t = template("empid_{employeeId:6}_{at:ticks}");
    expect(t.prefixRange({ employeeId: 123 })).toEqual({ ge: "empid_000123_", lt: "empid_000123`" });
    expect(t.prefixRange({})).toEqual({ ge: "empid_", lt: "empid`" });
    expect(t.betweenRange({ employeeId: 100 }, { employeeId: 199 })).toEqual({
      ge: "empid_000100_",
      lt: "empid_000199`",
    });
  });

  it("accept bounds in either order, so descending formats work", () => {
    const t = template("{n:6:desc}");
    const range = { ge: "999800", lt: "99989:" };
    expect(t.betweenRange({ n: 100 }, { n: 199 })).toEqual(range);
    expect(t.betweenRange({ n: 199 }, { n: 100 })).toEqual(range);
  });

  it("leave an end open for an empty bound", () => {
    const t = template("{a:4}_{n:3}");
    expect(t.betweenRange({ a: 3 }, {})).toEqual({ ge: "0003_" });
    expect(t.betweenRange({}, { a: 3 })).toEqual({ ge: "", lt: "0003`" });
    expect(t.prefixRange({})).toEqual({ ge: "" });
  });

  it("run from a complete bound to the end of a partial bound it extends", () => {
    const t = template("{a:4}_{n:3}");
    expect(t.betweenRange({ a: 1, n: 5 }, { a: 1 })).toEqual({ ge: "0001_005", lt: "0001`" });
    expect(t.betweenRange({ a: 1 }, { a: 1, n: 5 })).toEqual({ ge: "0001_", lt: "0001_006" });
  });

  it("report bad bounds as ValidationError", () => {
    const t = template("{a:4}_{n:3}");
    expectValidationError(() => t.betweenRange({ n: 1 }, { a: 1 }), "key-prefix-gap", "n", "a");
    expectValidationError(() => t.prefixRange({ zzz: 1 }), "key-field-unknown", "zzz");
  });
});

/** A compound template of fixed-width components, with how each component compares in key order. */
interface Case {
  source: string;
  fields: string[];
  component: fc.Arbitrary<unknown>[];
  compare: ((x: unknown, y: unknown) => number)[];
}

const smallInt = fc.integer({ min: 0, max: 6 });
const smallDate = fc.integer({ min: 0, max: 6 }).map((i) => new Date(Date.UTC(2024, 0, 1) + i * 997));
const asc = (x: unknown, y: unknown): number =>
  (x as number) < (y as number) ? -1 : (x as number) > (y as number) ? 1 : 0;
const ascDate = (x: unknown, y: unknown): number => asc((x as Date).getTime(), (y as Date).getTime());
const desc = (x: unknown, y: unknown): number => -asc(x, y);

const CASES: Case[] = [
  { source: "{a:4}_{n:3}", fields: ["a", "n"], component: [smallInt, smallInt], compare: [asc, asc] },
  {
    source: "e_{a:2}_{at:ticks}",
    fields: ["a", "at"],
    component: [smallInt, smallDate],
    compare: [asc, ascDate],
  },
  {
    source: "{a:2:desc}{at}{n}",
    fields: ["a", "at", "n"],
    component: [smallInt, smallDate, smallInt],
    compare: [desc, ascDate, asc],
  },
  {
    source: "{at:desc}|{n:3:desc}",
    fields: ["at", "n"],
    component: [smallDate, smallInt],
    compare: [(x, y) => -ascDate(x, y), desc],
  },
];

function arbitraries(c: Case) {
  const tuple = fc.tuple(...c.component) as fc.Arbitrary<unknown[]>;
  const bound = fc.tuple(tuple, fc.integer({ min: 0, max: c.fields.length })).map(([v, n]) => v.slice(0, n));
  return { tuples: fc.array(tuple, { minLength: 1, maxLength: 40 }), bound };
}

function toRecord(c: Case, tuple: unknown[]): Record<string, unknown> {
  return Object.fromEntries(tuple.map((v, i) => [c.fields[i], v]));
}

/** Compares a complete tuple with the leading components of a (possibly partial) bound, in key order. */
function comparePrefix(c: Case, v: unknown[], bound: unknown[]): number {
  for (let i = 0; i < bound.length; i++) {
    const order = c.compare[i]!(v[i], bound[i]);
    if (order !== 0) return order;
  }
  return 0;
}

describe("KeyTemplate ranges hold exactly the keys whose values lie in range", () => {
  for (const c of CASES) {
    const t = template(c.source);
    const { tuples, bound } = arbitraries(c);

    it(`prefixRange on ${c.source}`, () => {
      fc.assert(
        fc.property(tuples, bound, (values, prefix) => {
          const range = t.prefixRange(toRecord(c, prefix));
          for (const v of values) {
            expect(inRange(t.encode(toRecord(c, v), "RowKey"), range)).toBe(
              comparePrefix(c, v, prefix) === 0,
            );
          }
        }),
      );
    });

    it(`betweenRange on ${c.source}`, () => {
      fc.assert(
        fc.property(tuples, bound, bound, (values, from, to) => {
          const range = t.betweenRange(toRecord(c, from), toRecord(c, to));
          // Nested bounds (one extends the other) keep their roles; otherwise the lower bound comes first.
          const shorter = Math.min(from.length, to.length);
          const nested = comparePrefix(c, from, to.slice(0, shorter)) === 0;
          const swap = !nested && comparePrefix(c, from, to.slice(0, shorter)) > 0;
          const [lo, hi] = swap ? [to, from] : [from, to];
          for (const v of values) {
            const expected = comparePrefix(c, v, lo) >= 0 && comparePrefix(c, v, hi) <= 0;
            expect(inRange(t.encode(toRecord(c, v), "RowKey"), range)).toBe(expected);
          }
        }),
      );
    });
  }

  it("prefixRange on a compound key of strings selects exactly the leading string", () => {
    const t = template("{department}_{email}");
    const text = (maxLength: number, units: string[]) =>
      fc.string({ unit: fc.constantFrom(...units), maxLength });
    const value = fc.record({ department: text(3, ["a", "0", "~"]), email: text(3, ["a", "_", "0"]) });
    fc.assert(
      fc.property(
        fc.array(value, { maxLength: 30 }),
        text(3, ["a", "0", "~"]),
        text(2, ["a", "_"]),
        (values, d, e) => {
          const byDepartment = t.prefixRange({ department: d });
          const byBoth = t.prefixRange({ department: d, email: e });
          for (const v of values) {
            const key = t.encode(v, "RowKey");
            expect(inRange(key, byDepartment)).toBe(v.department === d);
            // A trailing string matches as a prefix, like any prefix.
            expect(inRange(key, byBoth)).toBe(v.department === d && v.email.startsWith(e));
          }
        },
      ),
    );
  });
});
