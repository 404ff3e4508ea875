import type { EntityModel } from "../../schema/entity-model.js";
import type { WireEntity } from "../../store/table-store.js";
import type { BulkWriter } from "../core/bulk/bulk-types.js";
import type { EntityWriter } from "../core/entity-writer.js";
import { PlainWriter } from "../core/plain-writer.js";
import type { RequestContext } from "../core/requests.js";
import type { StageSource } from "../core/write-plan.js";
import { IndexedWriter } from "../index/indexed-writer.js";
import { LargeStage, withPreparedWires } from "../large/large-stage.js";
import type { LargeValues } from "../large/large-values.js";
import type { SummaryCommitter } from "../summary/summary-committer.js";
import { summaryCompanions } from "../summary/summary-stage.js";
import { SummaryWriter } from "../summary/summary-writer.js";
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

/**
 * One feature's part in how an entity class writes. A stage either writes the entity's rows (the
 * first in `ROW_STAGES` that applies does: its commit is the write's entity group transaction, and it
 * takes the other stages' rows as `StageSource`s), or adds its own rows to that transaction
 * (`stages`), or wraps the row writer with steps before and after its commit (`AROUND_STAGES`).
 */
interface RowStage {
  readonly name: string;
  /** The row writer, when this stage writes the entity's rows; `stages` ride in its transaction. */
  rows<T extends object>(
    context: StageContext<T>,
    stages: StageSource | undefined,
  ): EntityWriter<T> | undefined;
}

interface AroundStage {
  readonly name: string;
  around<T extends object>(context: StageContext<T>, inner: Inner<T>): EntityWriter<T> | undefined;
}

/** The row writer as an around-stage builds it: on the model it prepares rows for. */
type Inner<T extends object> = (model: EntityModel<T>) => EntityWriter<T>;

/** Rows riding in the row writer's transaction: the summary rows of the partition (and their steps elsewhere). */
function stagesOf<T extends object>(context: StageContext<T>): StageSource | undefined {
  const { model, table, runner, summaries } = context;
  return summaries && summaryCompanions(model as unknown as EntityModel<object>, table, runner, summaries);
}

/**
 * Who writes the entity's rows, first match: rows with index copies, or a wide entity's rows (written
 * as an indexed entity's, its rows in place of the row, with the stages' rows if any), summarized
 * rows; when none applies, a plain row (`composeWriter`).
 */
const ROW_STAGES: readonly RowStage[] = [
  {
    name: "indexes",
    rows: (c, stages) =>
      c.model.indexes.size > 0 || c.model.wide
        ? new IndexedWriter(c.model, c.table, c.runner, stages)
        : undefined,
  },
  {
    name: "summaries",
    rows: (c) => c.summaries && new SummaryWriter(c.model, c.table, c.runner, c.summaries),
  },
];

/** Stages around the row writer, innermost first: large values upload before its commit and clean up after. */
const AROUND_STAGES: readonly AroundStage[] = [
  {
    name: "large",
    around: (c, inner) => {
      if (c.large === undefined) return undefined;
      const prepared = new WeakMap<object, WireEntity>();
      return new LargeStage(c.model, c.large, inner(withPreparedWires(c.model, prepared)), prepared);
    },
  },
];

/** The writer of one entity class: its row stage, with the other stages' rows and the stages around it. Built once per repository. */
export function composeWriter<T extends object>(context: StageContext<T>): EntityWriter<T> {
  const rowWriter = (model: EntityModel<T>): EntityWriter<T> => {
    const at = { ...context, model };
    const stages = stagesOf(at);
    for (const stage of ROW_STAGES) {
      const writer = stage.rows(at, stages);
      if (writer) return writer;
    }
    return new PlainWriter(model, context.table, context.runner);
  };
  let writer: Inner<T> = rowWriter;
  for (const stage of AROUND_STAGES) {
    const inner = writer;
    writer = (model) => stage.around({ ...context, model }, inner) ?? inner(model);
  }
  return writer(context.model);
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
