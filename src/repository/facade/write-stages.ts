import type { EntityModel } from "../../schema/entity-model.js";
import type { BulkWriter } from "../core/bulk/bulk-types.js";
import { keepsCopies } from "../core/entity-features.js";
import type { EntityWriter } from "../core/entity-writer.js";
import { PlainWriter } from "../core/plain-writer.js";
import type { RequestContext } from "../core/requests.js";
import type { StageSource } from "../core/write-plan.js";
import { IndexedWriter } from "../index/indexed-writer.js";
import { LargeStage } from "../large/large-stage.js";
import type { LargeValues } from "../large/large-values.js";
import type { SummaryCommitter } from "../summary/summary-committer.js";
import { summaryCompanions } from "../summary/summary-stage.js";
import { PlannedBulk } from "./planned-bulk.js";

/** What the stages of one entity class in one physical table are built from. */
export interface StageContext<T extends object> {
  model: EntityModel<T>;
  table: string;
  runner: RequestContext;
  /** The summary rows' reads and cache, when the entity keeps summaries. */
  summaries: SummaryCommitter | undefined;
  /** The blob half of large columns, when the entity has them (and a table of its own). */
  large: LargeValues | undefined;
}

/** Rows riding in the row writer's transaction: the summary rows of the partition (and their steps elsewhere). */
function stagesOf<T extends object>(context: StageContext<T>): StageSource | undefined {
  const { model, table, runner, summaries } = context;
  return summaries && summaryCompanions(model as unknown as EntityModel<object>, table, runner, summaries);
}

/**
 * Who writes the entity's rows: an entity with index copies, stages' rows (summaries) or a wide
 * entity's rows is written by `IndexedWriter` (its plan: `planEntityWrite`, committed in rounds by
 * `commitRounds`, the stages' rows riding in its transaction, a wide entity's rows in place of the
 * row); any other, a plain row, in one request (`PlainWriter`).
 */
function rowWriter<T extends object>(context: StageContext<T>): EntityWriter<T> {
  const { model, table, runner } = context;
  const stages = stagesOf(context);
  if (keepsCopies(model) || model.wide || stages !== undefined)
    return new IndexedWriter(model, table, runner, stages);
  return new PlainWriter(model, table, runner);
}

/**
 * The writer of one entity class, built once per repository: its row writer, wrapped in the
 * large-value stage when it has large columns (values uploaded before the row writer's commit, the
 * replaced ones removed after it).
 */
export function composeWriter<T extends object>(context: StageContext<T>): EntityWriter<T> {
  if (context.large === undefined) return rowWriter(context);
  return new LargeStage(context.model, context.large, rowWriter(context));
}

/**
 * The bulk writer of one entity class: a plain entity's batches carry its rows alone (`PlainWriter`);
 * any other entity's batch is the plan of a transaction of its writes, every stage included
 * (`PlannedBulk`).
 */
export function composeBulkWriter<T extends object>(
  context: StageContext<T>,
  writer: EntityWriter<T>,
): BulkWriter<T> {
  if (writer instanceof PlainWriter) return writer;
  return new PlannedBulk(context.model, context.table, context.runner, context.summaries);
}
