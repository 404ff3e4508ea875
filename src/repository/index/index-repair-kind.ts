import { StoreError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import type { TableStore } from "../../store/table-store.js";
import { INTENTS_TABLE } from "../core/intent-log.js";
import type { Backoff, Clock, PeriodTableLookup, Requests, TableNaming } from "../core/requests.js";
import type { PeriodTableNames } from "../pipeline/period-table-store.js";
import { type RepairResult, repairIndexes } from "./index-repairer.js";

/** What the `indexes` kind of `db.repair` did: `repairIndexes`' counts, summed, and what it could not replay. */
export interface IndexRepairCounts extends RepairResult {
  /** Index intents of entity types this context has not seen (their copies derive from the class). */
  unknownTypes: number;
}

/**
 * Finds the entity types with unfinished index work in one listing of the intents table (keys
 * only: the table holds only unfinished work), then replays each known type's intents. Index
 * intents live in partitions `<type>~<shard>`; eventual transactions and set-aside intents in
 * partitions starting with `~` or `poison~`.
 */
export async function repairAllIndexes(
  runner: Requests & TableNaming & Clock & Backoff & PeriodTableLookup,
  periodTables: PeriodTableNames,
  models: Iterable<EntityModel>,
  minIntentAgeMs: number,
): Promise<IndexRepairCounts> {
  const total: IndexRepairCounts = {
    intentsReplayed: 0,
    copiesWritten: 0,
    copiesDeleted: 0,
    poisoned: 0,
    unknownTypes: 0,
  };
  const pending = await pendingTypes(runner);
  const known = new Set<string>();
  for (const model of models) {
    if (!pending.has(model.type)) continue;
    known.add(model.type);
    const result = await repairIndexes(model, runner, periodTables, { minIntentAgeMs });
    total.intentsReplayed += result.intentsReplayed;
    total.copiesWritten += result.copiesWritten;
    total.copiesDeleted += result.copiesDeleted;
    total.poisoned += result.poisoned;
  }
  for (const [type, count] of pending) if (!known.has(type)) total.unknownTypes += count;
  return total;
}

/** Entity types with index intents, and how many each has. */
async function pendingTypes(runner: Requests & TableNaming): Promise<Map<string, number>> {
  const table = runner.tableName(INTENTS_TABLE);
  const types = new Map<string, number>();
  let continuation: { nextPartitionKey: string; nextRowKey?: string } | undefined;
  do {
    let page: Awaited<ReturnType<TableStore["queryPage"]>>;
    try {
      page = await runner.run("listIntents", table, (s) =>
        s.queryPage(table, { select: ["PartitionKey"], ...(continuation ? { continuation } : {}) }),
      );
    } catch (error) {
      // No intents table: nothing was ever left to do.
      if (error instanceof StoreError && error.statusCode === 404) return types;
      throw error;
    }
    for (const row of page.items) {
      const partition = row.partitionKey;
      if (partition.startsWith("~") || partition.startsWith("poison~")) continue;
      const type = partition.slice(0, partition.lastIndexOf("~"));
      types.set(type, (types.get(type) ?? 0) + 1);
    }
    continuation = page.continuation;
  } while (continuation);
  return types;
}
