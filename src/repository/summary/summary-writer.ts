import { StoreError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import { etagIn, rememberEtag } from "../../serialization/entity-etag.js";
import type { StoredEntity, WireEntity, WriteMode } from "../../store/table-store.js";
import { type CommitResults, commitRounds } from "../core/commit-rounds.js";
import type { EntityWriter } from "../core/entity-writer.js";
import { isOutcomeUnknown } from "../core/lost-answers.js";
import type { Backoff, Clock, Limited, Requests, Scoped, TableNaming } from "../core/requests.js";
import { type ExplainedOperation, runPlan, stageSteps, type WritePlan } from "../core/write-plan.js";
import { holdsWrittenState } from "../core/written-state.js";
import {
  RemoteSummaries,
  type RemoteSummary,
  remotePartitionOf,
  remoteSummariesOf,
  summarySource,
} from "./remote-summaries.js";
import type { SummarizedOutcome, SummarizedWrite, SummaryCommitter } from "./summary-committer.js";
import { SummaryIntents } from "./summary-intents.js";
import type { SummaryState } from "./summary-row.js";
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
  /** Summaries kept in another partition (mirrored after each commit), and their intents. */
  readonly #remote: RemoteSummary[];
  readonly #mirrors: RemoteSummaries;
  readonly #intents: SummaryIntents;
  readonly #now: () => number;

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
    this.#remote = remoteSummariesOf(model as EntityModel);
    this.#mirrors = new RemoteSummaries(model as EntityModel, runner);
    this.#intents = new SummaryIntents(runner);
    // The context's clock: intents are dated by the clock repair ages them by.
    this.#now = () => runner.now();
  }

  /**
   * Commits with the summary rows of the partition; with remote summaries, the eventually consistent
   * protocol around it: (1) an intent naming the source partition, recorded while the commit reads
   * (and durable before its transaction is sent); (2) the transaction, which keeps the local rows
   * exact; (3) each local row's new state mirrored as the partition's contribution row in the remote
   * partition (only if newer); (4) the intent removed. A crash anywhere leaves the intent, and
   * `db.repair()` mirrors the partition's current local rows (idempotent: absolute values, versioned).
   */
  async #commit(partitionKey: string, writes: readonly SummarizedWrite[]): Promise<SummarizedOutcome[]> {
    if (this.#remote.length === 0) return this.#committer.commit(partitionKey, writes);
    // The partition (and for a table per period, its period's table) whose local rows are mirrored.
    const source = summarySource(this.#model as EntityModel, this.#runner, this.#table, partitionKey);
    // Bad remote keys are refused before any request.
    for (const summary of this.#remote) remotePartitionOf(this.#model as EntityModel, summary, source);
    const recording = this.#intents.record(this.#model.type, this.#model.table, source, this.#now());
    // Awaited below whatever the commit does: never an unhandled rejection.
    const recorded = recording.then(
      (intent) => ({ intent }),
      (error: unknown) => ({ error }),
    );
    let committed: Awaited<ReturnType<SummaryCommitter["commitStates"]>>;
    try {
      committed = await this.#committer.commitStates(partitionKey, writes, recording);
    } catch (error) {
      const intent = await recorded;
      // The caller's refusal (a conflict, a missing entity, bad input) left nothing to mirror. A fault
      // keeps the intent for repair: a transaction that timed out may still land after we looked.
      if ("intent" in intent && !isOutcomeUnknown(error) && !(error instanceof StoreError))
        await this.#intents.complete(intent.intent).catch(() => undefined);
      throw error;
    }
    const intent = await recorded;
    if ("error" in intent) throw intent.error;
    const { outcomes, states } = committed;
    if (states !== undefined) {
      try {
        await Promise.all(
          this.#remote.map((summary) => {
            const at = this.#committer.summaries.indexOf(summary);
            const state = states[at] as Omit<SummaryState, "etag">;
            return this.#mirrors.mirror(summary, source, state);
          }),
        );
      } catch {
        // The write itself committed: its remote summaries catch up through the intent, on `db.repair()`.
        return outcomes;
      }
    }
    await this.#intents.complete(intent.intent).catch(() => undefined);
    return outcomes;
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
  explain(operation: ExplainedOperation, value: T): WritePlan<unknown> {
    const values = value as Record<string, unknown>;
    const partitionKey = this.#model.partitionKey.encode(values, "PartitionKey");
    const rowKey = this.#model.rowKey.encode(values, "RowKey");
    this.#committer.assertNotSummaryKey(rowKey);
    // The write is never sent: only its keys and operation shape the rendered plan.
    const write: SummarizedWrite = { kind: "delete", partitionKey, rowKey, ifMatch: undefined };
    return this.#plan(operation, partitionKey, rowKey, write).plan;
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
