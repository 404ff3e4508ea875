import { type EntityClass, type EntityModel, getEntityModel } from "../../schema/entity-model.js";
import type { TableStore } from "../../store/table-store.js";
import type { RepairKind } from "../core/repair-kind.js";
import type { RequestContext } from "../core/requests.js";
import { trimFeeds } from "../feed/feed-trimmer.js";
import { repairAllIndexes } from "../index/index-repair-kind.js";
import {
  type LargeValueRepairOptions,
  type LargeValueRepairResult,
  repairLargeValues,
} from "../large/large-value-repairer.js";
import { largeColumnsOf } from "../large/large-values.js";
import type { FeedDirectory } from "../pipeline/feed/feed-directory.js";
import type { PeriodTableNames } from "../pipeline/period-table-store.js";
import { droppedPeriodDrift } from "../summary/dropped-periods.js";
import { repairSummaryIntents } from "../summary/repair-summary-intents.js";
import { repairSummaries } from "../summary/summary-repairer.js";
import { type SummaryDrift, verifySummaries } from "../summary/summary-verifier.js";
import { periodTablesOf } from "./context-tables.js";
import { repairEventual } from "./eventual/repair-eventual.js";
import type { EventualDeps } from "./eventual/run-eventually.js";
import { sweepExpired } from "./sweep-expired.js";

/** What the repair kinds of a context read: its runner, the classes it has seen, its eventual transactions. */
export interface RepairSources {
  runner: RequestContext;
  periodTables: PeriodTableNames;
  /** Every class seen, by `${table lowercased}\u0000${type}`. */
  types: ReadonlyMap<string, EntityModel>;
  eventual: () => EventualDeps;
  /** The store the context was given: its own repair (`TableStore.repair`, e.g. a ShardedStore's move) runs first. */
  store: TableStore;
  /** The partitions with changes, for trimming the change feeds past retention. */
  feedDirectory: FeedDirectory;
}

/**
 * The kinds of unfinished work `db.repair()` finishes, in order: the store's own (when it has any: a
 * shard move cut short, so the passes after it read settled partitions), index intents, eventual
 * transactions, remote summaries, blobs, the deletes of entities that expired (`expiresAt`; a sweep of
 * each class seen), and change feeds past retention (after the sweep, so its ttl changes are counted).
 */
export function repairKindsOf(sources: RepairSources): RepairKind[] {
  const { runner, periodTables, types, store } = sources;
  /**
   * The blobs of eventual intents this pass left for later (their values are uploaded before their
   * steps run): the large-value kind keeps them. `undefined` when the eventual kind did not list every intent.
   */
  let heldBlobs: Set<string> | undefined;
  const storeKind: RepairKind[] =
    store.repair === undefined
      ? []
      : [
          {
            name: "store",
            run: async ({ minIntentAgeMs }) => ({ ...(await store.repair?.({ minIntentAgeMs })) }),
          },
        ];
  return [
    ...storeKind,
    {
      name: "indexes",
      run: async ({ minIntentAgeMs }) => ({
        ...(await repairAllIndexes(runner, periodTables, types.values(), minIntentAgeMs)),
      }),
    },
    {
      name: "eventually",
      run: async ({ minIntentAgeMs, errors }) => {
        heldBlobs = undefined;
        const held = new Set<string>();
        const counts = await repairEventual(sources.eventual(), minIntentAgeMs, errors, held);
        heldBlobs = held;
        return { ...counts };
      },
    },
    {
      name: "summaries",
      run: async ({ minIntentAgeMs, errors }) => ({
        ...(await repairSummaryIntents(
          runner,
          (table, type) => types.get(`${table.toLowerCase()}\u0000${type}`),
          minIntentAgeMs,
          errors,
        )),
      }),
    },
    {
      name: "largeValues",
      run: async ({ minIntentAgeMs, errors }) => ({
        ...(await repairAllLargeValues(runner, types.values(), minIntentAgeMs, errors, heldBlobs)),
      }),
    },
    {
      name: "expiry",
      run: async ({ errors }) => ({ deleted: await sweepAll(sources, errors) }),
    },
    {
      // Changes (and deleted entities' versions) older than each feed's retention.
      name: "changeFeed",
      run: async () => ({
        ...(await trimFeeds(runner, sources.feedDirectory, types.values(), runner.limits)),
      }),
    },
  ];
}

/** The expiry kind of `repair`: sweeps every class seen with `expiresAt`; a failing class does not stop the others. */
async function sweepAll(sources: RepairSources, errors: unknown[]): Promise<number> {
  let deleted = 0;
  for (const model of sources.types.values()) {
    if (model.expiry === undefined) continue;
    const known = sources.eventual().repositoryOf(model.table, model.type, model as EntityModel<object>);
    if (known === undefined) continue;
    try {
      deleted += (await sweepExpired(known.repository, sources.runner)).deleted;
    } catch (error) {
      errors.push(error);
    }
  }
  return deleted;
}

/** `db.repairLargeValues`: the class's table, or every period's table. */
export async function repairLargeValuesOf(
  runner: RequestContext,
  entityClass: EntityClass,
  options: LargeValueRepairOptions,
): Promise<LargeValueRepairResult> {
  const model = getEntityModel(entityClass) as EntityModel;
  const tables =
    model.tableTemplate === undefined
      ? [runner.tableName(model.table)]
      : (await periodTablesOf(runner, entityClass, "repairLargeValues")).map((t) => t.name);
  return repairLargeValues(model, runner, tables, options);
}

/** The large-value kind of `repair`: every class seen with large columns; a failing class does not stop the others. */
async function repairAllLargeValues(
  runner: RequestContext,
  models: Iterable<EntityModel>,
  minIntentAgeMs: number,
  errors: unknown[],
  held: Set<string> | undefined,
): Promise<LargeValueRepairResult> {
  const total: LargeValueRepairResult = { blobsChecked: 0, blobsDeleted: 0 };
  // Which blobs pending eventual intents point at is unknown: removing none is the safe side.
  if (held === undefined) return total;
  for (const model of models) {
    if (largeColumnsOf(model) === undefined) continue;
    try {
      const result = await repairLargeValuesOf(runner, model.ctor, { minIntentAgeMs, held });
      total.blobsChecked += result.blobsChecked;
      total.blobsDeleted += result.blobsDeleted;
    } catch (error) {
      errors.push(error);
    }
  }
  return total;
}

/**
 * `db.verifySummaries` (`repair`: `db.repairSummaries`) over the class's table or each period's table,
 * then, for a table per period, the remote summaries' contributions of dropped periods (see `droppedPeriodDrift`).
 */
export async function summariesOf(
  runner: RequestContext,
  entityClass: EntityClass,
  repair: boolean,
): Promise<SummaryDrift[]> {
  const model = getEntityModel(entityClass);
  const each = repair ? repairSummaries : verifySummaries;
  if (model.tableTemplate === undefined) return each(model, runner);
  const drift: SummaryDrift[] = [];
  const method = repair ? "repairSummaries" : "verifySummaries";
  for (const { name } of await periodTablesOf(runner, entityClass, method))
    drift.push(...(await each(model, runner, name)));
  drift.push(...(await droppedPeriodDrift(model as EntityModel, runner, repair)));
  return drift;
}
