import type { EntityModel, SummaryModel } from "../../schema/entity-model.js";
import type { StateScope } from "../../util/scoped-state.js";
import type { CompanionWrite, StageDescription } from "../core/group-companion.js";
import { INTENTS_TABLE } from "../core/intent-log.js";
import type { TableNaming } from "../core/requests.js";
import {
  contributionRowKey,
  remotePartitionOf,
  remoteSummariesOf,
  summarySource,
} from "./remote-summaries.js";
import { SummaryCache, summaryCacheKey } from "./summary-cache.js";
import { summaryMarker } from "./summary-row.js";

/**
 * The summaries of entity writes of one partition, as data (issue 30: a description holds no store):
 * what a summary stage sends is described from these alone (`describeSummaryStage`).
 */
export interface SummaryStagePlan {
  readonly model: EntityModel<object>;
  /** The physical table of the entities and of their partition's summary rows. */
  readonly table: string;
  /** The partition the writes are of, as `summarySource` names it (a remote summary's contribution). */
  readonly source: string;
  readonly writes: readonly CompanionWrite[];
  /** Per summary of the model, in order: whether its row's state is cached (a first round reads none for it). */
  readonly cached: readonly boolean[];
  /**
   * Per summary kept elsewhere (`remoteSummariesOf`), in order: whether its contribution's state is
   * cached (`cachedContributions`): the mirror then replaces it on that ETag with no read; otherwise it
   * reads the contribution and replaces it if stored (`keptRowsStored`), else inserts it.
   */
  readonly mirrored?: readonly boolean[];
}

/** The summaries kept by an entity class, in the order their rows join a transaction. */
export function summariesOf(model: EntityModel<object>): SummaryModel[] {
  return [...model.summaries.values()];
}

/** Per summary of the model, whether the scope's cache holds its row in this partition (see `SummaryCache`). */
export function cachedSummaries(
  scope: StateScope,
  model: EntityModel<object>,
  table: string,
  partitionKey: string,
): boolean[] {
  const cache = SummaryCache.of(scope);
  return summariesOf(model).map(
    (summary) =>
      cache.get(summaryCacheKey(table, partitionKey, summary.rowKey, summaryMarker(model, summary))) !==
      undefined,
  );
}

/**
 * Whether the summary rows of the writes' partition are stored, though not cached: they are when an
 * entity of that partition is (a write conditional on its stored version), since every write of a
 * summarized entity keeps its partition's summary rows and their contributions elsewhere. For the rest,
 * a plan assumes what it is not given is absent.
 */
function keptRowsStored(writes: readonly CompanionWrite[]): boolean {
  return writes.some((write) => write.condition !== undefined);
}

/** The reads of a first round (rows before, uncached summary rows) and the summary rows it writes. */
export function describeSummaryRows(plan: Omit<SummaryStagePlan, "source">): StageDescription {
  const { model, table, writes, cached } = plan;
  const partitionKey = (writes[0] as CompanionWrite).partitionKey;
  const summaries = summariesOf(model);
  const reads: StageDescription["reads"] = [];
  for (const { rowKey, condition, before: stored } of writes) {
    if (condition === undefined || stored?.etag === condition) continue;
    // A wide entity's rows are read as one range query.
    const request = `${model.wide ? "query" : "get"} (row before, for the summary delta)`;
    reads.push({ request, table, partitionKey, rowKey });
  }
  summaries.forEach((summary, at) => {
    if (cached[at] === true) return;
    const request = `get (summary ${summary.name})`;
    reads.push({ request, table, partitionKey, rowKey: summary.rowKey });
  });
  // As sent: a row whose state is cached, or that the round reads and finds, is replaced on its ETag;
  // one the round finds absent is inserted.
  const stored = keptRowsStored(writes);
  const operations = summaries.map((summary, at) => ({
    kind: `${cached[at] === true || stored ? "update" : "insert"} summary (${summary.name})`,
    rowKey: summary.rowKey,
  }));
  return { before: [], reads, operations, after: [] };
}

/**
 * What a summary stage sends: before the commit, the intent when a summary is kept elsewhere; the rows'
 * reads; its rows in the transaction; after, each contribution mirrored and the intent removed.
 */
export function describeSummaryStage(plan: SummaryStagePlan, naming: TableNaming): StageDescription {
  const own = describeSummaryRows(plan);
  const model = plan.model as EntityModel;
  const remote = remoteSummariesOf(model);
  if (remote.length === 0) return own;
  const intents = naming.tableName(INTENTS_TABLE);
  const stored = keptRowsStored(plan.writes);
  return {
    before: [{ request: "insert summary intent", table: intents }],
    reads: own.reads,
    operations: own.operations,
    after: [
      ...remote.flatMap((summary, at) => {
        const place = {
          table: naming.tableName(summary.remote.table),
          partitionKey: remotePartitionOf(model, summary, plan.source),
          rowKey: contributionRowKey(summary, plan.source),
        };
        // `RemoteSummaries.mirror`: a cached contribution replaced on its ETag; else read, then written
        // (replaced on the ETag read, or inserted when absent).
        if (plan.mirrored?.[at] === true)
          return [{ request: `replace contribution (${summary.name})`, ...place }];
        return [
          { request: `get contribution (${summary.name})`, ...place },
          { request: `${stored ? "replace" : "insert"} contribution (${summary.name})`, ...place },
        ];
      }),
      { request: "delete summary intent", table: intents },
    ],
  };
}

/**
 * The summary stage of writes of one partition, as data: the partition it mirrors named, a remote
 * summary's PartitionKey checked (a `ValidationError` before any request). `cached`: what the scope's
 * cache holds of its rows now (`cachedSummaries`).
 */
export function planSummaryStage(
  model: EntityModel<object>,
  naming: TableNaming,
  table: string,
  writes: readonly CompanionWrite[],
  cached: readonly boolean[],
): SummaryStagePlan {
  const source = summarySource(
    model as EntityModel,
    naming,
    table,
    (writes[0] as CompanionWrite).partitionKey,
  );
  for (const summary of remoteSummariesOf(model as EntityModel))
    remotePartitionOf(model as EntityModel, summary, source);
  return { model, table, source, writes, cached };
}

/** Per summary kept elsewhere, whether the scope's cache holds the contribution of `source` (see `SummaryStagePlan.mirrored`). */
export function cachedContributions(
  scope: StateScope,
  model: EntityModel<object>,
  naming: TableNaming,
  source: string,
): boolean[] {
  const cache = SummaryCache.of(scope);
  return remoteSummariesOf(model as EntityModel).map((summary) => {
    const table = naming.tableName(summary.remote.table);
    const partitionKey = remotePartitionOf(model as EntityModel, summary, source);
    const rowKey = contributionRowKey(summary, source);
    return (
      cache.get(summaryCacheKey(table, partitionKey, rowKey, summaryMarker(model, summary))) !== undefined
    );
  });
}
