/**
 * Bulk writes of entities that keep more than their row (a same-partition copy and a summary row): a
 * `bulkInsert` commits each batch of a partition as one transaction plan. Measured on Azurite against
 * the fewest transactions the service allows for the same rows, and against the same entities
 * inserted one by one with 8 in flight (how such bulk writes ran before they were planned per batch).
 */
import { AzureStore, TableContext } from "../src/index.js";
import { StagedItem, stagedItem } from "./bench-entity.js";
import { type BenchRow, minimumRow } from "./measure.js";
import type { RateRecorder } from "./serve-vs-azurite.js";

export async function stagedBulk(
  connectionString: string,
  record: RateRecorder,
  rows: BenchRow[],
  quick: boolean,
): Promise<void> {
  const partitions = 10;
  const perPartition = quick ? 100 : 400;
  const total = partitions * perPartition;
  console.log(
    `\n[7b] bulkInsert of indexed, summarized entities (${total.toLocaleString("en")} over ${partitions} partitions)`,
  );
  let transactions = 0;
  let requests = 0;
  const contextFor = (tablePrefix: string) =>
    new TableContext({
      store: AzureStore.fromConnectionString(connectionString),
      tablePrefix,
      onEvent: (event) => {
        if (event.type === "request") requests++;
        if (event.type === "batch-committed") transactions++;
      },
    });
  // Each side writes into fresh tables, so both do the same work.
  const run = `${Date.now().toString(36)}`;
  const bulkDb = contextFor(`sb${run}`);
  const eachDb = contextFor(`se${run}`);
  await bulkDb.ensureTables(StagedItem);
  await eachDb.ensureTables(StagedItem);
  const items = (tenant: string) =>
    Array.from({ length: total }, (_, i) =>
      stagedItem(`${tenant}${i % partitions}`, Math.floor(i / partitions)),
    );

  requests = 0;
  transactions = 0;
  let start = performance.now();
  const result = await bulkDb.repository(StagedItem).bulkInsert(items("p"));
  const bulkMs = performance.now() - start;
  if (result.written !== total) throw new Error(`bulkInsert wrote ${result.written} of ${total}`);
  const bulkRequests = requests;
  const bulkTransactions = transactions;

  const each = eachDb.repository(StagedItem);
  const pending = items("p");
  start = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let item = pending.shift(); item !== undefined; item = pending.shift()) await each.insert(item);
    }),
  );
  const eachMs = performance.now() - start;
  // Each entity is its row and its copy; each transaction also carries the partition's summary row.
  const minimum = partitions * Math.ceil(perPartition / Math.floor(99 / 2));
  record(
    `staged bulkInsert speed-up over single inserts ×8 (${total.toLocaleString("en")})`,
    eachMs,
    bulkMs,
    (v) => `${v.toFixed(0)} ms`,
    undefined,
    false,
  );
  // A count, not a timing: met only while the batches pack near the fewest transactions (1.000× measured).
  rows.push(
    minimumRow(
      "staged bulkInsert transactions / minimum EGTs",
      bulkTransactions,
      "transactions",
      minimum,
      1.1,
    ),
  );
  console.log(
    `  ${result.written} written in ${result.batches} batches, ${bulkTransactions} transactions, ${bulkRequests} requests (minimum ${minimum} EGTs)`,
  );
}
