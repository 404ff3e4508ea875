import { StoreError, TransactionError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import type { TransactionAction, WriteResult } from "../../store/table-store.js";
import type { CommitRules } from "../core/commit-rounds.js";
import type { GroupCompanion, StageDescription } from "../core/group-companion.js";
import { isOutcomeUnknown } from "../core/lost-answers.js";
import type { Backoff, Clock, Requests, Scoped, TableNaming } from "../core/requests.js";
import type { ExplainedOperation } from "../core/write-plan.js";
import {
  RemoteSummaries,
  type RemoteSummary,
  remotePartitionOf,
  remoteSummariesOf,
  summarySource,
} from "./remote-summaries.js";
import type {
  PlannedRound,
  SummarizedOutcome,
  SummarizedWrite,
  SummaryCommitter,
} from "./summary-committer.js";
import { cachedContributions, describeSummaryStage } from "./summary-description.js";
import type { SummaryIntent } from "./summary-intents.js";
import { SummaryIntents } from "./summary-intents.js";
import type { SummaryState } from "./summary-row.js";

type Recorded = { intent: SummaryIntent } | { error: unknown };

/**
 * One write of an entity with summaries (and no indexes), as the stage of its plan: each round reads
 * the row before (not for an insert) and the summary rows (cached state on round 1), plans the entity's
 * action conditional on what is stored and the summary rows with the delta (see
 * `SummaryCommitter.planRound`); the whole transaction is the stage's rows. A lost answer is settled
 * by the summary row's write log; `rules` reads a refusal as a lost race (planned again) or the
 * caller's error. With a summary kept in another partition: an intent recorded while the first round
 * reads (durable before the transaction is sent), after the commit each contribution mirrored and
 * the intent removed; a crash anywhere leaves the intent for `db.repair()`.
 */
export class SummaryWriteStage implements GroupCompanion {
  readonly #model: EntityModel<object>;
  readonly #table: string;
  readonly #runner: Requests & TableNaming & Scoped & Clock & Backoff;
  readonly #committer: SummaryCommitter;
  readonly #partitionKey: string;
  readonly #rowKey: string;
  readonly #write: SummarizedWrite;
  readonly #operation: ExplainedOperation;
  readonly #remote: RemoteSummary[];
  /** The source partition (and period table) whose local rows are mirrored. */
  readonly #source: string;
  #round: PlannedRound | undefined;
  #done: { outcomes: SummarizedOutcome[]; states: Array<Omit<SummaryState, "etag">> | undefined } | undefined;
  #recording: Promise<SummaryIntent> | undefined;
  #recorded: Promise<Recorded> | undefined;
  /** Only with a summary kept elsewhere: a plan renders a before- or after-step only for a stage that has one. */
  readonly before?: () => Promise<void>;
  readonly after?: () => Promise<void>;
  readonly abandon?: (error: unknown) => Promise<void>;

  constructor(
    model: EntityModel<object>,
    table: string,
    runner: Requests & TableNaming & Scoped & Clock & Backoff,
    committer: SummaryCommitter,
    partitionKey: string,
    rowKey: string,
    write: SummarizedWrite,
    operation: ExplainedOperation,
  ) {
    this.#model = model;
    this.#table = table;
    this.#runner = runner;
    this.#committer = committer;
    this.#partitionKey = partitionKey;
    this.#rowKey = rowKey;
    this.#write = write;
    this.#operation = operation;
    this.#remote = remoteSummariesOf(model as EntityModel);
    this.#source = summarySource(model as EntityModel, runner, table, partitionKey);
    // Bad remote keys are refused before any request.
    for (const summary of this.#remote) remotePartitionOf(model as EntityModel, summary, this.#source);
    if (this.#remote.length > 0) {
      this.before = () => this.#record();
      this.after = () => this.#mirror();
      this.abandon = (error) => this.#abandon(error);
    }
  }

  get rowKeys(): readonly string[] {
    return this.#committer.summaries.map((summary) => summary.rowKey);
  }

  /** What the write did (after the plan ran). */
  get outcome(): SummarizedOutcome | undefined {
    return this.#done?.outcomes[0];
  }

  /** How a definite refusal is read: a lost race is planned again, anything else is the caller's error. */
  get rules(): CommitRules {
    const committer = this.#committer;
    return {
      maxRounds: committer.maxRounds,
      refused: (error) => {
        // Only a definite refusal gets here (`settle` answers or throws for every other failure).
        const round = this.#round;
        if (round === undefined || !(error instanceof TransactionError)) return { error };
        try {
          committer.refusedRound(error, this.#partitionKey, [this.#write], round);
        } catch (thrown) {
          return { error: thrown };
        }
        return { replan: error };
      },
      exhausted: (cause) => committer.exhausted(this.#partitionKey, cause),
    };
  }

  async plan(round: number): Promise<TransactionAction[]> {
    const planned = await this.#committer.planRound(this.#partitionKey, [this.#write], round);
    this.#round = planned;
    if (planned.actions.length === 0) {
      // Nothing to write (a delete of an entity already gone): nothing is sent.
      this.#done = this.#committer.finishRound(this.#partitionKey, planned, undefined);
      return [];
    }
    // A remote summary's intent is durable before the transaction is sent.
    if (this.#recording !== undefined) await this.#recording;
    return planned.actions;
  }

  committed(results: readonly WriteResult[] | undefined): void {
    this.#done = this.#committer.finishRound(this.#partitionKey, this.#round as PlannedRound, results);
  }

  async settle(error: unknown): Promise<"applied" | "retry" | undefined> {
    return this.#committer.settleRound(error, this.#partitionKey, [this.#write], this.#round as PlannedRound);
  }

  /** The first round's reads (the row before, uncached summary rows), the entity's action and the summary rows. */
  describe(): StageDescription {
    const condition = this.#operation === "insert" ? undefined : "*";
    const write = {
      partitionKey: this.#partitionKey,
      rowKey: this.#rowKey,
      condition,
      before: undefined,
      after: undefined,
    };
    const partitionKey = this.#partitionKey;
    const cached = this.#committer.cachedRows(partitionKey);
    const mirrored = cachedContributions(this.#runner.scope, this.#model, this.#runner, this.#source);
    const plan = {
      model: this.#model,
      table: this.#table,
      source: this.#source,
      writes: [write],
      cached,
      mirrored,
    };
    const described = describeSummaryStage(plan, this.#runner);
    const kind = this.#operation === "patch" ? "merge" : this.#operation;
    return { ...described, operations: [{ kind, rowKey: this.#rowKey }, ...described.operations] };
  }

  /** Starts recording the intent naming the source partition; the first round's reads go on meanwhile. */
  async #record(): Promise<void> {
    const intents = new SummaryIntents(this.#runner);
    const recording = intents.record(this.#model.type, this.#model.table, this.#source, this.#runner.now());
    this.#recording = recording;
    // Awaited after (or when abandoned) whatever the commit does: never an unhandled rejection.
    this.#recorded = recording.then(
      (intent) => ({ intent }),
      (error: unknown) => ({ error }),
    );
  }

  /** After the commit: each remote summary mirrors the partition's new state; then the intent is removed. */
  async #mirror(): Promise<void> {
    const intent = (await this.#recorded) as Recorded;
    if ("error" in intent) throw intent.error;
    const states = this.#done?.states;
    if (states !== undefined) {
      const mirrors = new RemoteSummaries(this.#model as EntityModel, this.#runner);
      try {
        await Promise.all(
          this.#remote.map((summary) => {
            const at = this.#committer.summaries.indexOf(summary);
            return mirrors.mirror(summary, this.#source, states[at] as Omit<SummaryState, "etag">);
          }),
        );
      } catch {
        // The write itself committed: its remote summaries catch up through the intent, on `db.repair()`.
        return;
      }
    }
    await new SummaryIntents(this.#runner).complete(intent.intent).catch(() => undefined);
  }

  /**
   * The commit failed: the caller's refusal (a conflict, a missing entity, bad input) left nothing to
   * mirror. A fault keeps the intent for repair: a transaction that timed out may still land after we looked.
   */
  async #abandon(error: unknown): Promise<void> {
    const intent = this.#recorded === undefined ? undefined : await this.#recorded;
    if (
      intent !== undefined &&
      "intent" in intent &&
      !isOutcomeUnknown(error) &&
      !(error instanceof StoreError)
    )
      await new SummaryIntents(this.#runner).complete(intent.intent).catch(() => undefined);
  }
}
