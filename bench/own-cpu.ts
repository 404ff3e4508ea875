/**
 * tablekit's own client CPU per write, with the service taken out: a context whose store answers
 * every upsert and transaction at once (a MemoryStore whose two write methods return a fixed ETag), so
 * what is measured is the repository, the pipeline and the mapping alone, with far less noise than a
 * ratio against the SDK over a socket. The entity is made inside the loop, as on the SDK side of the
 * write-cpu rows; its cost alone is printed beside (`making the entity`).
 */
import { MemoryStore, TableContext, type TableStore } from "../src/index.js";
import { BenchItem, benchItem } from "./bench-entity.js";
import { type BenchRow, median } from "./measure.js";

/** A MemoryStore whose upserts and transactions are answered at once, without storing anything. */
function answeringStore(): TableStore {
  const memory = new MemoryStore();
  const written = { etag: `W/"datetime'2025-01-01T00%3A00%3A00.0000000Z'"` };
  const answers: Partial<TableStore> = {
    upsert: () => Promise.resolve(written),
    submitTransaction: (_table, _partitionKey, actions) => Promise.resolve(actions.map(() => written)),
  };
  return new Proxy(memory, {
    get(target, name) {
      if (name in answers) return answers[name as keyof TableStore];
      const value = Reflect.get(target, name, target) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** Microseconds of this process's CPU per call of `fn` over `count` calls. */
async function cpuPer(count: number, fn: (i: number) => Promise<unknown> | unknown): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < count; i++) await fn(i);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / count;
}

export async function ownCpu(rows: BenchRow[], quick: boolean): Promise<void> {
  console.log("\n[2b] tablekit's own client CPU per write, on a store that answers at once");
  const db = new TableContext({ store: answeringStore() });
  await db.ensureTables(BenchItem);
  const repo = db.repository(BenchItem);
  const count = quick ? 5_000 : 20_000;
  const samples = { upsert: [] as number[], transaction: [] as number[], entity: [] as number[] };
  for (let round = 0; round < (quick ? 6 : 12); round++) {
    const upsert = await cpuPer(count, (i) => repo.upsert(benchItem("upsert", i)));
    const transaction = await cpuPer(count / 100, () =>
      db.transaction((t) => {
        for (let i = 0; i < 100; i++) t.upsert(benchItem("tx", i));
      }),
    );
    const entity = await cpuPer(count, (i) => benchItem("upsert", i));
    // The first two rounds warm the JIT up.
    if (round < 2) continue;
    samples.upsert.push(upsert);
    samples.transaction.push(transaction);
    samples.entity.push(entity);
  }
  const us = (v: number) => `${v.toFixed(2)} µs`;
  const entity = median(samples.entity);
  for (const [name, values, made] of [
    ["single upsert", samples.upsert, entity],
    ["100-op transaction", samples.transaction, 100 * entity],
  ] as const) {
    const cpu = median(values);
    rows.push({
      name: `tablekit's own CPU per ${name} (store answering at once; making the entities: ${us(made)})`,
      ours: us(cpu),
      baseline: "-",
      ratio: Number.NaN,
      target: "-",
      met: true,
    });
    console.log(`  ${name}: ${us(cpu)} of CPU (of which making the entities ${us(made)})`);
  }
}
