import { afterEach, describe, expect, it } from "vitest";
import { ShardedStore } from "../../src/index.js";
import type { StoreContinuation, StoredEntity, TableStore, WireEntity } from "../../src/store/table-store.js";
import { type ShardKind, shardKinds } from "./shard-kinds.js";

const TABLE = "TypedMove";
const PARTITIONS = 24;

/** The row of partition `p` with a value of every EDM type, each as written with its type named. */
function typedRow(p: number): WireEntity {
  return {
    partitionKey: `p${p}`,
    rowKey: "r",
    wholeDouble: { type: "Double", value: p + 1 },
    zeroDouble: { type: "Double", value: 0 },
    double: { type: "Double", value: p + 0.25 },
    int32: p,
    int64: { type: "Int64", value: `${9_007_199_254_740_993n + BigInt(p)}` },
    bigInt64: { type: "Int64", value: "-9223372036854775808" },
    guid: { type: "Guid", value: `0c1d2e3f-4a5b-4c6d-8e7f-${String(p).padStart(12, "0")}` },
    dateTime: { type: "DateTime", value: `2024-02-29T23:59:59.${String(1234567 + p).padStart(7, "0")}Z` },
    binary: new Uint8Array([0, 255, p, 7]),
    text: `row ${p}`,
    flag: p % 2 === 0,
  };
}

/** What a typed read must answer for `typedRow(p)`: the same values (a Binary as bytes). */
function expectedTyped(p: number): Record<string, unknown> {
  const { binary, ...rest } = typedRow(p);
  return { ...rest, binary: [...(binary as Uint8Array)] };
}

/** Every row of the table on one raw shard, by the shard's own typed read. */
async function typedRows(store: TableStore): Promise<Map<string, Record<string, unknown>>> {
  const rows = new Map<string, Record<string, unknown>>();
  let continuation: StoreContinuation | undefined;
  do {
    const page = await (store.queryTypedPage as NonNullable<TableStore["queryTypedPage"]>).call(
      store,
      TABLE,
      {
        continuation,
      },
    );
    for (const row of page.items) {
      if (row.rowKey.startsWith("~tablekit~shard~")) continue;
      const { etag: _etag, timestamp: _timestamp, binary, ...rest } = row as StoredEntity;
      rows.set(row.partitionKey, { ...rest, binary: [...(binary as Uint8Array)] });
    }
    continuation = page.continuation;
  } while (continuation !== undefined);
  return rows;
}

describe.each(shardKinds)("a move on $name shards keeps every value's EDM type", (kind: ShardKind) => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  it("copies whole Doubles as Doubles, Int64, Guid, DateTime (7 digits) and Binary exactly", async () => {
    const made = await kind.create(["a", "b", "c", "d"]);
    close = made.close;
    const { d, ...abc } = made.shards as Record<string, TableStore>;
    const store = new ShardedStore({ shards: abc, mapLeaseMs: 0 });
    await store.createTable(TABLE);
    for (let p = 0; p < PARTITIONS; p++) await store.insert(TABLE, typedRow(p));

    // Before the move: each shard's typed read answers what was written.
    const before = new Map<string, Record<string, unknown>>();
    for (const shard of Object.values(abc))
      for (const [pk, row] of await typedRows(shard)) before.set(pk, row);
    expect(before.size).toBe(PARTITIONS);
    for (let p = 0; p < PARTITIONS; p++) expect(before.get(`p${p}`), `p${p}`).toEqual(expectedTyped(p));

    const result = await store.addShard("d", d as TableStore);
    expect(result.partitions).toBeGreaterThan(0);
    const moved = await typedRows(d as TableStore);
    expect(moved.size).toBe(result.partitions);
    for (const [pk, row] of moved) expect(row, pk).toEqual(expectedTyped(Number(pk.slice(1))));
  });
});
