import { afterEach, describe, expect, it } from "vitest";
import {
  EntityAlreadyExistsError,
  SchemaError,
  ShardedStore,
  StoreError,
  TableContext,
  TransactionError,
} from "../../src/index.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import type { StoreContinuation, StoredEntity, TableStore } from "../../src/store/table-store.js";
import { expectRejection } from "../support/rejection.js";
import { type StoreRequest, StoreWrapper } from "../support/store-wrapper.js";
import { uniqueTableName } from "../support/table-names.js";
import { item, ShItem } from "./models.js";
import { type ShardKind, shardKinds } from "./shard-kinds.js";

const NAMES = ["a", "b", "c"] as const;

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

/** A shard that fails every request, as an account that is down. */
class DownStore extends StoreWrapper {
  protected override async around<T>(_request: StoreRequest, _send: () => Promise<T>): Promise<T> {
    throw new StoreError("ServerBusy: the account is down", { statusCode: 503, serviceCode: "ServerBusy" });
  }
}

describe.each(shardKinds)("ShardedStore on three $name shards", (kind: ShardKind) => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });
  async function shardsOf(names: readonly string[] = NAMES) {
    const made = await kind.create(names);
    close = made.close;
    return made.shards;
  }
  // On serve each request crosses HTTP: the wire subset uses fewer partitions.
  const partitions = kind.name === "memory" ? 300 : 60;

  it(`places each of ${partitions} partitions on exactly one shard, each shard holding 20-47 %`, async () => {
    const shards = await shardsOf();
    const store = new ShardedStore({ shards });
    const table = uniqueTableName("place");
    await store.createTable(table);
    const placed = new Map<string, string>();
    for (let p = 0; p < partitions; p++) {
      const pk = `p${p}`;
      placed.set(pk, await store.shardOf(table, pk));
      await store.insert(table, { partitionKey: pk, rowKey: "r", n: p });
    }
    const onShard = new Map<string, string[]>();
    for (const name of NAMES) {
      for (const row of await userRows(shards[name] as TableStore, table)) {
        onShard.set(row.partitionKey, [...(onShard.get(row.partitionKey) ?? []), name]);
      }
    }
    for (const [pk, shard] of placed) expect(onShard.get(pk), pk).toEqual([shard]);
    if (kind.name === "memory") {
      for (const name of NAMES) {
        const share = [...placed.values()].filter((s) => s === name).length / partitions;
        expect(share, name).toBeGreaterThanOrEqual(0.2);
        expect(share, name).toBeLessThanOrEqual(0.47);
      }
    }
    expect(await store.listTables(table)).toEqual([table]);
  });

  it("answers point reads, scans and pages of 37 (continuation stored as text) as one store does", async () => {
    const shards = await shardsOf();
    const sharded = new TableContext({ store: new ShardedStore({ shards }), retry: false });
    const single = new TableContext({ store: new MemoryStore(), retry: false });
    const table = uniqueTableName("scan");
    const groups = kind.name === "memory" ? 40 : 12;
    for (const db of [sharded, single]) {
      const rows = db.dynamic(table);
      await rows.ensureTable();
      for (let g = 0; g < groups; g++) {
        for (let r = 0; r < 5; r++) {
          await rows.insert({
            partitionKey: `g${(g * 37) % 101}`,
            rowKey: `r${r}`,
            g,
            r,
            text: `v${g}.${r}`,
          });
        }
      }
    }
    const strip = ({ partitionKey, rowKey, g, r, text }: Record<string, unknown>) => ({
      partitionKey,
      rowKey,
      g,
      r,
      text,
    });
    const scan = async (db: TableContext) => {
      const out: unknown[] = [];
      for await (const row of db.dynamic(table).scan()) out.push(strip(row));
      return out;
    };
    const expected = await scan(single);
    expect(expected).toHaveLength(groups * 5);
    expect(await scan(sharded)).toEqual(expected);
    const pages = async (db: TableContext) => {
      const out: unknown[][] = [];
      let continuation: string | undefined;
      do {
        const page = await db.dynamic(table).scan().page({ size: 37, continuation });
        out.push(page.items.map(strip));
        // Stored and read back as text, as an API would hand it to a client.
        continuation =
          page.continuation === undefined ? undefined : JSON.parse(JSON.stringify(page.continuation));
      } while (continuation !== undefined);
      return out.filter((p) => p.length > 0);
    };
    const expectedPages = await pages(single);
    expect(expectedPages[0]).toHaveLength(37);
    expect(await pages(sharded)).toEqual(expectedPages);
    for (const pk of ["g0", "g37", "g74"]) {
      expect((await sharded.dynamic(table).find(pk).toArray()).map(strip)).toEqual(
        (await single.dynamic(table).find(pk).toArray()).map(strip),
      );
      expect(strip((await sharded.dynamic(table).get(pk, "r3")) ?? {})).toEqual(
        strip((await single.dynamic(table).get(pk, "r3")) ?? {}),
      );
    }
    expect(await sharded.dynamic(table).get("g0", "absent")).toBeUndefined();
  });

  it("commits a transaction all or nothing on its partition's shard", async () => {
    const shards = await shardsOf();
    const store = new ShardedStore({ shards });
    const table = uniqueTableName("tx");
    await store.createTable(table);
    await store.insert(table, { partitionKey: "p", rowKey: "2", n: 0 });
    const failure = await expectRejection(
      store.submitTransaction(table, "p", [
        { kind: "insert", entity: { partitionKey: "p", rowKey: "1", n: 1 } },
        { kind: "insert", entity: { partitionKey: "p", rowKey: "2", n: 2 } },
      ]),
      TransactionError,
    );
    expect(failure.index).toBe(1);
    expect(await store.getEntity(table, "p", "1")).toBeUndefined();
    await store.submitTransaction(table, "p", [
      { kind: "insert", entity: { partitionKey: "p", rowKey: "1", n: 1 } },
      { kind: "update", entity: { partitionKey: "p", rowKey: "2", n: 2 }, mode: "replace", ifMatch: "*" },
    ]);
    const home = shards[await store.shardOf(table, "p")] as TableStore;
    expect((await userRows(home, table)).map((r) => [r.rowKey, r.n])).toEqual([
      ["1", 1],
      ["2", 2],
    ]);
    await expectRejection(store.insert(table, { partitionKey: "p", rowKey: "1" }), EntityAlreadyExistsError);
    expect(await store.delete(table, "p", "nope", "*")).toBe(false);
  });

  it("keeps indexes in other tables (other shards) that verify clean", async () => {
    const shards = await shardsOf();
    const db = new TableContext({
      store: new ShardedStore({ shards }),
      tablePrefix: uniqueTableName("ix"),
      retry: false,
    });
    await db.ensureTables(ShItem);
    const repo = db.repository(ShItem);
    const count = kind.name === "memory" ? 60 : 20;
    for (let i = 0; i < count; i++) await repo.insert(item(i % 7, i, (i * 13) % 17));
    await repo.update(item(3, 3, 99), { ifMatch: "*" });
    expect(await db.verifyIndexes(ShItem)).toEqual({ missing: [], stale: [], orphans: [] });
  });

  it("keeps serving the other shards' partitions while one shard (the directory) fails every request", async () => {
    const shards = await shardsOf();
    const healthy = new ShardedStore({ shards });
    const table = uniqueTableName("down");
    await healthy.createTable(table);
    const homes = new Map<string, string>();
    for (let p = 0; p < 30; p++) {
      await healthy.insert(table, { partitionKey: `p${p}`, rowKey: "r", n: p });
      homes.set(`p${p}`, await healthy.shardOf(table, `p${p}`));
    }
    // A fresh process whose directory shard `a` is down from its first request.
    const store = new ShardedStore({ shards: { ...shards, a: new DownStore(shards.a as TableStore) } });
    for (const [pk, home] of homes) {
      if (home === "a") {
        await expectRejection(store.getEntity(table, pk, "r"), StoreError);
        continue;
      }
      expect((await store.getEntity(table, pk, "r"))?.n).toBe(Number(pk.slice(1)));
      await store.upsert(table, { partitionKey: pk, rowKey: "r", n: -1 }, "merge");
      expect((await healthy.getEntity(table, pk, "r"))?.n).toBe(-1);
    }
    expect([...homes.values()].filter((h) => h !== "a").length).toBeGreaterThan(0);
    // Only opening a new partition waits for the directory: its shard is not certain without the map.
    let fresh = 0;
    while ((await healthy.shardOf(table, `new${fresh}`)) === "a") fresh++;
    const refused = await expectRejection(
      store.insert(table, { partitionKey: `new${fresh}`, rowKey: "r" }),
      StoreError,
    );
    expect(refused.serviceCode).toBe("ShardDirectoryUnavailable");
  });
});

describe("ShardedStore construction", () => {
  it("refuses shards of different capabilities", () => {
    const cosmosLike = new MemoryStore({ flavor: "cosmos" });
    expect(() => new ShardedStore({ shards: { a: new MemoryStore(), b: cosmosLike } })).toThrow(SchemaError);
  });

  it("refuses no shards and an unknown directory", () => {
    expect(() => new ShardedStore({ shards: {} })).toThrow(/at least one shard/);
    expect(() => new ShardedStore({ shards: { a: new MemoryStore() }, directory: "z" })).toThrow(/directory/);
  });

  it("refuses a map lease addShard could not wait whole: not a whole number of ms, negative, or beyond Node's timer limit", () => {
    const shards = { a: new MemoryStore() };
    // 2^31 ms and more: Node would fire the mover's wait after 1 ms.
    for (const mapLeaseMs of [Number.NaN, -1, 1.5, 2 ** 31, Number.POSITIVE_INFINITY]) {
      expect(() => new ShardedStore({ shards, mapLeaseMs })).toThrow(
        expect.objectContaining({ name: "ValidationError", field: "mapLeaseMs" }),
      );
    }
    for (const mapLeaseMs of [0, 1000, 2 ** 31 - 1]) {
      expect(() => new ShardedStore({ shards, mapLeaseMs })).not.toThrow();
    }
  });
});

describe("ShardedStore with a shard missing from its configuration", () => {
  it("refuses to route when the directory's map names a shard it was not given", async () => {
    const [a, b, c] = [new MemoryStore(), new MemoryStore(), new MemoryStore()];
    await new ShardedStore({ shards: { a, b, c } }).shardMap();
    const partial = new ShardedStore({ shards: { a, b } });
    const failure = await expectRejection(partial.getEntity("T", "p", "r"), StoreError);
    expect(failure.serviceCode).toBe("ShardMissing");
  });
});
