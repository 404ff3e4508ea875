import { describe, expect, it } from "vitest";
import { EntityAlreadyExistsError, TableContext, type TableKitEvent } from "../../src/index.js";
import { ManualTimers } from "../eventual/manual-timers.js";
import { freshContext, stores, uniquePrefix } from "../fixtures/context.js";
import { CrashStore } from "../indexes/crash-store.js";
import { CountingStore } from "../support/counting-store.js";
import { readAll } from "../support/read-all.js";
import { seededRandom, testSeed } from "../support/seeded-random.js";
import { employee, expectExact, RsEmployee } from "./models.js";

const FAST = { retries: 8, minDelayMs: 1, maxDelayMs: 20 } as const;
const REGIONS = ["eu", "us", "asia"];
/** Source partitions: three in the hot region, two and one elsewhere. */
const PARTITIONS = [
  ["eu", "sales"],
  ["eu", "ops"],
  ["eu", "hr"],
  ["us", "sales"],
  ["us", "ops"],
  ["asia", "sales"],
] as const;

describe.each(stores)("remote summaries under concurrent writers, on %s", (_name, kind) => {
  it("16 writers × 50 random operations over six source partitions: remote summaries equal a recount", async () => {
    const seed = testSeed(11);
    const { db, counter, prefix } = await freshContext(kind, [RsEmployee], { retry: FAST });
    const random = seededRandom(seed);
    const plans = Array.from({ length: 16 }, () =>
      Array.from({ length: 50 }, () => ({
        partition: PARTITIONS[Math.floor(random() * PARTITIONS.length)] as (typeof PARTITIONS)[number],
        id: Math.floor(random() * 30),
        op: random(),
        salary: Math.floor(random() * 1000),
        bonus: BigInt(Math.floor(random() * 10)),
      })),
    );
    await Promise.all(
      plans.map(async (steps) => {
        // Each writer sees the store through its own object, as separate processes would (no shared cache).
        const own = new TableContext({ store: new CountingStore(counter), tablePrefix: prefix, retry: FAST });
        const repo = own.repository(RsEmployee);
        for (const { partition, id, op, salary, bonus } of steps) {
          const [region, department] = partition;
          const key = { region, department, employeeId: id };
          if (op < 0.35) await repo.upsert(employee(region, department, id, salary, bonus));
          else if (op < 0.55) await repo.delete(key);
          else if (op < 0.7) await repo.patch(key, { salary }).catch(() => undefined);
          else if (op < 0.85)
            await repo.insert(employee(region, department, id, salary)).catch((e) => {
              if (!(e instanceof EntityAlreadyExistsError)) throw e;
            });
          else
            await repo.bulkUpsert([
              employee(region, department, id, salary, bonus),
              employee(region, department, (id + 1) % 30, salary + 1),
            ]);
        }
      }),
    );
    await expectExact(db, prefix, REGIONS, `seed ${seed}`);
    const intents = await readAll(db.store, `${prefix}TablekitIntents`);
    expect(intents, `seed ${seed}`).toEqual([]);
  });

  it("a writer's older contribution never overwrites a newer one mirrored meanwhile", async () => {
    for (const cold of [false, true]) {
      const crash = new CrashStore(kind.create());
      const prefix = uniquePrefix("ro");
      const slow = new TableContext({ store: crash, tablePrefix: prefix, retry: false });
      await slow.ensureTables(RsEmployee);
      // Another process (its own store object: its own caches).
      const fast = new TableContext({ store: new CountingStore(crash), tablePrefix: prefix, retry: false });
      await slow.repository(RsEmployee).insert(employee("eu", "sales", 1, 10));
      if (cold) await slow.repository(RsEmployee).insert(employee("eu", "sales", 2, 20));
      // Between the slow writer's transaction and its contribution, the fast one commits and mirrors.
      crash.before(
        (method, table) => table.endsWith("RsStats") && method !== "queryPage",
        async () => {
          await fast.repository(RsEmployee).insert(employee("eu", "sales", 3, 30));
        },
      );
      await slow.repository(RsEmployee).insert(employee("eu", "sales", 4, 40));
      await expectExact(fast, prefix, ["eu"], cold ? "cold" : "warm");
    }
  });

  it("a repair worker finishes the remote summaries of writes that crashed after their transaction", async () => {
    const crash = new CrashStore(kind.create());
    const prefix = uniquePrefix("rw");
    const crashing = new TableContext({ store: crash, tablePrefix: prefix, retry: false });
    await crashing.ensureTables(RsEmployee);
    const employees = crashing.repository(RsEmployee);
    // One write per partition first, so the writer knows every summary row (no reads before its transaction).
    for (const [i, [region, department]] of PARTITIONS.entries())
      await employees.insert(employee(region, department, 100 + i, 1));
    for (let id = 1; id <= 5; id++) {
      const [region, department] = PARTITIONS[id % PARTITIONS.length] as (typeof PARTITIONS)[number];
      // Intent, transaction, then the process dies before any contribution.
      crash.arm(3, "crash");
      await employees.insert(employee(region, department, id, id * 10));
      expect(crash.log.slice(0, 2)).toEqual(["upsert", "submitTransaction"]);
      crash.reset();
    }
    const pending = await readAll(crash, `${prefix}TablekitIntents`);
    expect(pending.length).toBe(5);
    const events: Array<Extract<TableKitEvent, { type: "repair-pass" }>> = [];
    let heard: (() => void) | undefined;
    const restarted = new TableContext({
      store: crash,
      tablePrefix: prefix,
      onEvent: (event) => {
        if (event.type !== "repair-pass") return;
        events.push(event);
        heard?.();
      },
    });
    restarted.repository(RsEmployee);
    const timers = new ManualTimers();
    const passed = new Promise<void>((resolve) => (heard = resolve));
    const worker = restarted.startRepairWorker({ intervalMs: 60_000, timers });
    timers.fire();
    await passed;
    await worker.stop();
    expect(events[0]?.errors).toEqual([]);
    expect(events[0]?.counts.summaries).toMatchObject({ replayed: 5, failed: 0 });
    expect(await readAll(crash, `${prefix}TablekitIntents`)).toEqual([]);
    await expectExact(restarted, prefix, REGIONS);
  });
});
