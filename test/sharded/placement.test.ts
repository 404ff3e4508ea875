import { describe, expect, it } from "vitest";
import { partitionRangeOf, singlePartitionOf } from "../../src/store/sharded/filter-partition.js";
import { jumpConsistentHash, stableHash64 } from "../../src/store/sharded/partition-hash.js";
import { placeOf, withShard } from "../../src/store/sharded/shard-map.js";

describe("placement (pure)", () => {
  it("moves keys only to the added bucket, about 1/n of them", () => {
    const keys = Array.from({ length: 4000 }, (_, i) => stableHash64(`t\u0000k${i}`));
    for (const n of [2, 3, 4, 7]) {
      let moved = 0;
      for (const key of keys) {
        const before = jumpConsistentHash(key, n - 1);
        const after = jumpConsistentHash(key, n);
        if (after !== before) {
          expect(after).toBe(n - 1);
          moved++;
        }
      }
      // Expected share 1/n; 4,000 keys keep the sample's spread within a few points.
      expect(Math.abs(moved / keys.length - 1 / n)).toBeLessThan(0.04);
    }
  });

  it("places a partition alike whatever the table name's case (Table storage compares names case-insensitively)", () => {
    const map = withShard({ version: 1, shards: ["a", "b"] }, "c");
    for (let p = 0; p < 50; p++)
      expect(placeOf(map, "Orders", `p${p}`, false)).toBe(placeOf(map, "orders", `p${p}`, false));
  });

  it("routes a filter to one partition only when a top-level conjunct fixes PartitionKey", () => {
    expect(singlePartitionOf("PartitionKey eq 'a'")).toBe("a");
    expect(singlePartitionOf("PartitionKey eq 'it''s' and RowKey ge 'x'")).toBe("it's");
    expect(singlePartitionOf("(PartitionKey eq 'a') and (RowKey lt 'b' or RowKey gt 'c')")).toBe("a");
    expect(singlePartitionOf("RowKey gt 'x' and PartitionKey eq 'a'")).toBe("a");
    // Not one partition: an `or` at the top, a range, a key inside a nested or, a quoted look-alike.
    expect(singlePartitionOf("PartitionKey eq 'a' or PartitionKey eq 'b'")).toBeUndefined();
    expect(singlePartitionOf("PartitionKey eq 'a' and RowKey eq 'x' or n eq 1")).toBeUndefined();
    expect(singlePartitionOf("PartitionKey ge 'a' and PartitionKey lt 'b'")).toBeUndefined();
    expect(
      singlePartitionOf("(PartitionKey eq 'a' or PartitionKey eq 'b') and RowKey eq 'x'"),
    ).toBeUndefined();
    expect(singlePartitionOf("name eq 'PartitionKey eq ''a'''")).toBeUndefined();
    expect(singlePartitionOf("not (PartitionKey eq 'a')")).toBeUndefined();
    expect(singlePartitionOf(undefined)).toBeUndefined();
  });

  it("keeps a filter's top-level PartitionKey range for the state rows a merged scan also reads", () => {
    expect(partitionRangeOf("PartitionKey ge 'a' and PartitionKey lt 'b' and v gt 3")).toBe(
      "PartitionKey ge 'a' and PartitionKey lt 'b'",
    );
    expect(partitionRangeOf("(PartitionKey gt 'it''s') and RowKey eq 'x'")).toBe("PartitionKey gt 'it''s'");
    expect(partitionRangeOf("v gt 3")).toBeUndefined();
    expect(partitionRangeOf("PartitionKey ge 'a' or v gt 3")).toBeUndefined();
    expect(partitionRangeOf(undefined)).toBeUndefined();
  });
});
