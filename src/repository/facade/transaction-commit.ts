import { ConcurrencyError, TransactionError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import { rememberEtag } from "../../serialization/entity-etag.js";
import { wideEtag } from "../../serialization/wide-rows.js";
import type { TransactionAction, WriteResult } from "../../store/table-store.js";
import type { StoreLimits } from "../../util/store-limits.js";
import { commitRounds, isDefiniteRefusal, MAX_COMPANION_ROUNDS } from "../core/commit-rounds.js";
import { isPartAction } from "../core/entity-layout.js";
import type { GroupCompanion } from "../core/group-companion.js";
import { IntentLog } from "../core/intent-log.js";
import { isOutcomeUnknown, markOutcomeUnknown } from "../core/lost-answers.js";
import type { Backoff, Planning, RequestContext, Requests } from "../core/requests.js";
import { type PlanExecutor, runPlan, settleAll } from "../core/write-plan.js";
import { rememberCopies } from "../index/copy-state.js";
import type { IndexedTarget } from "../index/indexed-target.js";
import { listCompanion } from "../index/list-membership.js";
import type { RemoteProtocol } from "../index/remote-protocol.js";
import { RemoteProtocolRun } from "../index/remote-protocol-run.js";
import { markRowsChecked } from "../pipeline/limit-checked-store.js";
import { SummaryCommitter } from "../summary/summary-committer.js";
import { SummaryStage } from "../summary/summary-stage.js";
import type { PlannedOperation } from "./transaction.js";
import { conditionAdded, toCallerIndex } from "./transaction-errors.js";
import type { ExpandedTransaction } from "./transaction-indexes.js";
import { LargeSteps } from "./transaction-large.js";
import type { RemoteCopies } from "./transaction-operation-expansion.js";
import { planTransaction, type TransactionParts } from "./transaction-parts.js";
import { type TransactionStep, transactionPlan } from "./transaction-plan.js";

const DONE = Promise.resolve();

/** The result of a committed transaction: one ETag per operation (empty for deletes). */
export interface TransactionResult {
  etags: string[];
}

/**
 * Commits the caller's operations (one table, one partition) as one plan, the same one a single
 * write of each entity makes, merged into one entity group transaction:
 * - before: large values uploaded (the rows point at them), intents recorded and unique values
 *   claimed for copies in other partitions or tables;
 * - commit: the entity rows, their same-partition copies and the summary rows of their partition
 *   (conditional on their ETags; a lost race on a summary row is planned again), counted toward the
 *   transaction's operations;
 * - after: copies elsewhere written and the intents removed, replaced blobs removed.
 */
export async function commitTransaction(
  runner: RequestContext,
  planning: Planning,
  operations: readonly PlannedOperation[],
): Promise<TransactionResult> {
  for (let round = 1; ; round++) {
    try {
      return await commitOnce(runner, planning, operations);
    } catch (error) {
      if (!(error instanceof OwnConditionLost) || round >= MAX_COMPANION_ROUNDS) {
        throw error instanceof OwnConditionLost ? error.failure : error;
      }
      // Nothing was written (a definite refusal) and the before-steps were undone: read and plan again.
      await runner.retry.contend(round);
    }
  }
}

/**
 * The transaction was refused on an entity's own action because of a condition tablekit added (the
 * version its summary delta or copies were planned from), not one the caller asked for: an upsert,
 * or an update or delete with `"*"`. Another writer changed the entity in between; like a single
 * write, the transaction is planned again from what is stored now.
 */
class OwnConditionLost extends Error {
  constructor(readonly failure: TransactionError) {
    super(failure.message);
  }
}

/** One round of a transaction: planned from what is stored now, its plan's steps run, its commit sent. */
async function commitOnce(
  runner: RequestContext,
  planning: Planning,
  operations: readonly PlannedOperation[],
): Promise<TransactionResult> {
  const parts = await planTransaction(runner, planning, operations);
  // What is stored is learned by the steps themselves (the replaced blobs from the references read first).
  const plan = transactionPlan(planning, operations, parts, () => undefined);
  const attempt = new CommitAttempt(runner, operations, parts, plan.remote, planning.limits);
  try {
    await runPlan(plan, attempt);
  } catch (error) {
    throw attempt.failure(error);
  }
  return attempt.remember();
}

/** What a commit answered: its results (undefined: committed, its answer lost), each operation's ETag. */
interface Committed {
  results: WriteResult[] | undefined;
  etags: string[];
}

/**
 * The executor of one transaction plan (`transactionPlan`): what each step of it sends, the commit
 * with its rounds, and the state they share (each entity's remote work, the commit's answer).
 */
class CommitAttempt implements PlanExecutor<TransactionStep, void> {
  readonly #runner: RequestContext;
  readonly #operations: readonly PlannedOperation[];
  readonly #parts: TransactionParts;
  readonly #stages: TransactionStages;
  readonly #targets = new Map<EntityModel<object>, IndexedTarget>();
  /** Each caller operation's remote-copy protocol, as planned (`transactionPlan`). */
  readonly #protocols: ReadonlyArray<RemoteProtocol | undefined>;
  /** Each caller operation's run of its protocol, once begun. */
  readonly #remote: Array<RemoteProtocolRun | undefined> = [];
  readonly #actions: TransactionAction[];
  /** Where each caller operation's first action sits (-1: none). */
  readonly #firstOf: number[];
  /** Only operations with copies elsewhere have remote steps (a plain transaction has none to run). */
  readonly #withRemote: number[];
  /** What the commit answered: its results, the ETag of each operation, or the error it failed with. */
  #committed: Committed | undefined;
  #commitError: unknown;

  constructor(
    runner: RequestContext,
    operations: readonly PlannedOperation[],
    parts: TransactionParts,
    protocols: ReadonlyArray<RemoteProtocol | undefined>,
    checkedAgainst: StoreLimits,
  ) {
    this.#runner = runner;
    this.#operations = operations;
    this.#parts = parts;
    this.#stages = transactionStages(runner, parts);
    this.#protocols = protocols;
    const { expanded } = parts;
    this.#actions = expanded.operations.map((operation) => operation.action);
    // In one pass over the owners.
    this.#firstOf = new Array<number>(operations.length).fill(-1);
    expanded.owners.forEach((owner, at) => {
      if (this.#firstOf[owner] === -1) this.#firstOf[owner] = at;
    });
    this.#withRemote = [...protocols.keys()].filter((index) => protocols[index] !== undefined);
    // planTransaction checked each of these rows against `checkedAgainst` (`assertTransactionFits`); with
    // no large value, wide entity or remote step to change a row before the commit, they go as checked.
    if (
      parts.large.length === 0 &&
      this.#withRemote.length === 0 &&
      !expanded.operations.some((operation) => operation.model.wide)
    )
      markRowsChecked(this.#actions, checkedAgainst);
  }

  /** Sends a step of the plan (before or after the commit: their kinds differ). */
  run(step: TransactionStep): Promise<void> {
    const { large, summaries } = this.#stages;
    switch (step.kind) {
      case "replaced references":
        return large.readReplaced();
      case "uploads":
        return this.#upload();
      case "summary intent":
        return (summaries[step.stage as number] as SummaryStage).before();
      case "remote begin":
        return this.#eachRemote((index) => this.#beginRemote(index));
      case "companion reads":
        // The companion rows are read by the commit's rounds, as each round is planned.
        return DONE;
      case "remote finish":
        return this.#eachRemote((index) => this.#finishRemote(index));
      case "summary mirrors":
        return (summaries[step.stage as number] as SummaryStage).after();
      case "replaced blobs":
        return large.removeReplaced();
    }
  }

  /**
   * One abandon, in its own order (summary intents, each operation's remote work, uploads), for any
   * failure from the uploads on: it rides on the uploads step, which undoes its own failure itself.
   */
  abandon(step: TransactionStep, error: unknown): Promise<void> {
    return step.kind === "uploads" ? this.#abandon(error) : DONE;
  }

  async #upload(): Promise<void> {
    try {
      await this.#stages.large.upload();
    } catch (error) {
      await this.#abandon(error);
      throw error;
    }
  }

  /** Sends the entity group transaction with its rounds; records what it answered. */
  async commit(): Promise<void> {
    const { table, partitionKey, expanded } = this.#parts;
    const { companions } = this.#stages;
    const actions = this.#actions;
    let results: WriteResult[] | undefined;
    try {
      results = await submitRounds(this.#runner, table, partitionKey, actions, companions);
    } catch (error) {
      this.#commitError = error;
      this.#runner.emit({ type: "batch-failed", table, partitionKey, operations: actions.length, error });
      throw error;
    }
    this.#runner.emit({ type: "batch-committed", table, partitionKey, operations: actions.length });
    const etags = this.#firstOf.map((at, index) =>
      (this.#operations[index] as PlannedOperation).model.wide
        ? wideEtagOf(expanded, index, results)
        : (results?.[at]?.etag ?? ""),
    );
    this.#committed = { results, etags };
  }

  /** The answer for a failed plan: a before- or after-step's failure as it is; the commit's is the caller's. */
  failure(error: unknown): unknown {
    if (error !== this.#commitError || !(error instanceof TransactionError)) return error;
    const { expanded } = this.#parts;
    const owner = expanded.owners[error.index];
    const onEntity = owner !== undefined && this.#firstOf[owner] === error.index;
    const action = onEntity ? (this.#operations[owner] as PlannedOperation).action : undefined;
    if (
      action !== undefined &&
      !isOutcomeUnknown(error) &&
      conditionAdded(action, expanded.operations[error.index]?.action) &&
      // 409/412: the entity appeared or changed since it was read. 404 only for an upsert (it was
      // deleted since: the upsert inserts); a delete or update of an absent entity is answered 404.
      (error.statusCode === 409 ||
        error.statusCode === 412 ||
        (error.statusCode === 404 && action.kind === "upsert"))
    )
      return new OwnConditionLost(error);
    const reported = toCallerIndex(error, expanded.owners, this.#firstOf);
    // A batch whose lost attempt may have applied stays so, whichever operation it is reported at.
    return isOutcomeUnknown(error) ? markOutcomeUnknown(reported) : reported;
  }

  /** After the commit: instances track what they hold; the result. */
  remember(): TransactionResult {
    const { results, etags } = this.#committed as Committed;
    const { copies } = this.#parts.expanded;
    const scope = this.#runner.scope;
    this.#operations.forEach((operation, index) => {
      if (!operation.entity) return;
      const deleted = operation.action.kind === "delete";
      rememberEtag(operation.entity, deleted || results === undefined ? undefined : etags[index], scope);
      if (copies[index] !== undefined)
        rememberCopies(operation.entity, deleted ? undefined : copies[index], scope);
    });
    return { etags };
  }

  /**
   * Each entity's intent and claims (then its copies) are its own: run together (a bulk batch has
   * many), all settled before a failure is the answer, so an abandon sees every one that was begun.
   */
  #eachRemote(each: (index: number) => Promise<void>): Promise<void> {
    const withRemote = this.#withRemote;
    return withRemote.length === 0 ? DONE : settleAll(withRemote.map(each));
  }

  /** Records the entity's intent and claims its unique values (a refusal of either undoes its own). */
  async #beginRemote(index: number): Promise<void> {
    const operation = this.#operations[index] as PlannedOperation;
    const { row } = this.#parts.expanded.remote[index] as RemoteCopies;
    // What the write left: its version, or no entity after a delete (see `settleRace`).
    const left = () =>
      operation.action.kind === "delete" ? undefined : (this.#committed?.etags[index] as string);
    const run = new RemoteProtocolRun(
      this.#targetOf(operation.model),
      row,
      this.#protocols[index] as RemoteProtocol,
      left,
    );
    this.#remote[index] = run;
    await run.begin();
  }

  async #finishRemote(index: number): Promise<void> {
    await this.#remote[index]?.finish();
  }

  #targetOf(model: EntityModel<object>): IndexedTarget {
    let target = this.#targets.get(model);
    if (target === undefined) {
      const runner = this.#runner;
      target = { model, table: this.#parts.table, runner, intents: new IntentLog(runner) };
      this.#targets.set(model, target);
    }
    return target;
  }

  /** The commit did not happen (or may not have): each operation's before-steps are undone where that is safe. */
  async #abandon(error: unknown): Promise<void> {
    const { summaries, large } = this.#stages;
    for (const stage of summaries) await stage.abandon(error);
    for (const run of this.#remote) await run?.abandon(error);
    await large.discard(error);
  }
}

/**
 * What sends, of a transaction's parts (the executor's half, built from the parts as data once every
 * rule has passed): the summary stages (intents, rows, mirrors), the rows riding in the commit (the
 * summary rows first: their logs settle a lost answer, see `submitRounds`; then the list entities),
 * and the large values' steps.
 */
interface TransactionStages {
  summaries: SummaryStage[];
  companions: GroupCompanion[];
  large: LargeSteps;
}

/** Builds the stages that send a transaction's parts through `runner`. */
function transactionStages(runner: RequestContext, parts: TransactionParts): TransactionStages {
  const summaries = parts.summaries.map(
    (plan) => new SummaryStage(plan, runner, new SummaryCommitter(plan.model, plan.table, runner)),
  );
  const { localLists } = parts;
  const companions = [
    ...summaries.map((stage) => stage.companion),
    ...(localLists.length === 0 ? [] : [listCompanion(localLists, runner)]),
  ];
  return { summaries, companions, large: new LargeSteps(runner, parts.large) };
}

/** A wide entity's ETag: its written rows' ETags, in part order. */
function wideEtagOf(
  expanded: ExpandedTransaction,
  owner: number,
  results: readonly WriteResult[] | undefined,
): string {
  if (results === undefined) return "";
  const etags: string[] = [];
  expanded.owners.forEach((at, i) => {
    // The entity's own rows (not its copies in the partition), in part order.
    const action = expanded.operations[i]?.action;
    if (at === owner && action !== undefined && isPartAction(action)) etags.push(results[i]?.etag ?? "");
  });
  return etags.length === 0 ? "" : wideEtag(etags);
}

/**
 * Sends the transaction with its summary rows, planned afresh each round (core/commit-rounds.ts):
 * another writer's change of a summary row fails the whole transaction (nothing written), and it is
 * planned again; any other refusal is the caller's answer.
 */
function submitRounds(
  runner: Requests & Backoff,
  table: string,
  partitionKey: string,
  actions: readonly TransactionAction[],
  companions: readonly GroupCompanion[],
): Promise<WriteResult[] | undefined> {
  return commitRounds(runner, table, partitionKey, actions, companions, {
    maxRounds: MAX_COMPANION_ROUNDS,
    refused: (error, _pending, stageStart) => {
      const onStageRow =
        isDefiniteRefusal(error) && companions.length > 0 && (error as TransactionError).index >= stageStart;
      if (!onStageRow) return { error };
      const { statusCode } = error as TransactionError;
      // A summary row changed since it was read: plan again.
      return statusCode === 412 || statusCode === 409 ? { replan: error } : { error };
    },
    exhausted: (cause) =>
      new ConcurrencyError(
        { table, partitionKey, rowKey: (cause as TransactionError).rowKey ?? "" },
        { cause },
      ),
  });
}
