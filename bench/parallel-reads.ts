/**
 * Reads that win by running requests in parallel: `getMany` against the same point reads one after
 * another, and a hash-bucket fan-out over 16 partitions against a single-partition range of the same
 * 1,000 rows. Each is measured on loopback Azurite and again through a proxy that adds a fixed answer
 * delay (an in-region round trip), where the parallelism is what a deployed service gets.
 */
import "reflect-metadata";
import { AzureStore, Column, Entity, TableContext } from "../src/index.js";
import { BenchItem, benchItem } from "./bench-entity.js";
import { startLatencyProxy } from "./latency-proxy.js";
import { compare, timeAsync } from "./measure.js";

/** Records one comparison (the runner's `record`). */
export type Recorder = (
  name: string,
  ours: number,
  baseline: number,
  unit: (v: number) => string,
  target: number | undefined,
) => void;

const BUCKETS = 16;
const ROWS = 1_000;
const DELAY_MS = 2;

@Entity({ table: "BenchBucketed", partitionKey: "{site}_{device:hash:16}", rowKey: "{at:ticks}_{device}" })
class BucketedReading {
  @Column({ type: "String" }) site!: string;
  @Column({ type: "String" }) device!: string;
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "Int32" }) value!: number;
}

@Entity({ table: "BenchUnbucketed", partitionKey: "{site}", rowKey: "{at:ticks}_{device}" })
class PlainReading {
  @Column({ type: "String" }) site!: string;
  @Column({ type: "String" }) device!: string;
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "Int32" }) value!: number;
}

const ms = (v: number) => `${v.toFixed(3)} ms`;

/** Seeds both shapes with the same 1,000 readings of 64 devices, then returns the contexts' repositories. */
async function seeded(db: TableContext) {
  await db.ensureTables(BucketedReading, PlainReading, BenchItem);
  const base = Date.UTC(2025, 0, 1);
  const values = Array.from({ length: ROWS }, (_, i) => ({
    site: "north",
    device: `dev${i % 64}`,
    at: new Date(base + i * 1000),
    value: i,
  }));
  const bucketed = db.repository(BucketedReading);
  const plain = db.repository(PlainReading);
  await bucketed.bulkUpsert(values.map((v) => bucketed.create(v)));
  await plain.bulkUpsert(values.map((v) => plain.create(v)));
  const items = db.repository(BenchItem);
  await items.bulkUpsert(Array.from({ length: 1_000 }, (_, i) => benchItem("many", i)));
  return { bucketed, plain, items };
}

/** Runs the comparisons on `connectionString` with no added delay and with the in-region delay. */
export async function parallelReads(
  connectionString: string,
  record: Recorder,
  quick: boolean,
): Promise<void> {
  console.log(`\n[11] parallel reads: getMany and a ${BUCKETS}-bucket fan-out`);
  const db = new TableContext({
    store: AzureStore.fromConnectionString(connectionString),
    tablePrefix: "par",
  });
  await seeded(db);
  const proxy = await startLatencyProxy(connectionString, DELAY_MS);
  try {
    for (const [label, cs] of [
      ["loopback", connectionString],
      [`+${DELAY_MS} ms per answer`, proxy.connectionString],
    ] as const) {
      const context = new TableContext({ store: AzureStore.fromConnectionString(cs), tablePrefix: "par" });
      const bucketed = context.repository(BucketedReading);
      const plain = context.repository(PlainReading);
      const items = context.repository(BenchItem);
      const rounds = quick ? 3 : 9;
      const fanOut = await compare(
        rounds,
        async () => {
          const rows = await timeAsync(1, () => bucketed.find({ site: "north" }).toArray());
          return rows;
        },
        () => timeAsync(1, () => plain.find({ site: "north" }).toArray()),
      );
      const check = await bucketed.find({ site: "north" }).toArray();
      if (check.length !== ROWS) throw new Error(`fan-out returned ${check.length} rows, not ${ROWS}`);
      record(
        `fan-out of ${ROWS} rows over ${BUCKETS} buckets / one partition (${label})`,
        fanOut.a,
        fanOut.b,
        ms,
        1.5,
      );

      const keys = Array.from({ length: 100 }, (_, i) => ({ tenant: "many", id: (i * 7) % 1000 }));
      const many = await compare(
        rounds,
        () => timeAsync(1, () => items.getMany(keys)),
        () =>
          timeAsync(1, async () => {
            for (const key of keys) await items.get(key);
          }),
      );
      record(`getMany of 100 keys / 100 sequential gets (${label})`, many.a, many.b, ms, 0.2);
    }
  } finally {
    await proxy.close();
  }
}
