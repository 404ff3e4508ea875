import { TransactionError } from "../../errors.js";
import type { TableStore, TransactionAction, WriteResult } from "../../store/table-store.js";
import type { RetryPolicy } from "../pipeline/retry-policy.js";
import { settleLostAnswer } from "./lost-answers.js";
import type { Backoff, Requests } from "./requests.js";
import { holdsWrittenState } from "./written-state.js";

/** A committed transaction: one result per action, and how many retries it took. */
export interface SubmittedTransaction {
  results: WriteResult[];
  retries: number;
}

/**
 * Submits one entity group transaction with retries. When a retry fails after an earlier attempt
 * that may have been applied (its response lost), the stored entities decide (lost-answers rules):
 * every action's outcome already in the table is a success; otherwise the `TransactionError` is
 * thrown marked as of unknown outcome (`isOutcomeUnknown`).
 */
export async function submitTransaction(
  runner: Requests & Backoff,
  table: string,
  partitionKey: string,
  actions: readonly TransactionAction[],
): Promise<SubmittedTransaction> {
  let attempts = 0;
  const results = await runner.run("transaction", table, async (store, { attempt, possiblyApplied }) => {
    attempts = attempt;
    try {
      return await store.submitTransaction(table, partitionKey, actions);
    } catch (error) {
      return settleLostAnswer(error, possiblyApplied, {
        ownEffect: (e) => e instanceof TransactionError,
        readBack: () => readAppliedResults(store, runner.retry, table, partitionKey, actions),
        otherwise: "mark",
      });
    }
  });
  return { results, retries: attempts - 1 };
}

async function readAppliedResults(
  store: TableStore,
  retry: Pick<RetryPolicy, "run">,
  table: string,
  partitionKey: string,
  actions: readonly TransactionAction[],
): Promise<WriteResult[] | undefined> {
  const outcomes = await Promise.all(
    actions.map(async (action): Promise<WriteResult | undefined> => {
      const rowKey = action.kind === "delete" ? action.rowKey : action.entity.rowKey;
      // Each read retries its own transient faults: one failed read of up to 100 must not fail the batch.
      const stored = await retry.run(() => store.getEntity(table, partitionKey, rowKey));
      if (action.kind === "delete") return stored ? undefined : { etag: "" };
      const mode = action.kind === "insert" ? "replace" : action.mode;
      return stored && holdsWrittenState(action.entity, stored, mode) ? { etag: stored.etag } : undefined;
    }),
  );
  return outcomes.every((outcome) => outcome !== undefined) ? (outcomes as WriteResult[]) : undefined;
}
