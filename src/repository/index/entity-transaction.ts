import type { EntityModel } from "../../schema/entity-model.js";
import type { TransactionAction } from "../../store/table-store.js";
import type { StoreRunner } from "../store-runner.js";
import { submitTransaction } from "../submit-transaction.js";
import type { CopyRef } from "./copy-ref.js";
import { type ListChange, MAX_LIST_ROUNDS, planList } from "./list-membership.js";
import { translateSubmitError } from "./write-errors.js";

/**
 * Submits an entity's transaction together with its changes to same-partition index entities;
 * resolves the entity's new ETag. The list changes are conditional on the lists' ETags: when
 * another writer changed a list meanwhile, the whole transaction fails (nothing written), the
 * lists are read again and it is resent.
 */
export async function submitEntityTransaction(
  model: EntityModel<object>,
  runner: StoreRunner,
  table: string,
  partitionKey: string,
  actions: readonly TransactionAction[],
  changes: readonly ListChange[],
  refs: readonly CopyRef[],
): Promise<string> {
  if (changes.length === 0) return submitRounds(runner, table, partitionKey, actions, refs, actions.length);
  for (let round = 1; ; round++) {
    const listActions = (await Promise.all(changes.map((c) => planList(model, runner, c)))).flat();
    const outcome = await submitRounds(
      runner,
      table,
      partitionKey,
      [...actions, ...listActions],
      refs,
      actions.length,
    ).then(
      (etag) => ({ etag }),
      (error: unknown) => ({ error }),
    );
    if ("etag" in outcome) return outcome.etag;
    if (!(outcome.error instanceof ListConflictSignal)) throw outcome.error;
    if (round >= MAX_LIST_ROUNDS) throw outcome.error.cause;
    await runner.retry.contend(round);
  }
}

/** Sends the transaction, dropping copy deletes that are already done, until it commits or fails for good. */
async function submitRounds(
  runner: StoreRunner,
  table: string,
  partitionKey: string,
  actions: readonly TransactionAction[],
  refs: readonly CopyRef[],
  listStart: number,
): Promise<string> {
  let pending = actions;
  let lists = listStart;
  for (;;) {
    try {
      const { results } = await submitTransaction(runner, table, partitionKey, pending);
      return results[0]?.etag ?? "";
    } catch (error) {
      const failure = translateSubmitError(error, pending, refs, lists, table, partitionKey);
      if ("error" in failure) throw failure.error;
      if ("listConflict" in failure) throw new ListConflictSignal(failure.listConflict);
      pending = pending.filter((_, i) => i !== failure.drop);
      lists--;
    }
  }
}

/** Carries a list conflict from one round to the loop that re-plans the lists; never leaves this module. */
class ListConflictSignal {
  constructor(readonly cause: unknown) {}
}
