import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { estimateActionBytes } from "../../src/repository/payload-size.js";

describe("estimateActionBytes", () => {
  it("counts names, keys and strings in UTF-8 bytes, as Buffer.byteLength does (lone surrogates as U+FFFD)", () => {
    // Strings of any UTF-16 units, so surrogate pairs and lone halves both occur.
    const text = fc.string({ unit: "binary", maxLength: 80 });
    fc.assert(
      fc.property(text, text, text, (pk, name, value) => {
        const utf8 = (s: string) => Buffer.byteLength(s, "utf8");
        // An entity with one string property: 600 + 2 + (name + 4 + the JSON string's bytes).
        let escapes = 0;
        for (const c of value) {
          const code = c.charCodeAt(0);
          if (code === 0x22 || code === 0x5c) escapes += 1;
          else if (code < 0x20) escapes += 5;
        }
        const entity = { [name]: value };
        expect(estimateActionBytes({ kind: "insert", entity: entity as never })).toBe(
          600 + 2 + utf8(name) + 4 + 2 + utf8(value) + escapes,
        );
        expect(estimateActionBytes({ kind: "delete", partitionKey: pk, rowKey: name, ifMatch: "*" })).toBe(
          600 + utf8(pk) + utf8(name),
        );
      }),
      { numRuns: 500 },
    );
  });
});
