import { describe, expect, it } from "vitest";
import { TableContext } from "../../src/index.js";
import { readAll } from "../support/read-all.js";
import { seededRandom, testSeed } from "../support/seeded-random.js";
import { FAST_RETRY, faultyContext, faultyStores, storeNames } from "../writes/harness.js";
import { employee, expectExact, RsEmployee } from "./models.js";

const SEED = testSeed(20261127);
const REGIONS = ["eu", "us"];
const PARTITIONS = [
  ["eu", "sales"],
  ["eu", "ops"],
  ["us", "sales"],
] as const;

/**
 * Writes to an entity with remote summaries under the fault layers (FaultyStore on MemoryStore, the
 * HTTP fault proxy on Azurite): 503, 500, timeouts, resets and lost answers on a quarter of all
 * requests, retried by the context or not. Whatever each write answered, after `repair` no intent is
 * left and every remote summary equals a recount of the stored rows.
 */
describe.each(storeNames)("remote summaries under transient faults, on %s", (name) => {
  it.each([
    ["retried", FAST_RETRY],
    ["not retried", false],
  ] as const)(`%s: exact after repair (seed ${SEED})`, async (_label, retry) => {
    const stores = await faultyStores(name, { seed: SEED, rate: 0.25 });
    try {
      const { db, prefix } = await faultyContext(stores, [RsEmployee], { retry });
      const employees = db.repository(RsEmployee);
      const random = seededRandom(SEED);
      let failed = 0;
      for (let step = 0; step < 40; step++) {
        const [region, department] = PARTITIONS[
          Math.floor(random() * PARTITIONS.length)
        ] as (typeof PARTITIONS)[number];
        const id = Math.floor(random() * 12);
        const op = random();
        const write =
          op < 0.4
            ? employees.upsert(employee(region, department, id, step, BigInt(step)))
            : op < 0.6
              ? employees.delete({ region, department, employeeId: id })
              : op < 0.8
                ? employees.insert(employee(region, department, 100 + step, step))
                : employees.bulkUpsert([
                    employee(region, department, id, step),
                    employee(region, department, id + 50, step),
                  ]);
        await write.catch(() => {
          failed++;
        });
      }
      stores.plan.setRate(0);
      expect(stores.plan.totalFaults).toBeGreaterThan(0);
      if (retry === false) expect(failed).toBeGreaterThan(0);
      const restarted = new TableContext({ store: stores.direct, tablePrefix: prefix, retry: FAST_RETRY });
      const report = await restarted.repair({ entities: [RsEmployee] });
      expect(report.summaries?.failed).toBe(0);
      const intents = await readAll(stores.direct, `${prefix}TablekitIntents`);
      expect(intents.filter((row) => row.partitionKey.startsWith("~summary~"))).toEqual([]);
      await expectExact(restarted, prefix, REGIONS, `seed ${SEED}`);
    } finally {
      await stores.close();
    }
  });
});
