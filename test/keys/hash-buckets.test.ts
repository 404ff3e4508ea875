import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SchemaError, ValidationError } from "../../src/errors.js";
import { fnv1a32 } from "../../src/keys/fnv1a.js";
import { KeyTemplate } from "../../src/keys/key-template.js";
import { testSeed } from "../support/seeded-random.js";
import { fieldType } from "./fields.js";

/** A PartitionKey template, where hash buckets are allowed. */
function partitionTemplate(source: string): KeyTemplate {
  return KeyTemplate.parse(source, fieldType, "Reading.partitionKey", { allowHash: true });
}

/** FNV-1a 32 written independently of the code under test: BigInt arithmetic modulo 2^32. */
function referenceFnv1a32(text: string): number {
  let hash = 0x811c9dc5n;
  for (const byte of Buffer.from(text, "utf8")) hash = ((hash ^ BigInt(byte)) * 0x01000193n) % 2n ** 32n;
  return Number(hash);
}

describe("hash buckets: the stored format (never changes)", () => {
  it("matches the published FNV-1a 32 test vectors", () => {
    // From the FNV reference test suite (Fowler/Noll/Vo).
    expect(fnv1a32("")).toBe(0x811c9dc5);
    expect(fnv1a32("a")).toBe(0xe40c292c);
    expect(fnv1a32("foobar")).toBe(0xbf9cf968);
  });

  it("hashes UTF-8 bytes (vectors computed with an independent Python implementation)", () => {
    expect(fnv1a32("Zürich")).toBe(0xd7007f20);
    expect(fnv1a32("😀")).toBe(0x33a29608);
    expect(fnv1a32("42")).toBe(0x87e38583);
  });

  it("agrees with a BigInt reference on any string", () => {
    const seed = testSeed(9);
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (text) => {
        expect(fnv1a32(text)).toBe(referenceFnv1a32(text));
      }),
      { seed, numRuns: 300 },
    );
  });

  it("encodes the bucket zero-padded to the width of N-1", () => {
    // 0xbf9cf968 = 3214735720: mod 16 = 8, mod 100 = 20, mod 1000 = 720; 0xe40c292c mod 7 = 5.
    expect(partitionTemplate("r{s:hash:16}").encode({ s: "foobar" }, "PartitionKey")).toBe("r08");
    expect(partitionTemplate("r{s:hash:100}").encode({ s: "foobar" }, "PartitionKey")).toBe("r20");
    expect(partitionTemplate("r{s:hash:1000}").encode({ s: "foobar" }, "PartitionKey")).toBe("r720");
    expect(partitionTemplate("{s:hash:7}").encode({ s: "a" }, "PartitionKey")).toBe("5");
    expect(partitionTemplate("{s:hash:16}").encode({ s: "" }, "PartitionKey")).toBe("05");
  });

  it("hashes non-strings as their unpadded key text", () => {
    // Int32 42 hashes "42" (0x87e38583 mod 16 = 3), 0 hashes "0" (0x350ca8af mod 16 = 15).
    expect(partitionTemplate("{n:hash:16}").encode({ n: 42 }, "PartitionKey")).toBe("03");
    expect(partitionTemplate("{n:hash:16}").encode({ n: 0 }, "PartitionKey")).toBe("15");
    expect(partitionTemplate("{big:hash:16}").encode({ big: 42n }, "PartitionKey")).toBe("03");
    // A Guid hashes in lower case (0x0fe8fa29 mod 1000 = 633), whatever case it is given in.
    const guid = partitionTemplate("{id:hash:1000}");
    expect(guid.encode({ id: "0A1B2C3D-0000-4000-8000-00000000ABCD" }, "PartitionKey")).toBe("633");
    // A DateTime hashes its toISOString() (0xf5d36a19 mod 16 = 9).
    const at = new Date("2024-01-02T03:04:05.678Z");
    expect(partitionTemplate("{at:hash:16}").encode({ at }, "PartitionKey")).toBe("09");
  });

  it("decodes a bucket key without a value for the hashed field", () => {
    const t = partitionTemplate("{department}_{s:hash:16}");
    expect(t.decode("Sales_08")).toEqual({ department: "Sales" });
    expect(t.decode("Sales_16")).toBeUndefined();
    expect(t.decode("Sales_x8")).toBeUndefined();
    expect(t.hashed).toEqual({ field: "s", buckets: 16 });
  });

  it("builds one prefix per bucket, and a normal prefix when the hashed field is given", () => {
    const t = partitionTemplate("{department}_{s:hash:12}");
    const { prefixes, complete } = t.bucketPrefixes({ department: "Sales" }, "PartitionKey");
    expect(complete).toBe(true);
    expect(prefixes).toEqual(Array.from({ length: 12 }, (_, i) => `Sales_${String(i).padStart(2, "0")}`));
    // 0xbf9cf968 = 3214735720, mod 12 = 4.
    expect(t.encodePrefix({ department: "Sales", s: "foobar" }, "PartitionKey")).toEqual({
      prefix: "Sales_04",
      complete: true,
    });
  });

  it("rejects values the field's plain codec rejects", () => {
    const t = partitionTemplate("{n:hash:16}");
    expect(() => t.encode({ n: -1 }, "PartitionKey")).toThrow(ValidationError);
    expect(() => t.encode({ n: "1" }, "PartitionKey")).toThrow(ValidationError);
  });
});

describe("hash buckets: schema mistakes", () => {
  it("are allowed only where the template allows them (an entity's PartitionKey)", () => {
    expect(() => KeyTemplate.parse("{s:hash:16}", fieldType, "Employee.rowKey")).toThrow(
      /allowed only in an entity's PartitionKey/,
    );
  });

  it("need 2..1024 buckets", () => {
    for (const source of ["{s:hash:1}", "{s:hash:0}", "{s:hash:1025}", "{s:hash:99999999999999999999}"]) {
      expect(() => partitionTemplate(source), source).toThrow(SchemaError);
    }
    expect(() => partitionTemplate("{s:hash:x}")).toThrow(/unknown format/);
    expect(partitionTemplate("{s:hash:2}").hashed?.buckets).toBe(2);
    expect(partitionTemplate("{s:hash:1024}").encode({ s: "foobar" }, "PartitionKey")).toHaveLength(4);
  });
});
