import { TransactionError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import type { TransactionAction } from "../../store/table-store.js";
import { type CopyRef, refKey } from "../core/copy-ref.js";
import type { GroupCompanion } from "../core/group-companion.js";
import type { Backoff, Requests } from "../core/requests.js";
import { submitTransaction } from "../core/submit-transaction.js";
import type { StepTarget } from "../core/write-plan.js";
import { planListChange, readListOrEmpty } from "./list-index.js";

/** How many times a write re-reads index entities after losing a race on them (concurrent writers). */
export const MAX_LIST_ROUNDS = 60;

/** One membership change to the index entity of one value. */
export interface ListChange {
  ref: CopyRef;
  add?: string;
  remove?: string;
}

/** The member additions and removals going from one set of list refs to another. */
export function membershipChanges(
  before: readonly CopyRef[],
  next: readonly CopyRef[],
  member: string,
): ListChange[] {
  const nextKeys = new Set(next.map(refKey));
  const beforeKeys = new Set(before.map(refKey));
  return [
    ...before.filter((r) => !nextKeys.has(refKey(r))).map((ref) => ({ ref, remove: member })),
    ...next.filter((r) => !beforeKeys.has(refKey(r))).map((ref) => ({ ref, add: member })),
  ];
}

/** The writes that apply one change to the index entity as stored now (each conditional on its shard's ETag). */
export async function planList(
  model: EntityModel<object>,
  runner: Requests,
  change: ListChange,
): Promise<TransactionAction[]> {
  // A period's table not created yet lists nobody: the write's transaction creates it.
  const state = await readListOrEmpty(runner, change.ref);
  return planListChange(state, `${model.type}@${model.version}`, change);
}

/** Another writer changed an index entity since it was read (412), or created it meanwhile (409): read again and resend. */
export function isListConflict(error: unknown): boolean {
  return error instanceof TransactionError && (error.statusCode === 412 || error.statusCode === 409);
}

/**
 * Applies one membership change to an index entity in another partition (its own transaction,
 * ETag-checked). Another writer's change in between fails it: read again, re-plan, resend. A
 * membership is a set, so a re-plan after an attempt that may have applied is safe.
 */
export async function syncList(
  model: EntityModel<object>,
  runner: Requests & Backoff,
  change: ListChange,
): Promise<void> {
  for (let round = 1; ; round++) {
    const actions = await planList(model, runner, change);
    if (actions.length === 0) return;
    try {
      await submitTransaction(runner, change.ref.table, change.ref.partitionKey, actions);
      return;
    } catch (error) {
      if (!isListConflict(error) || round >= MAX_LIST_ROUNDS) throw error;
      await runner.retry.contend(round);
    }
  }
}

/** The RowKeys of the index entities `changes` touch, each once, in order: the rows `listCompanion` adds. */
export function listRowKeys(changes: readonly ListChange[]): string[] {
  const rows = new Map<string, string>();
  for (const { ref } of changes) if (!rows.has(refKey(ref))) rows.set(refKey(ref), ref.rowKey);
  return [...rows.values()];
}

/**
 * The index entities (list indexes) in a transaction's own partition that its entities' writes
 * change, riding in that transaction: read and planned afresh each round, every shard conditional on
 * its ETag, so another writer's change in between fails the transaction and it is planned again.
 * Changes of one index entity by several of the transaction's entities are applied together.
 */
export function listCompanion(
  changes: ReadonlyArray<{ model: EntityModel<object>; change: ListChange }>,
  runner: Requests,
): GroupCompanion {
  const groups = new Map<string, { type: string; ref: CopyRef; changes: ListChange[] }>();
  for (const { model, change } of changes) {
    const key = refKey(change.ref);
    let group = groups.get(key);
    if (group === undefined) {
      group = { type: `${model.type}@${model.version}`, ref: change.ref, changes: [] };
      groups.set(key, group);
    }
    group.changes.push(change);
  }
  return {
    rowKeys: [...groups.values()].map((group) => group.ref.rowKey),
    plan: async () => {
      const planned = await Promise.all(
        [...groups.values()].map(async (group) =>
          planListChange(await readListOrEmpty(runner, group.ref), group.type, group.changes),
        ),
      );
      return planned.flat();
    },
    committed: () => {},
    // A membership is a set: a lost answer is settled by the entity rows (the writer's rules).
    settle: async () => undefined,
  };
}

/**
 * The reads of an entity transaction's list changes, for its plan: each list's rows are read (in
 * parallel) as its commit plans its first round, before a companion plans its rows (see `listStage`).
 */
export function listReads(changes: readonly ListChange[]): StepTarget[] {
  return changes.map(({ ref }) => ({
    request: `query (list ${ref.index})`,
    table: ref.table,
    partitionKey: ref.partitionKey,
    rowKey: ref.rowKey,
  }));
}
