import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../src/errors.js";
import { MAX_TICKS, ticksToDate } from "../../src/keys/ticks.js";
import { FORBIDDEN_KEY_CHARACTERS } from "../../src/util/service-limits.js";
import { MAX_DATE, MIN_DATE, template } from "./fields.js";

const dates = fc.date({ min: MIN_DATE, max: MAX_DATE, noInvalidDate: true });

/** Strings the service accepts in keys, without `exclude`. */
function keyText(exclude: string, maxLength = 20): fc.Arbitrary<string> {
  return fc
    .string({ unit: "binary", maxLength })
    .filter((s) => !FORBIDDEN_KEY_CHARACTERS.test(s) && (exclude === "" || !s.includes(exclude)));
}

describe("KeyTemplate.decode", () => {
  it("decodes the design-guide keys", () => {
    expect(template("empid_{employeeId:6}").decode("empid_000223")).toEqual({ employeeId: 223 });
    expect(template("email_{email}").decode("email_jonesj@contoso.com")).toEqual({
      email: "jonesj@contoso.com",
    });
    expect(template("{at:desc}").decode("2520611999999999999")).toEqual({
      at: new Date("2012-07-01T00:00:00Z"),
    });
  });

  it("returns numbers for Int32, bigints for Int64, Dates for DateTime", () => {
    const t = template("{n:3}-{big:5:desc}-{at:ticks}-{id}");
    const decoded = t.decode("042-99989-0634766976000000000-0f8fad5b-d9cb-469f-a165-70867728950e");
    expect(decoded).toEqual({
      n: 42,
      big: 10n,
      at: new Date("2012-07-01T00:00:00Z"),
      id: "0f8fad5b-d9cb-469f-a165-70867728950e",
    });
  });

  it("splits a string at the first occurrence of the literal after it", () => {
    expect(template("{department}_{email}").decode("Sales_a_b")).toEqual({
      department: "Sales",
      email: "a_b",
    });
    expect(template("{department}_{employeeId:2}").decode("_07")).toEqual({ department: "", employeeId: 7 });
  });

  it("truncates sub-millisecond ticks written by .NET", () => {
    // DateTime(2012, 7, 1, 0, 0, 0, 123).AddTicks(4567): 634766976001234567 ticks.
    expect(template("{at:ticks}").decode("0634766976001234567")).toEqual({
      at: new Date("2012-07-01T00:00:00.123Z"),
    });
  });

  it("decodes any 19-digit tick text like the BigInt definition, or rejects it above MAX_TICKS", () => {
    const ticks = template("{at:ticks}");
    const desc = template("{at:desc}");
    const digits = fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: 19, maxLength: 19 });
    const nearMax = fc
      .bigInt({ min: MAX_TICKS - 10n ** 12n, max: MAX_TICKS + 10n ** 12n })
      .map((t) => t.toString().padStart(19, "0"));
    fc.assert(
      fc.property(fc.oneof(digits, nearMax), (text) => {
        const t = BigInt(text);
        const valid = t <= MAX_TICKS;
        expect(ticks.decode(text)).toEqual(valid ? { at: ticksToDate(t) } : undefined);
        expect(desc.decode(text)).toEqual(valid ? { at: ticksToDate(MAX_TICKS - t) } : undefined);
      }),
    );
  });

  it("returns undefined for keys that do not match the template", () => {
    const id = template("empid_{employeeId:6}");
    for (const key of [
      "",
      "empid_",
      "empid_00022",
      "empid_0002233",
      "EMPID_000223",
      "empid_00022x",
      "empid_+00223",
    ]) {
      expect(id.decode(key), key).toBeUndefined();
    }
    expect(template("{n}").decode("9999999999"), "over the Int32 maximum").toBeUndefined();
    expect(template("{n}").decode("2147483647")).toEqual({ n: 2147483647 });
    expect(template("{big}").decode("9999999999999999999"), "over the Int64 maximum").toBeUndefined();
    expect(template("{at:ticks}").decode("3155378976000000000"), "over MAX_TICKS").toBeUndefined();
    expect(template("{at:desc}").decode("3155378976000000000"), "over MAX_TICKS").toBeUndefined();
    expect(template("{at}").decode("2012-07-01T00:00:00Z")).toBeUndefined();
    expect(template("{at}").decode("2012-13-01T00:00:00.000Z")).toBeUndefined();
    expect(template("{at}").decode("2012-02-30T00:00:00.000Z")).toBeUndefined();
    expect(template("{at}").decode("2012-07-01 00:00:00.000Z")).toBeUndefined();
    const compound = template("{department}_{employeeId:6}");
    expect(compound.decode("Sales000223")).toBeUndefined();
    expect(compound.decode("Sales_000223_")).toBeUndefined();
    expect(compound.decode("Sales_00-223")).toBeUndefined();
    expect(template("{department}_x").decode("a_y")).toBeUndefined();
  });

  it("round-trips every format", () => {
    const cases: [string, fc.Arbitrary<unknown>][] = [
      ["{n:1}", fc.integer({ min: 0, max: 9 })],
      ["{n:6}", fc.integer({ min: 0, max: 999999 })],
      ["{n:6:desc}", fc.integer({ min: 0, max: 999999 })],
      ["{n}", fc.integer({ min: 0, max: 2147483647 })],
      ["{n:desc}", fc.integer({ min: 0, max: 2147483647 })],
      ["{big:12}", fc.bigInt({ min: 0n, max: 10n ** 12n - 1n })],
      ["{big:12:desc}", fc.bigInt({ min: 0n, max: 10n ** 12n - 1n })],
      ["{big}", fc.bigInt({ min: 0n, max: 2n ** 63n - 1n })],
      ["{big:desc}", fc.bigInt({ min: 0n, max: 2n ** 63n - 1n })],
      ["{at}", dates],
      ["{at:ticks}", dates],
      ["{at:desc}", dates],
      ["{email}", keyText("")],
      ["{id}", fc.uuid()],
    ];
    for (const [source, values] of cases) {
      const t = template(source);
      const field = t.fields[0]!;
      fc.assert(
        fc.property(values, (value) => {
          expect(t.decode(t.encode({ [field]: value }, "RowKey")), source).toEqual({ [field]: value });
        }),
      );
    }
  });

  it("round-trips an Int64 given as a number into a bigint", () => {
    const t = template("{big:10}");
    expect(t.decode(t.encode({ big: 123 }, "RowKey"))).toEqual({ big: 123n });
  });

  it("round-trips compound templates with strings", () => {
    const t = template("pre:{department}_{employeeId:6}{lastName}::{at:desc}.{email}");
    const value = fc.record({
      department: keyText("_"),
      employeeId: fc.integer({ min: 0, max: 999999 }),
      lastName: keyText(":"),
      at: dates,
      email: keyText(""),
    });
    fc.assert(
      fc.property(value, (v) => {
        expect(t.decode(t.encode(v, "RowKey"))).toEqual(v);
      }),
    );
  });

  it("either rejects a value that runs into its separator or round-trips it", () => {
    const t = template("{s}aa{t}");
    const text = fc.string({ unit: fc.constantFrom("a", "x"), maxLength: 6 });
    fc.assert(
      fc.property(text, text, (s, u) => {
        const ambiguous = `${s}aa`.indexOf("aa") !== s.length;
        let key: string | undefined;
        try {
          key = t.encode({ s, t: u }, "RowKey");
        } catch (error) {
          expect(error).toBeInstanceOf(ValidationError);
          expect((error as ValidationError).rule).toBe("key-separator");
        }
        expect(key === undefined).toBe(ambiguous);
        if (key !== undefined) expect(t.decode(key)).toEqual({ s, t: u });
      }),
    );
  });

  it("decodes only keys that encode back to themselves", () => {
    const t = template("{n:3}_{department}-{at}");
    const key = fc.oneof(
      fc.string({ unit: fc.constantFrom("0", "9", "_", "-", "a"), maxLength: 12 }),
      fc
        .tuple(fc.integer({ min: 0, max: 1200 }), keyText(""), dates)
        .map(([n, d, at]) => `${String(n).padStart(3, "0")}_${d}-${at.toISOString()}`),
    );
    fc.assert(
      fc.property(key, (k) => {
        const decoded = t.decode(k);
        if (decoded !== undefined) expect(t.encode(decoded, "RowKey")).toBe(k);
      }),
    );
  });
});
