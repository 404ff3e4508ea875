import { StoreError } from "../../errors.js";
import { quoteString } from "../../query/odata.js";
import type { StoredEntity, StorePage } from "../../store/table-store.js";
import type { Requests } from "./requests.js";

/** How an intent log's rows are spread: partitions `<prefix>0` … `<prefix>{shards - 1}` of one table. */
export interface IntentShards {
  readonly table: string;
  readonly prefix: string;
  readonly shards: number;
  /** Whether a table that does not exist yet (404) simply holds no intents. */
  readonly missingTableIsEmpty: boolean;
}

/**
 * Every row of an intent log, shard by shard, each shard in key order (intent RowKeys start with their
 * time, so oldest first). Intents are sharded so concurrent writers do not share one hot partition.
 */
export async function* intentShardRows(runner: Requests, log: IntentShards): AsyncIterable<StoredEntity> {
  const { table } = log;
  for (let shard = 0; shard < log.shards; shard++) {
    const filter = `PartitionKey eq ${quoteString(`${log.prefix}${shard}`)}`;
    let continuation: StorePage["continuation"];
    do {
      let page: StorePage;
      try {
        page = await runner.run("listIntents", table, (s) =>
          s.queryPage(table, { filter, ...(continuation ? { continuation } : {}) }),
        );
      } catch (error) {
        if (log.missingTableIsEmpty && error instanceof StoreError && error.statusCode === 404) return;
        throw error;
      }
      yield* page.items;
      continuation = page.continuation;
    } while (continuation);
  }
}
