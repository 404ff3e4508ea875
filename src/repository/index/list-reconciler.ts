import type { EntityModel } from "../../schema/entity-model.js";
import type { StoredEntity } from "../../store/table-store.js";
import { type CopyRef, refKey } from "../core/copy-ref.js";
import { readEntity } from "../core/entity-layout.js";
import { isTableNotFound } from "../core/period-tables.js";
import type { Backoff, PeriodTableLookup, Requests, TableNaming } from "../core/requests.js";
import { submitTransaction } from "../core/submit-transaction.js";
import { entityStateOf, isEntityRowOf, isNewerRow } from "./copy-rows.js";
import { parseMember, planListChange, readListOrEmpty } from "./list-index.js";
import { isListConflict, MAX_LIST_ROUNDS } from "./list-membership.js";

/** What one list reconciliation changed: shard rows written (inserted or replaced) and deleted. */
export interface ListOutcome {
  written: number;
  deleted: number;
}

type Runner = Requests & TableNaming & Backoff & PeriodTableLookup;

/**
 * Brings the membership of `members` in one index entity (all its shards) in line with those
 * entities as read now: a member whose entity exists and has the value is added, any other is
 * removed (an entity of a newer version of the class is left alone). The change is one transaction
 * conditional on every shard's ETag (a writer's change in between fails it: read and plan again).
 * If it wrote, the entities are read again: one that changed meanwhile is judged again, so a
 * membership its writer removed just before is not put back for good.
 */
export async function reconcileList(
  model: EntityModel<object>,
  runner: Runner,
  ref: CopyRef,
  members: readonly string[],
): Promise<ListOutcome> {
  const outcome: ListOutcome = { written: 0, deleted: 0 };
  if (members.length === 0) return outcome;
  for (let round = 1; ; round++) {
    const state = await readListOrEmpty(runner, ref);
    const judged = await Promise.all(members.map((member) => judge(model, runner, ref, member)));
    const changes = judged.flatMap((j, i) =>
      j.deferred ? [] : [j.belongs ? { add: members[i] as string } : { remove: members[i] as string }],
    );
    const actions = planListChange(state, `${model.type}@${model.version}`, changes);
    if (actions.length === 0) return outcome;
    try {
      await submitTransaction(runner, ref.table, ref.partitionKey, actions);
    } catch (error) {
      if (!isListConflict(error) || round >= MAX_LIST_ROUNDS) throw error;
      await runner.retry.contend(round);
      continue;
    }
    for (const action of actions) {
      if (action.kind === "delete") outcome.deleted++;
      else outcome.written++;
    }
    const again = await Promise.all(members.map((member) => judge(model, runner, ref, member)));
    if (again.every((j, i) => j.etag === judged[i]?.etag) || round >= MAX_LIST_ROUNDS) return outcome;
  }
}

/** Whether the entity a member names exists now and has the value `ref` lists (with its ETag, to see it change). */
async function judge(
  model: EntityModel<object>,
  runner: Runner,
  ref: CopyRef,
  member: string,
): Promise<{ belongs: boolean; deferred: boolean; etag: string | undefined }> {
  const named = parseMember(member);
  // An entry of an entity kept in a table per period names its period's table; one that does not names nothing.
  if (model.tableTemplate !== undefined && named.table === undefined)
    return { belongs: false, deferred: false, etag: undefined };
  const table = runner.tableName(named.table ?? model.table);
  let row: StoredEntity | undefined;
  try {
    row = model.wide
      ? await readEntity(model, runner, table, named.partitionKey, named.rowKey)
      : await runner.run("get", table, (s) => s.getEntity(table, named.partitionKey, named.rowKey));
  } catch (error) {
    // The entity's (period) table is gone: so is the entity.
    if (!isTableNotFound(error)) throw error;
  }
  if (!row || !isEntityRowOf(model, row)) return { belongs: false, deferred: false, etag: undefined };
  if (isNewerRow(model, row)) return { belongs: false, deferred: true, etag: row.etag };
  const key = refKey(ref);
  const belongs = entityStateOf(model, runner, row).refs.some(
    (r) => r.index === ref.index && refKey(r) === key,
  );
  return { belongs, deferred: false, etag: row.etag };
}
