import { describe, expect, it } from "vitest";
import { ValidationError } from "../../src/errors.js";
import { template } from "./fields.js";

/** Runs `fn`, expecting a ValidationError with this rule and field whose message names the field. */
function expectValidationError(fn: () => unknown, rule: string, field: string): ValidationError {
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
  expect(error.message).toContain(field);
  expect(error.message).toContain("Employee.rowKey");
  return error;
}

describe("KeyTemplate.encode: design-guide keys", () => {
  it("pads an Int32 to the given width", () => {
    expect(template("empid_{employeeId:6}").encode({ employeeId: 223 }, "RowKey")).toBe("empid_000223");
  });

  it("puts a string in as itself", () => {
    expect(template("email_{email}").encode({ email: "jonesj@contoso.com" }, "RowKey")).toBe(
      "email_jonesj@contoso.com",
    );
  });

  it('writes inverted ticks for {at:desc}, as (DateTime.MaxValue.Ticks - t.Ticks).ToString("d19")', () => {
    // 2012-07-01 is 734,684 days after 0001-01-01 (see ticks.test.ts): 734684 × 864,000,000,000 ticks.
    const ticks = 734684n * 864_000_000_000n;
    const expected = (3155378975999999999n - ticks).toString().padStart(19, "0");
    const key = template("{at:desc}").encode({ at: new Date("2012-07-01T00:00:00Z") }, "RowKey");
    expect(key).toBe(expected);
    expect(key).toBe("2520611999999999999");
    expect(key).toHaveLength(19);
  });

  it("writes ticks for {at:ticks} and ISO 8601 with milliseconds for {at}", () => {
    const at = new Date("2012-07-01T00:00:00.5Z");
    expect(template("{at:ticks}").encode({ at }, "RowKey")).toBe("0634766976005000000");
    expect(template("{at}").encode({ at }, "RowKey")).toBe("2012-07-01T00:00:00.500Z");
  });

  it("pads {n} to the type's full width: Int32 10 digits, Int64 19", () => {
    expect(template("{n}").encode({ n: 42 }, "RowKey")).toBe("0000000042");
    expect(template("{big}").encode({ big: 42n }, "RowKey")).toBe("0000000000000000042");
    expect(template("{big}").encode({ big: 42 }, "RowKey")).toBe("0000000000000000042");
    expect(template("{n}").encode({ n: 2147483647 }, "RowKey")).toBe("2147483647");
    expect(template("{big}").encode({ big: 2n ** 63n - 1n }, "RowKey")).toBe("9223372036854775807");
  });

  it("writes (10^width - 1) - n for descending integers", () => {
    expect(template("{n:6:desc}").encode({ n: 223 }, "RowKey")).toBe("999776");
    expect(template("{n:desc}").encode({ n: 0 }, "RowKey")).toBe("9999999999");
    expect(template("{big:desc}").encode({ big: 1n }, "RowKey")).toBe("9999999999999999998");
  });

  it("builds compound keys and constant keys", () => {
    const t = template("{department}_{employeeId:6}");
    expect(t.encode({ department: "Sales", employeeId: 7, other: "ignored" }, "RowKey")).toBe("Sales_000007");
    expect(template("SINGLETON").encode({}, "RowKey")).toBe("SINGLETON");
    expect(template("").encode({}, "PartitionKey")).toBe("");
  });

  it("exposes the source, fields and literal prefix", () => {
    const t = template("empid_{employeeId:6}_{at:desc}");
    expect(t.source).toBe("empid_{employeeId:6}_{at:desc}");
    expect(t.fields).toEqual(["employeeId", "at"]);
    expect(t.literalPrefix).toBe("empid_");
    expect(template("{department}").literalPrefix).toBe("");
    expect(template("CONST").literalPrefix).toBe("CONST");
  });
});

describe("KeyTemplate.encode: values that cannot be encoded", () => {
  const id = template("empid_{employeeId:6}");

  it("key-field-missing for undefined, null or absent values", () => {
    expectValidationError(() => id.encode({}, "RowKey"), "key-field-missing", "employeeId");
    expectValidationError(
      () => id.encode({ employeeId: undefined }, "RowKey"),
      "key-field-missing",
      "employeeId",
    );
    expectValidationError(() => id.encode({ employeeId: null }, "RowKey"), "key-field-missing", "employeeId");
  });

  it("key-field-type for the wrong JS type", () => {
    expectValidationError(() => id.encode({ employeeId: "223" }, "RowKey"), "key-field-type", "employeeId");
    expectValidationError(() => id.encode({ employeeId: 1.5 }, "RowKey"), "key-field-type", "employeeId");
    expectValidationError(
      () => id.encode({ employeeId: Number.NaN }, "RowKey"),
      "key-field-type",
      "employeeId",
    );
    expectValidationError(() => id.encode({ employeeId: 223n }, "RowKey"), "key-field-type", "employeeId");
    expectValidationError(
      () => template("{big}").encode({ big: 2 ** 60 }, "RowKey"),
      "key-field-type",
      "big",
    );
    expectValidationError(() => template("{big}").encode({ big: "1" }, "RowKey"), "key-field-type", "big");
    expectValidationError(
      () => template("{at}").encode({ at: "2012-07-01" }, "RowKey"),
      "key-field-type",
      "at",
    );
    expectValidationError(
      () => template("{at:ticks}").encode({ at: new Date(Number.NaN) }, "RowKey"),
      "key-field-type",
      "at",
    );
    expectValidationError(
      () => template("{email}").encode({ email: 5 }, "RowKey"),
      "key-field-type",
      "email",
    );
    expectValidationError(() => template("{id}").encode({ id: {} }, "RowKey"), "key-field-type", "id");
  });

  it("key-negative for negative integers", () => {
    expectValidationError(() => id.encode({ employeeId: -1 }, "RowKey"), "key-negative", "employeeId");
    expectValidationError(() => template("{big:desc}").encode({ big: -5n }, "RowKey"), "key-negative", "big");
  });

  it("key-too-wide for integers that do not fit the width", () => {
    expect(id.encode({ employeeId: 999999 }, "RowKey")).toBe("empid_999999");
    const error = expectValidationError(
      () => id.encode({ employeeId: 1000000 }, "RowKey"),
      "key-too-wide",
      "employeeId",
    );
    expect(error.message).toContain("6 digits");
    expectValidationError(
      () => template("{big:3:desc}").encode({ big: 1000n }, "RowKey"),
      "key-too-wide",
      "big",
    );
  });

  it("key-out-of-range for values outside the column type's range", () => {
    expectValidationError(() => template("{n}").encode({ n: 2147483648 }, "RowKey"), "key-out-of-range", "n");
    expectValidationError(
      () => template("{big}").encode({ big: 2n ** 63n }, "RowKey"),
      "key-out-of-range",
      "big",
    );
    expectValidationError(
      () => template("{at}").encode({ at: new Date("1600-12-31T23:59:59.999Z") }, "RowKey"),
      "key-out-of-range",
      "at",
    );
    expectValidationError(
      () => template("{at:desc}").encode({ at: new Date("+010000-01-01T00:00:00Z") }, "RowKey"),
      "key-out-of-range",
      "at",
    );
  });

  it("key-separator for a string holding the literal that follows it", () => {
    const t = template("{department}_{employeeId:6}");
    const error = expectValidationError(
      () => t.encode({ department: "Sales_EU", employeeId: 1 }, "RowKey"),
      "key-separator",
      "department",
    );
    expect(error.message).toContain("'_'");
    // The last string takes the rest of the key, so it may hold anything.
    expect(template("{department}_{email}").encode({ department: "a", email: "b_c" }, "RowKey")).toBe(
      "a_b_c",
    );
  });

  it("key-separator when the value runs into an overlapping separator", () => {
    const t = template("{s}aa{t}");
    // "xa" + "aa" = "xaaa": the first "aa" starts inside the value, so decoding would give "x".
    expectValidationError(() => t.encode({ s: "xa", t: "y" }, "RowKey"), "key-separator", "s");
    // "xa" + "ab" = "xaab": the first "ab" is the separator itself, so this one is fine.
    expect(template("{s}ab{t}").encode({ s: "xa", t: "y" }, "RowKey")).toBe("xaaby");
  });

  it("key-characters for forbidden characters in a string value", () => {
    for (const bad of ["a/b", "a\\b", "a#b", "a?b", "a\u0000b", "a\tb", "a\u007fb", "a\u009fb"]) {
      expectValidationError(
        () => template("email_{email}").encode({ email: bad }, "RowKey"),
        "key-characters",
        "email",
      );
    }
  });

  it("key-size when the key exceeds 1 KiB, naming the longest string part", () => {
    const t = template("{department}_{email}");
    expect(t.encode({ department: "d", email: "x".repeat(510) }, "RowKey")).toHaveLength(512);
    const error = expectValidationError(
      () => t.encode({ department: "d", email: "x".repeat(511) }, "RowKey"),
      "key-size",
      "email",
    );
    expect(error.message).toContain("RowKey");
    expectValidationError(
      () => template("{email}").encode({ email: "x".repeat(513) }, "PartitionKey"),
      "key-size",
      "email",
    );
  });
});
