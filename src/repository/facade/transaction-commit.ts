import { ConcurrencyError, TransactionError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import { rememberEtag } from "../../serialization/entity-etag.js";
import { wideEtag } from "../../serialization/wide-rows.js";
import type { TransactionAction, WriteResult } from "../../store/table-store.js";
import { commitRounds, isDefiniteRefusal, MAX_COMPANION_ROUNDS } from "../core/commit-rounds.js";
import { isPartAction } from "../core/entity-layout.js";
import type { GroupCompanion } from "../core/group-companion.js";
import { IntentLog } from "../core/intent-log.js";
import { isOutcomeUnknown, markOutcomeUnknown } from "../core/lost-answers.js";
import type { Backoff, RequestContext, Requests } from "../core/requests.js";
import { type PlanStep, runPlan, settleAll } from "../core/write-plan.js";
import { rememberCopies } from "../index/copy-state.js";
import {
  abandonRemoteWork,
  beginRemoteWork,
  finishRemoteWork,
  type IndexedTarget,
  type RemoteWork,
} from "../index/intent-protocol.js";
import type { SummaryStage } from "../summary/summary-stage.js";
import type { PlannedOperation } from "./transaction.js";
import { conditionAdded, toCallerIndex } from "./transaction-errors.js";
import type { ExpandedTransaction } from "./transaction-indexes.js";
import { type LargeWork, readReplaced } from "./transaction-large.js";
import { planTransaction } from "./transaction-parts.js";

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
  operations: readonly PlannedOperation[],
): Promise<TransactionResult> {
  for (let round = 1; ; round++) {
    try {
      return await commitOnce(runner, operations);
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

async function commitOnce(
  runner: RequestContext,
  operations: readonly PlannedOperation[],
): Promise<TransactionResult> {
  const { table, partitionKey, large, expanded, summaries, companions, isLocalChange } =
    await planTransaction(runner, operations);
  const targets = new Map<EntityModel<object>, IndexedTarget>();
  const targetOf = (model: EntityModel<object>): IndexedTarget => {
    let target = targets.get(model);
    if (target === undefined) {
      target = { model, table, runner, intents: new IntentLog(runner) };
      targets.set(model, target);
    }
    return target;
  };
  const remote: Array<RemoteWork | undefined> = [];
  const abandonAll = (error: unknown) => abandon(remote, operations, targetOf, large, summaries, error);
  const actions = expanded.operations.map((operation) => operation.action);
  // Where each caller operation's first action sits (-1: none), in one pass over the owners.
  const firstOf = new Array<number>(operations.length).fill(-1);
  expanded.owners.forEach((owner, at) => {
    if (firstOf[owner] === -1) firstOf[owner] = at;
  });
  // Only operations with copies elsewhere have remote steps (a plain transaction has none to run).
  const withRemote = [...expanded.remote.keys()].filter((index) => expanded.remote[index] !== undefined);
  // Each entity's intent and claims (then its copies) are its own: run together (a bulk batch has
  // many), all settled before a failure is the answer, so an abandon sees every one that was begun.
  const remoteStep = (request: string, each: (index: number) => Promise<void>): PlanStep[] =>
    withRemote.length === 0 ? [] : [{ request, table, run: () => settleAll(withRemote.map(each)) }];
  // What the commit answered: its results, the ETag of each operation, or the error it failed with.
  let committed: { results: WriteResult[] | undefined; etags: string[] } | undefined;
  let commitError: unknown;
  const send = async (): Promise<void> => {
    let results: WriteResult[] | undefined;
    try {
      results = await submitRounds(runner, table, partitionKey, actions, companions);
    } catch (error) {
      commitError = error;
      runner.emit({ type: "batch-failed", table, partitionKey, operations: actions.length, error });
      throw error;
    }
    runner.emit({ type: "batch-committed", table, partitionKey, operations: actions.length });
    const etags = firstOf.map((at, index) =>
      (operations[index] as PlannedOperation).model.wide
        ? wideEtagOf(expanded, index, results)
        : (results?.[at]?.etag ?? ""),
    );
    committed = { results, etags };
  };
  // One abandon, in its own order (summary intents, each operation's remote work, uploads), for any
  // failure from the uploads on: it rides on the uploads step, which undoes its own failure itself.
  const before: PlanStep[] = [
    { request: "get (replaced blobs)", table, run: () => readReplaced(large) },
    {
      request: "putBlob (large values)",
      table,
      run: async () => {
        try {
          await Promise.all(large.map((work) => work.large.upload(work.uploads)));
        } catch (error) {
          await abandonAll(error);
          throw error;
        }
      },
      abandon: abandonAll,
    },
    ...summaries.map((stage): PlanStep => ({ request: "summary stage", table, run: () => stage.before() })),
    ...remoteStep("begin remote work", async (index) => {
      const operation = operations[index] as PlannedOperation;
      const copies = expanded.remote[index] as NonNullable<(typeof expanded.remote)[number]>;
      remote[index] = await beginRemoteWork(
        targetOf(operation.model),
        copies.row,
        copies.before,
        copies.next,
      );
    }),
  ];
  const etagAt = (index: number) => committed?.etags[index] as string;
  // After: copies elsewhere and intents removed, summary mirrors, replaced blobs removed.
  const after: PlanStep[] = [
    ...remoteStep("finish remote work", async (index) => {
      const work = remote[index];
      if (work === undefined) return; // no copies elsewhere (finishRemoteWork would do nothing)
      const operation = operations[index] as PlannedOperation;
      const remoteLists = (expanded.lists[index] ?? []).filter((change) => !isLocalChange(change, index));
      // What the write left: its version, or no entity after a delete (see `settleRace`).
      const left = operation.action.kind === "delete" ? undefined : etagAt(index);
      await finishRemoteWork(targetOf(operation.model), work, left, remoteLists);
    }),
    ...summaries.map((stage): PlanStep => ({ request: "summary stage", table, run: () => stage.after() })),
    ...large.map(
      (work): PlanStep => ({
        request: "deleteBlob (replaced)",
        table,
        run: async () => {
          if (work.before === undefined) return;
          const { action } = work.operation;
          const merge = action.kind !== "insert" && action.kind !== "delete" && action.mode === "merge";
          await work.large.replaced(work.before, action.kind === "delete" ? undefined : action.entity, merge);
        },
      }),
    ),
  ];
  const operationsOf = expanded.operations.map((operation) => ({
    kind: operation.action.kind,
    rowKey: operation.rowKey,
  }));
  try {
    await runPlan({
      before,
      commit: { request: "transaction", table, partitionKey, operations: operationsOf, send },
      after,
    });
  } catch (error) {
    // A before- or after-step's failure is the answer as it is; the commit's is the caller's.
    if (error !== commitError || !(error instanceof TransactionError)) throw error;
    const owner = expanded.owners[error.index];
    const onEntity = owner !== undefined && firstOf[owner] === error.index;
    if (
      onEntity &&
      !isOutcomeUnknown(error) &&
      conditionAdded(
        (operations[owner] as PlannedOperation).action,
        expanded.operations[error.index]?.action,
      ) &&
      // 409/412: the entity appeared or changed since it was read. 404 only for an upsert (it was
      // deleted since: the upsert inserts); a delete or update of an absent entity is answered 404.
      (error.statusCode === 409 ||
        error.statusCode === 412 ||
        (error.statusCode === 404 && (operations[owner] as PlannedOperation).action.kind === "upsert"))
    )
      throw new OwnConditionLost(error);
    const reported = toCallerIndex(error, expanded.owners, firstOf);
    // A batch whose lost attempt may have applied stays so, whichever operation it is reported at.
    throw isOutcomeUnknown(error) ? markOutcomeUnknown(reported) : reported;
  }

  // Instances track what they hold.
  const { results, etags } = committed as NonNullable<typeof committed>;
  operations.forEach((operation, index) => {
    if (!operation.entity) return;
    const deleted = operation.action.kind === "delete";
    rememberEtag(operation.entity, deleted || results === undefined ? undefined : etags[index], runner.scope);
    if (expanded.copies[index] !== undefined)
      rememberCopies(operation.entity, deleted ? undefined : expanded.copies[index], runner.scope);
  });
  return { etags };
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

/** The commit did not happen (or may not have): each operation's before-steps are undone where that is safe. */
async function abandon(
  remote: ReadonlyArray<RemoteWork | undefined>,
  operations: readonly PlannedOperation[],
  targetOf: (model: EntityModel<object>) => IndexedTarget,
  large: readonly LargeWork[],
  summaries: readonly SummaryStage[],
  error: unknown,
): Promise<void> {
  for (const stage of summaries) await stage.abandon(error);
  for (const [index, work] of remote.entries()) {
    if (work === undefined) continue;
    const operation = operations[index] as PlannedOperation;
    await abandonRemoteWork(targetOf(operation.model), work, error);
  }
  for (const work of large) await work.large.discard(work.uploads, error);
}
