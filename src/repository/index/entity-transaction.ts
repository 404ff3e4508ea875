import { TransactionError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import type { TransactionAction } from "../../store/table-store.js";
import type { CopyRef } from "../core/copy-ref.js";
import type { GroupCompanion } from "../core/group-companion.js";
import { isOutcomeUnknown } from "../core/lost-answers.js";
import type { Backoff, Requests } from "../core/requests.js";
import { submitTransaction } from "../core/submit-transaction.js";
import { holdsWrittenState } from "../core/written-state.js";
import { type ListChange, MAX_LIST_ROUNDS, planList } from "./list-membership.js";
import { translateSubmitError } from "./write-errors.js";

/** Rounds of a write whose companion rows (summaries: one row every writer of the partition changes) are contended. */
const MAX_COMPANION_ROUNDS = 200;

/**
 * Submits an entity's transaction together with its changes to same-partition index entities and
 * its companion rows (summaries); resolves the entity's new ETag. The list changes and companion rows
 * are conditional on their ETags: when another writer changed one meanwhile, the whole transaction
 * fails (nothing written), they are read again and it is resent.
 */
export async function submitEntityTransaction(
  model: EntityModel<object>,
  runner: Requests & Backoff,
  table: string,
  partitionKey: string,
  actions: readonly TransactionAction[],
  changes: readonly ListChange[],
  refs: readonly CopyRef[],
  companion?: GroupCompanion,
): Promise<string> {
  if (changes.length === 0 && companion === undefined)
    return submitRounds(runner, table, partitionKey, actions, refs, actions.length, undefined);
  const maxRounds = companion ? MAX_COMPANION_ROUNDS : MAX_LIST_ROUNDS;
  for (let round = 1; ; round++) {
    const [listActions, companionActions] = await Promise.all([
      Promise.all(changes.map((c) => planList(model, runner, c))).then((all) => all.flat()),
      companion ? companion.plan(round) : [],
    ]);
    const outcome = await submitRounds(
      runner,
      table,
      partitionKey,
      [...actions, ...listActions, ...companionActions],
      refs,
      actions.length,
      companion && { companion, count: companionActions.length },
    ).then(
      (etag) => ({ etag }),
      (error: unknown) => ({ error }),
    );
    if ("etag" in outcome) return outcome.etag;
    if (!(outcome.error instanceof ListConflictSignal)) throw outcome.error;
    if (round >= maxRounds) throw outcome.error.cause;
    await runner.retry.contend(round);
  }
}

/** Sends the transaction, dropping copy deletes that are already done, until it commits or fails for good. */
async function submitRounds(
  runner: Requests & Backoff,
  table: string,
  partitionKey: string,
  actions: readonly TransactionAction[],
  refs: readonly CopyRef[],
  listStart: number,
  companion: { companion: GroupCompanion; count: number } | undefined,
): Promise<string> {
  let pending = actions;
  let lists = listStart;
  for (;;) {
    try {
      const { results } = await submitTransaction(runner, table, partitionKey, pending);
      companion?.companion.committed(results.slice(results.length - companion.count));
      return results[0]?.etag ?? "";
    } catch (error) {
      if (companion && !isDefiniteRefusal(error)) {
        // The answer may be lost after the transaction committed: the companion's rows can tell.
        const verdict = await companion.companion.settle(error);
        if (verdict === "retry") throw new ListConflictSignal(error);
        if (verdict === "applied") {
          companion.companion.committed(undefined);
          return appliedEtag(runner, table, pending[0]);
        }
      }
      const failure = translateSubmitError(error, pending, refs, lists, table, partitionKey);
      if ("error" in failure) throw failure.error;
      if ("listConflict" in failure) throw new ListConflictSignal(failure.listConflict);
      pending = pending.filter((_, i) => i !== failure.drop);
      lists--;
    }
  }
}

function isDefiniteRefusal(error: unknown): boolean {
  return error instanceof TransactionError && !isOutcomeUnknown(error);
}

/** The entity's ETag after a transaction known to have committed without its answer: if it still holds what was written. */
async function appliedEtag(
  runner: Requests,
  table: string,
  action: TransactionAction | undefined,
): Promise<string> {
  if (action === undefined || action.kind === "delete") return "";
  const { partitionKey, rowKey } = action.entity;
  const stored = await runner.run("get", table, (s) => s.getEntity(table, partitionKey, rowKey));
  return stored && holdsWrittenState(action.entity, stored, "replace") ? stored.etag : "";
}

/** Carries a list conflict from one round to the loop that re-plans the lists; never leaves this module. */
class ListConflictSignal {
  constructor(readonly cause: unknown) {}
}
