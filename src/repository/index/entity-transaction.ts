import { TransactionError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import type { TransactionAction } from "../../store/table-store.js";
import type { CopyRef } from "../core/copy-ref.js";
import type { EntityLayout } from "../core/entity-layout.js";
import type { GroupCompanion } from "../core/group-companion.js";
import { isOutcomeUnknown } from "../core/lost-answers.js";
import type { Backoff, Requests } from "../core/requests.js";
import { submitTransaction } from "../core/submit-transaction.js";
import { type ListChange, MAX_LIST_ROUNDS, planList } from "./list-membership.js";
import { translateSubmitError } from "./write-errors.js";

/** Rounds of a write whose companion rows (summaries: one row every writer of the partition changes) are contended. */
const MAX_COMPANION_ROUNDS = 200;

/** The entity's own actions at the front of its transaction: how many, and how it lies in its table. */
export interface OwnActions {
  layout: EntityLayout;
  count: number;
  /** The entity's RowKey (a wide entity's rows carry a suffix), for errors. */
  rowKey: string;
}

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
  own: OwnActions,
  companion?: GroupCompanion,
): Promise<string> {
  if (changes.length === 0 && companion === undefined)
    return submitRounds(runner, table, partitionKey, actions, refs, actions.length, own, undefined);
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
      own,
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
  own: OwnActions,
  companion: { companion: GroupCompanion; count: number } | undefined,
): Promise<string> {
  let pending = actions;
  let lists = listStart;
  for (;;) {
    try {
      const { results } = await submitTransaction(runner, table, partitionKey, pending);
      companion?.companion.committed(results.slice(results.length - companion.count));
      return own.layout.etagOf(pending.slice(0, own.count), results);
    } catch (error) {
      if (companion && !isDefiniteRefusal(error)) {
        // The answer may be lost after the transaction committed: the companion's rows can tell.
        const verdict = await companion.companion.settle(error);
        if (verdict === "retry") throw new ListConflictSignal(error);
        if (verdict === "applied") {
          companion.companion.committed(undefined);
          return own.layout.appliedEtag(pending.slice(0, own.count));
        }
      }
      const failure = translateSubmitError(error, pending, refs, lists, table, partitionKey, own);
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

/** Carries a list conflict from one round to the loop that re-plans the lists; never leaves this module. */
class ListConflictSignal {
  constructor(readonly cause: unknown) {}
}
