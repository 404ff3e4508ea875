import { afterEach, describe, expect, it } from "vitest";
import { type ReshardProgress, ShardedStore, StoreError } from "../../src/index.js";
import type { StoreContinuation, StoredEntity, TableStore } from "../../src/store/table-store.js";
import { expectRejection } from "../support/rejection.js";
import { type StoreRequest, StoreWrapper } from "../support/store-wrapper.js";
import { uniqueTableName } from "../support/table-names.js";
import { movingToD, nameWhere, partitionKeys } from "./moving-table.js";
import { type ShardKind, shardKinds } from "./shard-kinds.js";

const UPSERTS = 300;

/** Every user row of a table on one raw shard (ShardedStore's marker rows left out). */
async function userRows(store: TableStore, table: string): Promise<StoredEntity[]> {
  const rows: StoredEntity[] = [];
  let continuation: StoreContinuation | undefined;
  do {
    const page = await store.queryPage(table, { continuation });
    rows.push(...page.items.filter((r) => !r.rowKey.startsWith("~tablekit~shard~")));
    continuation = page.continuation;
  } while (continuation !== undefined);
  return rows;
}

/** Every row through a store's scan, as [PartitionKey, RowKey, v], in the order it came. */
async function scanOf(store: TableStore, table: string): Promise<Array<[string, string, unknown]>> {
  const rows: Array<[string, string, unknown]> = [];
  let continuation: StoreContinuation | undefined;
  do {
    const page = await store.queryPage(table, { continuation, top: 50 });
    rows.push(...page.items.map((r): [string, string, unknown] => [r.partitionKey, r.rowKey, r.v]));
    continuation = page.continuation;
  } while (continuation !== undefined);
  return rows;
}

/** A shard whose requests fail from the `failAt`-th on, as a mover's process that dies there. */
class DyingStore extends StoreWrapper {
  requests = 0;
  failAt = Number.POSITIVE_INFINITY;
  protected override async around<T>(_request: StoreRequest, send: () => Promise<T>): Promise<T> {
    if (++this.requests >= this.failAt) throw new StoreError("the mover died", { statusCode: 500 });
    return send();
  }
}

describe.each(shardKinds)("ShardedStore.addShard on $name shards", (kind: ShardKind) => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });
  const partitions = kind.name === "memory" ? 300 : 40;

  async function seeded() {
    const made = await kind.create(["a", "b", "c", "d"]);
    close = made.close;
    const { d, ...abc } = made.shards as Record<string, TableStore>;
    // No lease: addShard's last scan follows its publish at once (nothing here opens partitions meanwhile).
    const store = new ShardedStore({ shards: abc, mapLeaseMs: 0 });
    // The writer's schedule is sized for about a quarter of the partitions moving (two progress points
    // each); under a random name the share may fall outside what the tests below need.
    const table = nameWhere(
      () => uniqueTableName("move"),
      (name) => {
        const moving = movingToD(name, partitionKeys(partitions));
        return moving >= partitions * 0.2 && moving <= partitions * 0.4;
      },
    );
    await store.createTable(table);
    const last = new Map<string, number>();
    for (let p = 0; p < partitions; p++) {
      await store.submitTransaction(
        table,
        `p${p}`,
        ["r0", "r1"].map((rowKey) => ({
          kind: "insert" as const,
          entity: { partitionKey: `p${p}`, rowKey, v: -1 },
        })),
      );
      last.set(`p${p}/r0`, -1).set(`p${p}/r1`, -1);
    }
    // A second process, holding every shard's connection and the map from before the move.
    const old = new ShardedStore({ shards: made.shards });
    expect((await old.shardMap()).shards).toEqual(["a", "b", "c"]);
    const before = new Map<string, string>();
    for (let p = 0; p < partitions; p++) before.set(`p${p}`, await store.shardOf(table, `p${p}`));
    return { shards: made.shards, d: d as TableStore, store, old, table, last, before };
  }

  it(`moves about 1/4 of ${partitions} partitions to shard d while a writer does ${UPSERTS} upserts through both maps`, async () => {
    const { shards, d, store, old, table, last, before } = await seeded();
    let written = 0;
    // The writer takes turns with the mover at its progress points (no timing): upserts into the
    // partition being moved, and round-robin over all keys, half through the process with the old map.
    const write = async (count: number, hot?: string): Promise<void> => {
      for (let k = 0; k < count && written < UPSERTS; k++, written++) {
        const n = (written * 7919) % (partitions * 2);
        const pk = hot !== undefined && k === 0 ? hot : `p${n >> 1}`;
        const key = `${pk}/r${n & 1}`;
        const [writer, reader] = written % 2 === 0 ? [store, old] : [old, store];
        await writer.upsert(table, { partitionKey: pk, rowKey: `r${n & 1}`, v: written }, "replace");
        last.set(key, written);
        // The other process reads the acknowledged write at once, whichever map it holds.
        expect((await reader.getEntity(table, pk, `r${n & 1}`))?.v, key).toBe(written);
      }
    };
    const steps: ReshardProgress[] = [];
    const result = await store.addShard("d", d, {
      onProgress: async (progress) => {
        steps.push(progress);
        if (progress.step === "copied" || progress.step === "moved") {
          // About a quarter of the partitions move, two progress points each: most upserts land mid-move.
          await write(Math.ceil(UPSERTS / (partitions / 2)), progress.partitionKey);
        }
      },
    });
    const duringMove = written;
    await write(UPSERTS - written);
    expect(duringMove).toBeGreaterThan(UPSERTS / 3);
    expect(steps.at(-1)?.step).toBe("done");
    expect(result.longestStallMs).toBeGreaterThanOrEqual(0);

    const share = result.partitions / partitions;
    expect(share).toBeGreaterThanOrEqual(0.1);
    expect(share).toBeLessThanOrEqual(0.45);
    // Every partition's rows on exactly one shard: the one shardOf names; moved ones only went to d.
    const onShard = new Map<string, Set<string>>();
    for (const [name, shard] of Object.entries(shards)) {
      for (const row of await userRows(shard, table)) {
        onShard.set(row.partitionKey, (onShard.get(row.partitionKey) ?? new Set()).add(name));
      }
    }
    let moved = 0;
    for (let p = 0; p < partitions; p++) {
      const now = await store.shardOf(table, `p${p}`);
      expect([...(onShard.get(`p${p}`) ?? [])], `p${p}`).toEqual([now]);
      if (now !== before.get(`p${p}`)) {
        expect(now).toBe("d");
        moved++;
      }
    }
    expect(moved).toBe(result.partitions);

    // Every entity has its last value, read through the new map, the old one, and a fresh process.
    const fresh = new ShardedStore({ shards });
    const expected = [...last]
      .map(([key, v]) => [...(key.split("/") as [string, string]), v] as const)
      .sort((x, y) => (x[0] !== y[0] ? (x[0] < y[0] ? -1 : 1) : x[1] < y[1] ? -1 : 1));
    for (const reader of [store, old, fresh]) {
      for (const [key, v] of last) {
        const [pk, rk] = key.split("/") as [string, string];
        expect((await reader.getEntity(table, pk, rk))?.v, key).toBe(v);
      }
      expect(await scanOf(reader, table)).toEqual(expected);
    }
    expect((await fresh.shardMap()).shards).toEqual(["a", "b", "c", "d"]);
  });

  // The fence and resume paths are the same code on every shard kind: the wire subset (serve) runs the move above only.
  if (kind.name !== "memory") return;

  it("fences a writer with the old map: its writes to a moved partition land on the new shard only", async () => {
    const { shards, d, store, old, table, before } = await seeded();
    await store.addShard("d", d);
    let target: string | undefined;
    for (const pk of before.keys()) if ((await store.shardOf(table, pk)) === "d") target ??= pk;
    expect(target).toBeDefined();
    const pk = target as string;
    await old.upsert(table, { partitionKey: pk, rowKey: "late", v: 1 }, "replace");
    await old.submitTransaction(table, pk, [
      { kind: "insert", entity: { partitionKey: pk, rowKey: "late2", v: 2 } },
    ]);
    // An update and a delete of rows the old shard no longer holds reach them on d (not "not found").
    await old.update(table, { partitionKey: pk, rowKey: "r0", v: 5 }, "merge", "*");
    expect(await old.delete(table, pk, "r1", "*")).toBe(true);
    await old.upsert(table, { partitionKey: pk, rowKey: "r1", v: -1 }, "replace");
    expect((await store.getEntity(table, pk, "r0"))?.v).toBe(5);
    const home = shards[before.get(pk) as string] as TableStore;
    expect((await userRows(home, table)).filter((r) => r.partitionKey === pk)).toEqual([]);
    expect((await userRows(d, table)).filter((r) => r.partitionKey === pk).map((r) => r.rowKey)).toEqual([
      "late",
      "late2",
      "r0",
      "r1",
    ]);
    expect((await old.queryPage(table, { filter: `PartitionKey eq '${pk}'` })).items).toHaveLength(4);
  });

  it("loses no acknowledged write of writers running concurrently with the move (their waits in cut-overs included)", async () => {
    const { shards, d, store, old, table, last } = await seeded();
    // Four writers through both maps, each on its own keys, racing the mover: whatever the scheduling,
    // every acknowledged upsert must be the value read afterwards.
    const writers = [store, old, store, old].map(async (writer, w) => {
      for (let i = 0; i < 60; i++) {
        const p = (w * 61 + i * 7) % partitions;
        await writer.upsert(table, { partitionKey: `p${p}`, rowKey: `w${w}`, v: 1000 * w + i }, "replace");
        last.set(`p${p}/w${w}`, 1000 * w + i);
      }
    });
    const [result] = await Promise.all([store.addShard("d", d), ...writers]);
    expect(result.partitions).toBeGreaterThan(0);
    const fresh = new ShardedStore({ shards });
    for (const [key, v] of last) {
      const [pk, rk] = key.split("/") as [string, string];
      expect((await fresh.getEntity(table, pk, rk))?.v, key).toBe(v);
    }
  });

  it("resumes a move cut short when addShard runs again", async () => {
    const { shards, store, table, last } = await seeded();
    const dying = new DyingStore(shards.d as TableStore);
    dying.failAt = kind.name === "memory" ? 200 : 60;
    await expectRejection(store.addShard("d", dying), StoreError);
    dying.failAt = Number.POSITIVE_INFINITY;
    const again = await store.addShard("d", dying);
    expect(again.partitions).toBeGreaterThan(0);
    const fresh = new ShardedStore({ shards });
    for (const [key, v] of last) {
      const [pk, rk] = key.split("/") as [string, string];
      expect((await fresh.getEntity(table, pk, rk))?.v, key).toBe(v);
    }
    const seen = new Map<string, number>();
    for (const shard of Object.values(shards)) {
      for (const row of await userRows(shard, table))
        seen.set(row.partitionKey, (seen.get(row.partitionKey) ?? 0) + 1);
    }
    expect([...seen.values()].every((rows) => rows === 2)).toBe(true);
    expect(seen.size).toBe(partitions);
  });
});
