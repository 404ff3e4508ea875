import { TransactionError } from "../../errors.js";
import type { TransactionAction, WriteResult } from "../../store/table-store.js";
import { isOutcomeUnknown } from "./lost-answers.js";
import type { Backoff, Requests } from "./requests.js";
import { submitTransaction } from "./submit-transaction.js";
import type { WriteStage } from "./write-plan.js";

/**
 * Rounds of a commit whose companion rows (summary rows: one row every writer of the partition
 * changes) are contended: each lost round means another writer committed. The one bound of every
 * commit with summary rows (a single write's, a transaction's, a summarized batch's).
 */
export const MAX_COMPANION_ROUNDS = 200;

/** What to do about a definitely refused transaction (see `CommitRules.refused`). */
export type Refusal =
  /** An action that is already done (a stale copy already gone): drop it and send the rest. */
  | { drop: number }
  /** A stage's row changed since it was read (a lost race): plan the stages' rows again. */
  | { replan: unknown }
  /** The write's answer. */
  | { error: unknown };

/** The rules of one kind of commit: how a refusal is read, and how many rounds a lost race gets. */
export interface CommitRules {
  readonly maxRounds: number;
  /** A refusal (or a failure that the stages could not settle): `stageStart` is where the stages' rows begin in `pending`. */
  refused(error: unknown, pending: readonly TransactionAction[], stageStart: number): Refusal;
  /** The error when the rounds are exhausted (default: the last race's cause). */
  exhausted?(cause: unknown): unknown;
}

/** A committed transaction: one result per action, or `undefined` when it committed and its answer was lost. */
export type CommitResults = WriteResult[] | undefined;

/**
 * The commit of a write's plan: its own actions and the rows its stages plan afresh each round (the
 * stages' rows last, each conditional on its own ETag), sent as one entity group transaction with
 * `submitTransaction`'s retries and lost-answer rules. The rules of a plan, in one place:
 * - committed: each stage learns the results of its rows;
 * - failed without a definite refusal (a lost answer, exhausted retries): the stage that can tell
 *   (`settle`, e.g. a summary row's write log) decides: applied (a success whose results are lost),
 *   certainly not (planned and sent again), or not known (the stage throws);
 * - refused: `rules.refused` says whether an action is dropped, the stages' rows re-planned after
 *   a lost race (up to `maxRounds`, paced by the retry policy's contention backoff) or the error is
 *   the answer.
 */
export async function commitRounds(
  runner: Requests & Backoff,
  table: string,
  partitionKey: string,
  actions: readonly TransactionAction[],
  stages: readonly WriteStage[],
  rules: CommitRules,
): Promise<CommitResults> {
  for (let round = 1; ; round++) {
    const planned = await Promise.all(stages.map((stage) => stage.plan(round)));
    const pending = planned.length === 0 ? actions : [...actions, ...planned.flat()];
    // Nothing to send (a stage found the write already done, e.g. a delete of an entity gone): nothing is sent.
    if (pending.length === 0) return [];
    const outcome = await sendRound(
      runner,
      table,
      partitionKey,
      stages,
      planned,
      rules,
      pending,
      actions.length,
    );
    if ("results" in outcome) return outcome.results;
    if (round >= rules.maxRounds) throw rules.exhausted ? rules.exhausted(outcome.replan) : outcome.replan;
    await runner.retry.contend(round);
  }
}

/** One round: sent until it commits, is settled, must be re-planned, or fails. */
async function sendRound(
  runner: Requests & Backoff,
  table: string,
  partitionKey: string,
  stages: readonly WriteStage[],
  planned: readonly TransactionAction[][],
  rules: CommitRules,
  actions: readonly TransactionAction[],
  stageStart: number,
): Promise<{ results: CommitResults } | { replan: unknown }> {
  let pending = actions;
  for (;;) {
    try {
      const { results } = await submitTransaction(runner, table, partitionKey, pending);
      let at = stageStart;
      stages.forEach((stage, i) => {
        const count = (planned[i] as TransactionAction[]).length;
        stage.committed(results.slice(at, at + count));
        at += count;
      });
      return { results };
    } catch (error) {
      if (stages.length > 0 && !isDefiniteRefusal(error)) {
        // The answer may be lost after the transaction committed: a stage's rows can tell.
        const verdict = await settle(stages, error);
        if (verdict === "retry") return { replan: error };
        if (verdict === "applied") {
          for (const stage of stages) stage.committed(undefined);
          return { results: undefined };
        }
      }
      const refusal = rules.refused(error, pending, stageStart);
      if ("error" in refusal) throw refusal.error;
      if ("replan" in refusal) return { replan: refusal.replan };
      // The dropped action is one of the write's own (before the stages' rows).
      pending = pending.filter((_, i) => i !== refusal.drop);
      stageStart--;
    }
  }
}

/** The first stage that can tell whether a failed transaction committed. */
async function settle(
  stages: readonly WriteStage[],
  error: unknown,
): Promise<"applied" | "retry" | undefined> {
  for (const stage of stages) {
    const verdict = await stage.settle(error);
    if (verdict !== undefined) return verdict;
  }
  return undefined;
}

/** The service refused the transaction, and no earlier attempt of it may have applied. */
export function isDefiniteRefusal(error: unknown): boolean {
  return error instanceof TransactionError && !isOutcomeUnknown(error);
}
