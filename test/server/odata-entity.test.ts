import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { readEntityBody } from "../../src/server/odata-entity.js";
import type { WireValue } from "../../src/wire/wire-entity.js";
import { testSeed } from "../support/seeded-random.js";

// readEntityBody types an unannotated number by its JSON text, as the service does, but scans the text
// only when it may hold a whole number written with a fraction or exponent. Whatever the text, the
// types must be those of reading every number's text.
const SEED = testSeed(20261127);

/** The service's type of an unannotated JSON number, from its text alone. */
function typeOfText(text: string): "Int32" | "Double" {
  if (/[.eE]/.test(text)) return "Double";
  const value = Number(text);
  return Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31 ? "Int32" : "Double";
}

/** The type the store gives a wire value read from an unannotated number. */
function typeOfWire(value: WireValue | undefined): string {
  if (typeof value === "number")
    return Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31 ? "Int32" : "Double";
  if (typeof value === "object" && value !== null && "type" in value) return value.type;
  return typeof value;
}

const digits = fc.stringMatching(/^[0-9]{1,3}$/);
const numberText = fc.oneof(
  fc.tuple(fc.constantFrom("", "-"), digits).map(([sign, d]) => `${sign}${Number(d)}`),
  fc
    .tuple(fc.constantFrom("", "-"), digits, fc.stringMatching(/^[0-9]{1,3}$/))
    .map(([sign, d, f]) => `${sign}${Number(d)}.${f}`),
  fc
    .tuple(
      digits,
      fc.constantFrom("", ".0", ".5", ".25"),
      fc.constantFrom("e", "E"),
      fc.constantFrom("", "+", "-"),
      digits,
    )
    .map(([d, f, e, s, x]) => `${Number(d)}${f}${e}${s}${Number(x) % 30}`),
  fc.constantFrom("3000000000", "-2147483648", "2147483648", "-0", "-0.0", "0.000"),
);
// Strings that look like numbers must not change anything.
const stringValue = fc.constantFrom('"1.0"', '"2e3"', '"a 1.0, b"', '"x"', '"0.5"');

describe(`readEntityBody (seed ${SEED})`, () => {
  test("types every unannotated number by its text, with or without the scan", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), numberText, stringValue), { minLength: 1, maxLength: 8 }),
        (members) => {
          const parts = members.map(([isNumber, n, s], i) => `"m${i}":${isNumber ? n : s}`);
          const text = `{"PartitionKey":"p","RowKey":"r",${parts.join(",")}}`;
          const entity = readEntityBody(text, undefined);
          members.forEach(([isNumber, n], i) => {
            if (isNumber) expect(typeOfWire(entity[`m${i}`]), `m${i}: ${n} in ${text}`).toBe(typeOfText(n));
            else expect(typeof entity[`m${i}`]).toBe("string");
          });
        },
      ),
      { seed: SEED, numRuns: 2000 },
    );
  });

  test("keys come from the body, or from the URL and must then agree with the body", () => {
    const body = '{"PartitionKey":"p","RowKey":"r","v":"x"}';
    expect(readEntityBody(body, undefined)).toEqual({ partitionKey: "p", rowKey: "r", v: "x" });
    expect(readEntityBody('{"v":1}', { partitionKey: "a", rowKey: "b" })).toEqual({
      partitionKey: "a",
      rowKey: "b",
      v: 1,
    });
    expect(() => readEntityBody(body, { partitionKey: "p", rowKey: "other" })).toThrow(/differ/);
    expect(() => readEntityBody('{"PartitionKey":"p"}', undefined)).toThrow(/required/);
    expect(() => readEntityBody('{"PartitionKey":1,"RowKey":"r"}', undefined)).toThrow(/must be a string/);
    expect(() => readEntityBody("[1]", undefined)).toThrow(/JSON object/);
    expect(() => readEntityBody("{", undefined)).toThrow(/not valid JSON/);
  });
});
