import { StoreError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import type { TransactionAction, WriteResult } from "../../store/table-store.js";
import type {
  CompanionSource,
  CompanionWrite,
  GroupCompanion,
  StageDescription,
} from "../core/group-companion.js";
import { isOutcomeUnknown } from "../core/lost-answers.js";
import type { Backoff, Clock, Requests, Scoped, TableNaming } from "../core/requests.js";
import {
  RemoteSummaries,
  type RemoteSummary,
  remotePartitionOf,
  remoteSummariesOf,
  summarySource,
} from "./remote-summaries.js";
import type { SummaryCommitter } from "./summary-committer.js";
import { SummaryCompanion } from "./summary-companion.js";
import { cachedContributions, describeSummaryStage, type SummaryStagePlan } from "./summary-description.js";
import type { SummaryIntent } from "./summary-intents.js";
import { SummaryIntents } from "./summary-intents.js";

/**
 * The summaries of entity writes of one partition committed in a caller's transaction, as a stage of
 * its plan: the rows in the partition ride in the transaction (`companion`); a summary kept in another
 * partition adds an intent before the commit and, after it, the partition's new state mirrored into its
 * contribution row and the intent removed, so `db.repair()` finishes what a crash leaves. The one summary
 * stage of every write form: a single write's (through `summaryCompanions`), a transaction's and a bulk batch's.
 */
export class SummaryStage implements GroupCompanion {
  readonly companion: GroupCompanion;
  readonly #summaries: SummaryCompanion;
  readonly #plan: Omit<SummaryStagePlan, "cached">;
  readonly #committer: SummaryCommitter;
  readonly #model: EntityModel<object>;
  readonly #runner: Requests & TableNaming & Scoped & Clock & Backoff;
  /** The source partition (and period table) whose local rows are mirrored (see `summarySource`). */
  readonly #source: string;
  readonly #remote: RemoteSummary[];
  #intent: SummaryIntent | undefined;

  /** `plan.source`: the partition the writes are of, as `summarySource` names it (a planner's naming, no request). */
  constructor(
    plan: Omit<SummaryStagePlan, "cached">,
    runner: Requests & TableNaming & Scoped & Clock & Backoff,
    committer: SummaryCommitter,
  ) {
    const { model, table, source, writes } = plan;
    this.#plan = plan;
    this.#committer = committer;
    this.#model = model;
    this.#runner = runner;
    this.#source = source;
    this.#remote = remoteSummariesOf(model as EntityModel);
    // Bad remote keys are refused before any request.
    for (const summary of this.#remote) remotePartitionOf(model as EntityModel, summary, this.#source);
    this.#summaries = new SummaryCompanion(model, table, runner, committer, writes);
    this.companion = this.#summaries;
  }

  get rowKeys(): readonly string[] {
    return this.#summaries.rowKeys;
  }

  /** What the stage sends, from its plan and the summary rows cached now (`describeSummaryStage`). */
  describe(): StageDescription {
    const partitionKey = (this.#plan.writes[0] as CompanionWrite).partitionKey;
    const cached = this.#committer.cachedRows(partitionKey);
    const runner = this.#runner;
    const mirrored = cachedContributions(runner.scope, this.#plan.model, runner, this.#plan.source);
    return describeSummaryStage({ ...this.#plan, cached, mirrored }, runner);
  }

  plan(round: number): Promise<TransactionAction[]> {
    return this.#summaries.plan(round);
  }

  committed(results: readonly WriteResult[] | undefined): void {
    this.#summaries.committed(results);
  }

  settle(error: unknown): Promise<"applied" | "retry" | undefined> {
    return this.#summaries.settle(error);
  }

  /** Before the commit: the intent naming the source partition, when a summary is kept elsewhere. */
  async before(): Promise<void> {
    if (this.#remote.length === 0) return;
    const intents = new SummaryIntents(this.#runner);
    this.#intent = await intents.record(
      this.#model.type,
      this.#model.table,
      this.#source,
      this.#runner.now(),
    );
  }

  /** After the commit: each remote summary mirrors the partition's new state; then the intent is removed. */
  async after(): Promise<void> {
    const intent = this.#intent;
    if (intent === undefined) return;
    const mirrors = new RemoteSummaries(this.#model as EntityModel, this.#runner);
    try {
      for (const summary of this.#remote) {
        const state = this.#summaries.plannedState(summary);
        if (state === undefined) return;
        await mirrors.mirror(summary, this.#source, state);
      }
    } catch {
      // The write committed: its remote summaries catch up through the intent, on `db.repair()`.
      return;
    }
    await new SummaryIntents(this.#runner).complete(intent).catch(() => undefined);
  }

  /** The commit failed: a definite refusal left nothing to mirror; a fault keeps the intent for repair. */
  async abandon(error: unknown): Promise<void> {
    const intent = this.#intent;
    if (intent === undefined || isOutcomeUnknown(error) || error instanceof StoreError) return;
    await new SummaryIntents(this.#runner).complete(intent).catch(() => undefined);
  }
}

/**
 * The summaries of an entity written by another writer (an indexed entity's): each write's summary
 * rows ride in that writer's entity group transaction, with the same rules as `SummaryCommitter`
 * (delta from the row the entity action is conditional on, each summary row conditional on its ETag,
 * a lost answer settled by the summary row's write log).
 */
export function summaryCompanions(
  model: EntityModel<object>,
  table: string,
  runner: Requests & TableNaming & Scoped & Clock & Backoff,
  committer: SummaryCommitter,
): CompanionSource {
  const remote = remoteSummariesOf(model as EntityModel).length > 0;
  const stageOf = (writes: readonly CompanionWrite[]) => {
    const source = summarySource(
      model as EntityModel,
      runner,
      table,
      (writes[0] as CompanionWrite).partitionKey,
    );
    return new SummaryStage({ model, table, source, writes }, runner, committer);
  };
  return {
    reserved: committer.reserved,
    assertKey: (rowKey) => committer.assertNotSummaryKey(rowKey),
    // With a summary kept in another partition, the stage adds its intent before and its mirror after.
    companion: (write) =>
      remote ? stageOf([write]) : new SummaryCompanion(model, table, runner, committer, [write]),
  };
}
