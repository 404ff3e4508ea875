import { afterEach, describe, expect, it } from "vitest";
import { ShardedStore, StoreError, TableContext } from "../../src/index.js";
import { OPEN_ROW, STATE_ROW } from "../../src/store/sharded/partition-markers.js";
import { DIRECTORY_TABLE } from "../../src/store/sharded/shard-directory.js";
import { placeOf, withShard } from "../../src/store/sharded/shard-map.js";
import type {
  StoreContinuation,
  StoredEntity,
  TableStore,
  TransactionAction,
} from "../../src/store/table-store.js";
import { expectRejection } from "../support/rejection.js";
import { STORE_METHODS } from "../support/store-wrapper.js";
import { uniqueTableName } from "../support/table-names.js";
import { movingToD, nameWhere, partitionKeys } from "./moving-table.js";
import { type ShardKind, shardKinds } from "./shard-kinds.js";

/** One request as the crash plan sees it: the shard, the method and its arguments. */
type Call = { shard: string; method: string; args: readonly unknown[] };

/** Where the mover's process dies: after (or before) the `nth` request that `matches`. */
interface CrashPoint {
  readonly phase: string;
  readonly matches: (call: Call) => boolean;
  readonly nth?: number;
  readonly before?: boolean;
}

const actionsOf = (call: Call): readonly TransactionAction[] =>
  call.method === "submitTransaction" ? (call.args[2] as TransactionAction[]) : [];
const rowOf = (call: Call): Record<string, unknown> => (call.args[1] ?? {}) as Record<string, unknown>;
const isUserKey = (rowKey: string): boolean => !rowKey.startsWith("~tablekit~shard~");

/** The steps of a move, each a point where a crash leaves something different behind (partition-move.ts). */
const CRASH_POINTS: readonly CrashPoint[] = [
  {
    phase: "move recorded",
    matches: (c) => c.method === "upsert" && c.args[0] === DIRECTORY_TABLE && rowOf(c).rowKey === "move",
  },
  { phase: "tables created on d", matches: (c) => c.shard === "d" && c.method === "createTable" },
  {
    phase: "rows copied",
    nth: 2,
    matches: (c) =>
      c.shard === "d" && actionsOf(c).some((a) => a.kind === "upsert" && isUserKey(a.entity.rowKey)),
  },
  {
    phase: "fenced",
    nth: 2,
    matches: (c) =>
      actionsOf(c).some(
        (a) => a.kind === "upsert" && a.entity.rowKey === STATE_ROW && a.entity.state === "moved",
      ),
  },
  {
    phase: "caught up (ready)",
    nth: 2,
    matches: (c) => c.shard === "d" && c.method === "upsert" && rowOf(c).state === "ready",
  },
  {
    phase: "old rows deleted",
    nth: 2,
    matches: (c) =>
      c.shard !== "d" &&
      actionsOf(c).length > 0 &&
      actionsOf(c).every((a) => a.kind === "delete" && isUserKey(a.rowKey)),
  },
  {
    phase: "opened on d",
    nth: 2,
    matches: (c) =>
      c.shard === "d" && actionsOf(c).some((a) => a.kind === "insert" && a.entity.rowKey === OPEN_ROW),
  },
  {
    phase: "map published",
    matches: (c) => c.method === "update" && c.args[0] === DIRECTORY_TABLE && rowOf(c).rowKey === "current",
  },
  {
    phase: "move about to end",
    before: true,
    matches: (c) => c.method === "delete" && c.args[0] === DIRECTORY_TABLE && c.args[2] === "move",
  },
];

/** A shard as the mover's process sees it: once the crash point is reached, every request of that process fails. */
function crashing(
  inner: TableStore,
  shard: string,
  point: CrashPoint,
  state: { seen: number; dead: boolean },
) {
  return new Proxy(inner, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (!(STORE_METHODS as readonly (string | symbol)[]).includes(property)) return value.bind(target);
      return async (...args: unknown[]) => {
        if (state.dead) throw new StoreError("the mover's process is gone", { statusCode: 500 });
        const hit =
          point.matches({ shard, method: String(property), args }) && ++state.seen === (point.nth ?? 1);
        if (hit && point.before === true) state.dead = true;
        if (state.dead) throw new StoreError("the mover's process died", { statusCode: 500 });
        const result = await value.apply(target, args);
        if (hit) {
          state.dead = true;
          throw new StoreError("the mover's process died", { statusCode: 500 });
        }
        return result;
      };
    },
  });
}

/** Every user row of a table on one raw shard. */
async function userRows(store: TableStore, table: string): Promise<StoredEntity[]> {
  const rows: StoredEntity[] = [];
  let continuation: StoreContinuation | undefined;
  do {
    const page = await store.queryPage(table, { continuation });
    rows.push(...page.items.filter((r) => isUserKey(r.rowKey)));
    continuation = page.continuation;
  } while (continuation !== undefined);
  return rows;
}

const immediately = async (): Promise<void> => {};

describe.each(shardKinds)(
  "db.repair() finishes a shard move cut short, on $name shards",
  (kind: ShardKind) => {
    let close: (() => Promise<void>) | undefined;
    afterEach(async () => {
      await close?.();
      close = undefined;
    });
    const partitions = kind.name === "memory" ? 40 : 16;
    // Every step on memory; the wire subset takes one before and one after the fence.
    const points =
      kind.name === "memory" ? CRASH_POINTS : CRASH_POINTS.filter((p) => /copied|deleted/.test(p.phase));

    async function crashedMove(point: CrashPoint) {
      const made = await kind.create(["a", "b", "c", "d"]);
      close = made.close;
      const { d, ...abc } = made.shards as Record<string, TableStore>;
      const state = { seen: 0, dead: false };
      const dying = Object.fromEntries(
        Object.entries(made.shards).map(([name, shard]) => [name, crashing(shard, name, point, state)]),
      );
      const { d: dyingD, ...dyingAbc } = dying as Record<string, TableStore>;
      const mover = new ShardedStore({ shards: dyingAbc, mapLeaseMs: 0 });
      // The crash points at a move's second partition (`nth: 2`) need two partitions to move.
      const table = nameWhere(
        () => uniqueTableName("repair"),
        (name) => movingToD(name, partitionKeys(partitions)) >= 2,
      );
      await mover.createTable(table);
      const last = new Map<string, number>();
      for (let p = 0; p < partitions; p++) {
        await mover.submitTransaction(
          table,
          `p${p}`,
          ["r0", "r1"].map((rowKey) => ({
            kind: "insert" as const,
            entity: { partitionKey: `p${p}`, rowKey, v: 0 },
          })),
        );
        last.set(`p${p}/r0`, 0).set(`p${p}/r1`, 0);
      }
      await expectRejection(mover.addShard("d", dyingD as TableStore), StoreError);
      expect(state.dead, `the crash point '${point.phase}' was reached`).toBe(true);
      return { shards: made.shards, abc, d: d as TableStore, table, last };
    }

    it.each(points)(
      "after '$phase': every entity keeps its last value, each partition on one shard",
      async (point) => {
        const { shards, table, last } = await crashedMove(point);
        // A fresh process (every shard given, the new one too) writes on while the move is stopped: a
        // partition caught in its cut-over refuses the write (503 PartitionMoving), every other takes it.
        const fresh = new ShardedStore({ shards, mapLeaseMs: 0, sleep: immediately });
        let refused = 0;
        for (let p = 0; p < partitions; p++) {
          try {
            await fresh.upsert(table, { partitionKey: `p${p}`, rowKey: "r0", v: 1 }, "replace");
            last.set(`p${p}/r0`, 1);
          } catch (error) {
            expect((error as StoreError).serviceCode, `p${p}`).toBe("PartitionMoving");
            refused++;
          }
        }
        expect(refused).toBeLessThanOrEqual(1);

        // A process holding every shard's connection and the map read before the repair (version 1 unless
        // the crash came after the publication).
        const old = new ShardedStore({ shards });
        expect((await old.shardMap()).version).toBe(/published|end/.test(point.phase) ? 2 : 1);

        const db = new TableContext({ store: fresh });
        const report = await db.repair();
        expect(report.store).toMatchObject({ resumed: 1, pending: 0 });
        expect((await db.repair()).store).toEqual({ resumed: 0, pending: 0, partitions: 0, rows: 0 });

        // The map is the one with d, every partition where it places it and nowhere else.
        const map = await fresh.shardMap();
        expect(map).toEqual({ version: 2, shards: ["a", "b", "c", "d"] });
        const target = withShard({ version: 1, shards: ["a", "b", "c"] }, "d");
        const onShards = new Map<string, string[]>();
        for (const [name, shard] of Object.entries(shards)) {
          for (const row of await userRows(shard, table)) {
            const seen = onShards.get(row.partitionKey) ?? [];
            if (!seen.includes(name)) seen.push(name);
            onShards.set(row.partitionKey, seen);
          }
        }
        let onD = 0;
        for (let p = 0; p < partitions; p++) {
          const home = placeOf(target, table, `p${p}`, false);
          expect(onShards.get(`p${p}`), `p${p}`).toEqual([home]);
          expect(await fresh.shardOf(table, `p${p}`)).toBe(home);
          if (home === "d") onD++;
        }
        expect(onD).toBeGreaterThan(0);

        // Every entity has its last value, through the repaired store and through a process with the old map.
        for (const reader of [fresh, old]) {
          for (const [key, v] of last) {
            const [pk, rk] = key.split("/") as [string, string];
            expect((await reader.getEntity(table, pk, rk))?.v, key).toBe(v);
          }
        }
        // And every partition takes writes again.
        for (let p = 0; p < partitions; p++) {
          await fresh.upsert(table, { partitionKey: `p${p}`, rowKey: "r1", v: 2 }, "replace");
          expect((await old.getEntity(table, `p${p}`, "r1"))?.v).toBe(2);
        }
      },
    );

    if (kind.name !== "memory") return;

    it("leaves alone a move stamped less than minIntentAgeMs ago, and needs the new shard to resume one", async () => {
      const { shards, abc, table } = await crashedMove(CRASH_POINTS[3] as CrashPoint);
      const fresh = new ShardedStore({ shards, mapLeaseMs: 0 });
      const db = new TableContext({ store: fresh });
      // The mover stamped the move a moment ago: a pass that spares work younger than an hour spares it.
      expect((await db.repair({ minIntentAgeMs: 3_600_000 })).store).toEqual({
        resumed: 0,
        pending: 1,
        partitions: 0,
        rows: 0,
      });
      expect((await fresh.shardMap()).version).toBe(1);
      // A process not given shard d cannot finish the move: it says so instead of guessing.
      const withoutD = new TableContext({ store: new ShardedStore({ shards: abc }) });
      const error = await expectRejection(withoutD.repair(), StoreError);
      expect(error.serviceCode).toBe("ShardMissing");
      expect(error.message).toContain("'d'");
      expect((await db.repair()).store).toMatchObject({ resumed: 1 });
      expect((await fresh.shardMap()).version).toBe(2);
      for (let p = 0; p < partitions; p++) {
        expect((await fresh.getEntity(table, `p${p}`, "r0"))?.v).toBe(0);
      }
    });
  },
);
