import { ConcurrencyError, type TransactionError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import type { TransactionAction } from "../../store/table-store.js";
import { commitRounds, MAX_COMPANION_ROUNDS } from "../core/commit-rounds.js";
import type { CopyRef } from "../core/copy-ref.js";
import type { EntityLayout } from "../core/entity-layout.js";
import type { GroupCompanion } from "../core/group-companion.js";
import type { Backoff, Requests } from "../core/requests.js";
import { type ListChange, MAX_LIST_ROUNDS, planList } from "./list-membership.js";
import { translateSubmitError } from "./write-errors.js";

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
 * fails (nothing written), they are read again and it is resent (core/commit-rounds.ts).
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
  const stages: GroupCompanion[] = [];
  if (changes.length > 0) stages.push(listStage(model, runner, changes));
  if (companion) stages.push(companion);
  const results = await commitRounds(runner, table, partitionKey, actions, stages, {
    maxRounds: companion ? MAX_COMPANION_ROUNDS : MAX_LIST_ROUNDS,
    refused: (error, pending, stageStart) => {
      const failure = translateSubmitError(error, pending, refs, stageStart, table, partitionKey, own);
      return "listConflict" in failure ? { replan: failure.listConflict } : failure;
    },
    // Every lost race on a summary row meant another write committed: a conflict on that row, as a
    // transaction's (facade/transaction-commit.ts).
    ...(companion && {
      exhausted: (cause: unknown) =>
        new ConcurrencyError(
          { table, partitionKey, rowKey: (cause as TransactionError).rowKey ?? "" },
          { cause },
        ),
    }),
  });
  // Dropped actions (stale copies already gone) come after the entity's own: these are as sent.
  const sent = actions.slice(0, own.count);
  return results === undefined ? own.layout.appliedEtag(sent) : own.layout.etagOf(sent, results);
}

/** The same-partition list entities an entity write changes, as a stage: read and planned afresh each round. */
function listStage(
  model: EntityModel<object>,
  runner: Requests & Backoff,
  changes: readonly ListChange[],
): GroupCompanion {
  return {
    rowKeys: changes.map((change) => change.ref.rowKey),
    plan: () => Promise.all(changes.map((c) => planList(model, runner, c))).then((all) => all.flat()),
    committed: () => {},
    // A membership is a set: a lost answer is settled by the entity rows (the writer's rules).
    settle: async () => undefined,
  };
}
