import { afterEach, describe, expect, it } from "vitest";
import { ShardedStore } from "../../src/index.js";
import { OPEN_ROW, STATE_ROW } from "../../src/store/sharded/partition-markers.js";
import { placeOf, withShard } from "../../src/store/sharded/shard-map.js";
import type { StoreContinuation, TableStore, TransactionAction } from "../../src/store/table-store.js";
import { STORE_METHODS } from "../support/store-wrapper.js";
import { type ShardKind, shardKinds } from "./shard-kinds.js";

/** Each test has fresh shards: a fixed table name keeps the placement (hash of table and key) the same every run. */
const TABLE = "ScanDuringMove";
// One RowKey sorts after the partition's state row (`~tablekit~shard~state`): its pages can end past that row.
const ROWS = ["r0", "r1", "~~r2"];

/** The mover's view of a shard: `before` runs ahead of each of its requests, so a test acts between the move's steps. */
function steppedBy(
  inner: TableStore,
  shard: string,
  before: (shard: string, method: string, args: unknown[]) => Promise<void>,
) {
  return new Proxy(inner, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (!(STORE_METHODS as readonly (string | symbol)[]).includes(property)) return value.bind(target);
      return async (...args: unknown[]) => {
        await before(shard, String(property), args);
        return value.apply(target, args);
      };
    },
  });
}

/** The step of a move a request is, for the points where the scan reads a page. */
function stepOf(shard: string, method: string, args: unknown[]): string | undefined {
  if (method === "upsert" && (args[1] as { state?: unknown }).state === "ready") return "before ready";
  if (method !== "submitTransaction") return undefined;
  const actions = args[2] as TransactionAction[];
  const rowKeys = actions.map((a) => (a.kind === "delete" ? a.rowKey : a.entity.rowKey));
  if (actions.some((a) => a.kind === "upsert" && a.entity.rowKey === STATE_ROW)) return "before fence";
  if (shard === "d" && actions.some((a) => a.kind === "insert" && a.entity.rowKey === OPEN_ROW)) {
    return "old rows deleted, before open";
  }
  if (shard === "d" && rowKeys.every((k) => ROWS.includes(k))) return "before copy";
  return undefined;
}

describe.each(shardKinds)("a cross-shard scan during a move, on $name shards", (kind: ShardKind) => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });
  const partitions = kind.name === "memory" ? 40 : 24;

  it("returns every row once, in key order, with pages read between every step of every partition's move", async () => {
    const made = await kind.create(["a", "b", "c", "d"]);
    close = made.close;
    const expected: Array<[string, string, number]> = [];
    const setup = new ShardedStore({
      shards: { a: made.shards.a, b: made.shards.b, c: made.shards.c } as Record<string, TableStore>,
    });
    await setup.createTable(TABLE);
    for (let p = 0; p < partitions; p++) {
      const pk = `p${String(p).padStart(2, "0")}`;
      await setup.submitTransaction(
        TABLE,
        pk,
        ROWS.map((rowKey, i) => ({
          kind: "insert" as const,
          entity: { partitionKey: pk, rowKey, v: p * 10 + i },
        })),
      );
      for (const [i, rowKey] of ROWS.entries()) expected.push([pk, rowKey, p * 10 + i]);
    }

    // The scanning process holds every shard's connection (d too, where the table does not exist yet)
    // and the map from before the move; its pages are small, so its shards' streams run apart.
    const scanner = new ShardedStore({ shards: made.shards });
    // Two scans side by side: every row, and a filtered one with a $select (whose shard queries also
    // fetch the state rows and their column, which must not show).
    const scans = [
      {
        query: {},
        scanned: [] as Array<[string, string, number]>,
        token: undefined as string | undefined,
        finished: false,
      },
      {
        query: { filter: "v ne 51 and PartitionKey ge 'p01'", select: ["PartitionKey", "RowKey", "v"] },
        scanned: [] as Array<[string, string, number]>,
        token: undefined as string | undefined,
        finished: false,
      },
    ];
    const points: string[] = [];
    const nextPage = async (): Promise<void> => {
      for (const scan of scans) {
        if (scan.finished) continue;
        const continuation =
          scan.token === undefined ? undefined : (JSON.parse(scan.token) as StoreContinuation);
        const page = await scanner.queryPage(TABLE, { ...scan.query, top: 3, continuation });
        for (const r of page.items) {
          if (scan.query.select !== undefined)
            expect(Object.keys(r).sort()).toEqual(["etag", "partitionKey", "rowKey", "v"]);
          scan.scanned.push([r.partitionKey, r.rowKey, r.v as number]);
        }
        scan.token = page.continuation === undefined ? undefined : JSON.stringify(page.continuation);
        scan.finished = page.continuation === undefined;
      }
    };
    await nextPage();

    const between = async (shard: string, method: string, args: unknown[]): Promise<void> => {
      const step = stepOf(shard, method, args);
      // A page at every step of the cut-over (the copies are left out, so the scan outlasts the move).
      if (step === undefined || step === "before copy") return;
      points.push(step);
      await nextPage();
    };
    const moverShards = Object.fromEntries(
      Object.entries(made.shards).map(([name, shard]) => [name, steppedBy(shard, name, between)]),
    );
    const { d, ...abc } = moverShards as Record<string, TableStore>;
    const mover = new ShardedStore({ shards: abc, mapLeaseMs: 0 });
    const result = await mover.addShard("d", d as TableStore);
    expect(result.partitions).toBeGreaterThan(2);
    // The scan was still running when partitions were fenced, cleaned up and opened on d.
    expect(points.filter((p) => p === "old rows deleted, before open").length).toBeGreaterThan(1);
    expect(
      scans.map((scan) => scan.finished),
      `${points.length} pages during the move`,
    ).toEqual([false, false]);
    while (scans.some((scan) => !scan.finished)) await nextPage();

    expect(scans[0]?.scanned).toEqual(expected);
    expect(scans[1]?.scanned).toEqual(expected.filter(([pk, , v]) => v !== 51 && pk >= "p01"));
  });

  it("follows a partition whose page ended past its state row and that moved before the next page", async () => {
    const made = await kind.create(["a", "b", "c", "d"]);
    close = made.close;
    const { d, ...abc } = made.shards as Record<string, TableStore>;
    const table = "ScanPastState";
    // One partition, which the new map places on d; its last two RowKeys sort after its state row.
    const before = { version: 1, shards: ["a", "b", "c"] };
    let p = 0;
    while (placeOf(withShard(before, "d"), table, `p${p}`, false) !== "d") p++;
    const pk = `p${p}`;
    const mover = new ShardedStore({ shards: abc, mapLeaseMs: 0 });
    await mover.createTable(table);
    const rowKeys = ["r0", "r1", "~~r2", "~~r3"];
    await mover.submitTransaction(
      table,
      pk,
      rowKeys.map((rowKey, v) => ({ kind: "insert" as const, entity: { partitionKey: pk, rowKey, v } })),
    );
    // Pages of 3 from 4 shards ask each shard for 2 rows: the old shard's pages are [r0, r1],
    // [open row, state row], [~~r2, ~~r3]; the first merged page ends after ~~r2, inside the third.
    const scanner = new ShardedStore({ shards: made.shards });
    const first = await scanner.queryPage(table, { top: 3 });
    expect(first.items.map((r) => r.rowKey)).toEqual(["r0", "r1", "~~r2"]);
    const token = JSON.stringify(first.continuation);
    // The whole move happens between the pages: the old shard's rows are gone, its state row is behind the cursor.
    expect((await mover.addShard("d", d as TableStore)).partitions).toBe(1);
    const second = await scanner.queryPage(table, { top: 3, continuation: JSON.parse(token) });
    expect(second.items.map((r) => [r.rowKey, r.v])).toEqual([["~~r3", 3]]);
    expect(second.continuation).toBeUndefined();
  });

  it("does not follow the forwarding rows of a move that had finished when the scan began", async () => {
    const made = await kind.create(["a", "b", "c", "d"]);
    close = made.close;
    const { d, ...abc } = made.shards as Record<string, TableStore>;
    const table = "ScanAfterMove";
    const mover = new ShardedStore({ shards: abc, mapLeaseMs: 0 });
    await mover.createTable(table);
    for (let p = 0; p < partitions; p++) {
      await mover.insert(table, { partitionKey: `p${String(p).padStart(2, "0")}`, rowKey: "r", v: p });
    }
    const moved = await mover.addShard("d", d as TableStore);
    expect(moved.partitions).toBeGreaterThan(0);
    // A process with the old map scans with a filter no row matches: the moved partitions' state rows
    // on the old shards come back, and none is followed (no partition query, no marker read).
    const partitionReads: string[] = [];
    const watched = Object.fromEntries(
      Object.entries(made.shards).map(([name, shard]) => [
        name,
        steppedBy(shard, name, async (_shard, method, args) => {
          const filter = (args[1] as { filter?: string } | undefined)?.filter ?? "";
          if (method === "queryPage" && filter.startsWith("PartitionKey eq")) partitionReads.push(filter);
        }),
      ]),
    );
    const scanner = new ShardedStore({ shards: watched as Record<string, TableStore> });
    let continuation: StoreContinuation | undefined;
    let rows = 0;
    do {
      const page = await scanner.queryPage(table, { filter: "v eq -1", top: 5, continuation });
      rows += page.items.length;
      continuation = page.continuation;
    } while (continuation !== undefined);
    expect(rows).toBe(0);
    expect(partitionReads).toEqual([]);
  });
});
