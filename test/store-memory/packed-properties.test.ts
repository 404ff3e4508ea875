import fc from "fast-check";
import { describe, expect, test } from "vitest";
import type { EdmValue } from "../../src/store/memory/edm-value.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import {
  mergePacked,
  type PackedProperties,
  PackedPropertyMap,
  PropertyShape,
  packValue,
  unpackValue,
} from "../../src/store/memory/property-shape.js";
import { parseWireEntity } from "../../src/store/memory/typed-entity.js";
import { wireToEdm } from "../../src/store/memory/wire-values.js";
import type { WireValue } from "../../src/store/table-store.js";

const pack = (entries: [string, EdmValue][]): PackedProperties => {
  let shape = PropertyShape.EMPTY;
  for (const [name, v] of entries) shape = shape.with(name, v.type);
  return { shape, values: entries.map(([, v]) => packValue(v)) };
};

describe("packed properties (the memory store's compact rows)", () => {
  test("every EDM value survives packing, including Int64 and DateTime beyond 2^53", () => {
    const values: EdmValue[] = [
      { type: "Int64", value: 9_223_372_036_854_775_807n },
      { type: "Int64", value: -9_223_372_036_854_775_808n },
      { type: "Int64", value: 9_007_199_254_740_993n },
      { type: "Int64", value: -5n },
      { type: "DateTime", value: 17_040_672_000_001_234n }, // sub-millisecond ticks
      { type: "DateTime", value: 17_040_672_000_000_000n },
      { type: "DateTime", value: -116_444_736_000_000_000n }, // 1601-01-01
      { type: "DateTime", value: 2_534_023_007_999_999_999n }, // 9999-12-31T23:59:59.9999999
      { type: "Double", value: -0 },
      { type: "Double", value: Number.NaN },
      { type: "Int32", value: -2_147_483_648 },
      { type: "Boolean", value: false },
      { type: "String", value: "" },
      { type: "Guid", value: "0f8fad5b-d9cb-469f-a165-70867728950e" },
      { type: "Binary", value: new Uint8Array([0, 255]) },
    ];
    for (const v of values) expect(unpackValue(v.type, packValue(v))).toEqual(v);
  });

  test("rows with the same names and types share one interned shape", () => {
    const a = pack([
      ["x", { type: "Int32", value: 1 }],
      ["y", { type: "String", value: "a" }],
    ]);
    const b = pack([
      ["x", { type: "Int32", value: 2 }],
      ["y", { type: "String", value: "b" }],
    ]);
    const c = pack([
      ["x", { type: "Double", value: 2 }],
      ["y", { type: "String", value: "b" }],
    ]);
    expect(a.shape).toBe(b.shape);
    expect(c.shape).not.toBe(a.shape);
  });

  test("a merge keeps the order and result of merging two Maps", () => {
    const name = fc.constantFrom("a", "b", "c", "d", "__proto__", "constructor");
    const value: fc.Arbitrary<EdmValue> = fc.oneof(
      fc.integer().map((n) => ({ type: "Int32" as const, value: n })),
      fc.string().map((s) => ({ type: "String" as const, value: s })),
      fc
        .bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })
        .map((n) => ({ type: "Int64" as const, value: n })),
    );
    const props = fc.uniqueArray(fc.tuple(name, value), { selector: ([n]) => n, maxLength: 6 });
    fc.assert(
      fc.property(props, props, (existing, written) => {
        const merged = mergePacked(pack(existing), pack(written));
        const expected = [...new Map([...existing, ...written])];
        expect([...new PackedPropertyMap(merged)]).toEqual(expected);
      }),
    );
  });

  test("a merge through the store keeps existing properties in place and appends new ones", async () => {
    const store = new MemoryStore();
    await store.createTable("Merged");
    await store.insert("Merged", { partitionKey: "p", rowKey: "r", a: 1, b: "x", c: true });
    await store.upsert("Merged", { partitionKey: "p", rowKey: "r", d: 2.5, b: "y" }, "merge");
    const got = await store.getEntity("Merged", "p", "r");
    const { partitionKey, rowKey, etag, timestamp, ...rest } = got ?? {};
    expect(Object.entries(rest)).toEqual([
      ["a", 1],
      ["b", "y"],
      ["c", true],
      ["d", 2.5],
    ]);
  });

  test("the bulk fast path stores what the general value conversion stores", () => {
    const raw: fc.Arbitrary<WireValue> = fc.oneof(
      fc.string({ maxLength: 5 }),
      fc.constant("x".repeat(32_769)),
      fc.boolean(),
      fc.double(),
      fc.integer(),
      fc.constantFrom(-0, 2 ** 31, -(2 ** 31), 2 ** 31 - 1, -(2 ** 31) - 1),
      fc.date({ noInvalidDate: false }),
      fc.constantFrom(
        new Date(Date.UTC(1601, 0, 1)),
        new Date(Date.UTC(1601, 0, 1) - 1),
        new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 999)),
      ),
      fc.double().map((value) => ({ type: "Double" as const, value })),
      fc.stringMatching(/^[+-]?\d{1,17}$/).map((value) => ({ type: "Int64" as const, value })),
      fc.constantFrom({ type: "Int64" as const, value: "-0" }, { type: "Int64" as const, value: "+007" }),
    );
    fc.assert(
      fc.property(raw, (value) => {
        let expected: unknown;
        try {
          const edm = wireToEdm("p", value);
          expected = edm === undefined ? undefined : [edm.type, packValue(edm)];
        } catch (error) {
          expected = (error as Error).message;
        }
        let got: unknown;
        try {
          const parsed = parseWireEntity({ partitionKey: "a", rowKey: "b", p: value });
          got = parsed.values.length === 0 ? undefined : [parsed.shape.types[0], parsed.values[0]];
        } catch (error) {
          got = (error as Error).message;
        }
        expect(got).toEqual(expected);
      }),
      { numRuns: 1000 },
    );
  });
});
