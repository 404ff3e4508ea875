import type { EntityModel } from "../../schema/entity-model.js";
import { etagIn, rememberEtag } from "../../serialization/entity-etag.js";
import type { StoredEntity, WireEntity, WriteMode } from "../../store/table-store.js";
import { type CommitResults, commitRounds } from "../core/commit-rounds.js";
import type { EntityWriter } from "../core/entity-writer.js";
import type { Backoff, Clock, Limited, Requests, Scoped, TableNaming } from "../core/requests.js";
import {
  type AssumedState,
  type ExplainedOperation,
  type ExplainedPlan,
  NOTHING_STORED,
  runPlan,
  stageSteps,
  type WritePlan,
} from "../core/write-plan.js";
import { holdsWrittenState } from "../core/written-state.js";
import type { SummarizedWrite, SummaryCommitter } from "./summary-committer.js";
import { SummaryWriteStage } from "./summary-write-stage.js";

/**
 * Writes entities that have summaries: every write, single or bulk, commits in one entity group
 * transaction with the summary rows of its partition (see `SummaryCommitter`). Bulk writes send at
 * most 100 operations per transaction, the summary rows included (99 entities with one summary).
 */
export class SummaryWriter<T extends object> implements EntityWriter<T> {
  readonly #model: EntityModel<T>;
  readonly #table: string;
  readonly #runner: Requests & TableNaming & Scoped & Limited & Clock & Backoff;
  readonly #committer: SummaryCommitter;

  constructor(
    model: EntityModel<T>,
    table: string,
    runner: Requests & TableNaming & Scoped & Limited & Clock & Backoff,
    committer: SummaryCommitter,
  ) {
    this.#model = model;
    this.#table = table;
    this.#runner = runner;
    this.#committer = committer;
  }

  insert(entity: T): Promise<void> {
    const wire = this.#wire(entity);
    return this.#one(entity, wire, "insert", { kind: "insert", wire });
  }

  upsert(entity: T, mode: WriteMode): Promise<void> {
    const wire = this.#wire(entity);
    return this.#one(entity, wire, mode === "merge" ? "patch" : "upsert", { kind: "upsert", wire, mode });
  }

  update(entity: T, mode: WriteMode, ifMatch: string): Promise<void> {
    const wire = this.#wire(entity);
    return this.#one(entity, wire, "update", { kind: "update", wire, mode, ifMatch });
  }

  async delete(key: Partial<T>, ifMatch: string | undefined): Promise<boolean> {
    const values = key as Record<string, unknown>;
    const partitionKey = this.#model.partitionKey.encode(values, "PartitionKey");
    const rowKey = this.#model.rowKey.encode(values, "RowKey");
    this.#committer.assertNotSummaryKey(rowKey);
    const condition = ifMatch ?? etagIn(key, this.#runner.scope);
    const write: SummarizedWrite = { kind: "delete", partitionKey, rowKey, ifMatch: condition };
    const { plan, stage } = this.#plan("delete", partitionKey, rowKey, write);
    await runPlan(plan);
    rememberEtag(key, undefined, this.#runner.scope);
    return stage.outcome?.existed ?? false;
  }

  /**
   * The plan of one write: with a summary kept elsewhere its intent first; the reads of the row
   * before (not for an insert) and of uncached summary rows; one transaction with the entity and the
   * summary rows; after it, each contribution mirrored and the intent removed (see `SummaryWriteStage`).
   */
  explain(operation: ExplainedOperation, value: T, assumed: AssumedState = NOTHING_STORED): ExplainedPlan {
    const values = value as Record<string, unknown>;
    const partitionKey = this.#model.partitionKey.encode(values, "PartitionKey");
    const rowKey = this.#model.rowKey.encode(values, "RowKey");
    this.#committer.assertNotSummaryKey(rowKey);
    // The write is never sent: only its keys and operation shape the rendered plan.
    const write: SummarizedWrite = { kind: "delete", partitionKey, rowKey, ifMatch: undefined };
    const plan = this.#plan(operation, partitionKey, rowKey, write).plan;
    // A delete of an entity the state says is absent: its first round reads the row and finds nothing to
    // do, so nothing is committed (`commitRounds` sends no empty transaction) and nothing is mirrored;
    // a summary kept elsewhere still removes its intent.
    if (operation === "delete" && assumed(partitionKey, rowKey) === undefined)
      return {
        before: plan.before,
        after: plan.after.filter((step) => step.request === "delete summary intent"),
      };
    return plan;
  }

  /** The plan of one write, its summary rows the stage whose rows are the whole transaction (see `SummaryWriteStage`). */
  #plan(
    operation: ExplainedOperation,
    partitionKey: string,
    rowKey: string,
    write: SummarizedWrite,
  ): { plan: WritePlan<CommitResults>; stage: SummaryWriteStage } {
    const model = this.#model as unknown as EntityModel<object>;
    const runner = this.#runner;
    const stage = new SummaryWriteStage(
      model,
      this.#table,
      runner,
      this.#committer,
      partitionKey,
      rowKey,
      write,
      operation,
    );
    const { before, operations, after } = stageSteps(stage);
    const table = this.#table;
    const send = () => commitRounds(runner, table, partitionKey, [], [stage], stage.rules);
    return {
      plan: { before, commit: { request: "transaction", table, partitionKey, operations, send }, after },
      stage,
    };
  }

  track(_entity: T, _stored: StoredEntity): void {
    // The ETag is all an instance needs: updates read the stored row for the summary's delta.
  }

  #wire(entity: T): WireEntity {
    const wire = this.#model.mapper.toWire(entity);
    this.#committer.assertNotSummaryKey(wire.rowKey);
    return wire;
  }

  /** One write in its own transaction with the summary rows (its plan run); the instance's ETag tracked afterwards. */
  async #one(
    entity: T,
    wire: WireEntity,
    operation: ExplainedOperation,
    write: SummarizedWrite,
  ): Promise<void> {
    const { plan, stage } = this.#plan(operation, wire.partitionKey, wire.rowKey, write);
    await runPlan(plan);
    let etag = stage.outcome?.etag;
    if (etag === undefined) {
      // Committed, but its answer was lost: track the ETag only if nobody has written the entity since.
      const stored = await this.#runner.run("get", this.#table, (s) =>
        s.getEntity(this.#table, wire.partitionKey, wire.rowKey),
      );
      const mode = write.kind === "upsert" || write.kind === "update" ? write.mode : "replace";
      etag = stored && holdsWrittenState(wire, stored, mode) ? stored.etag : undefined;
    }
    rememberEtag(entity, etag, this.#runner.scope);
  }
}
