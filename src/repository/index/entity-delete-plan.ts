import type { TransactionAction } from "../../store/table-store.js";
import { type CopyRef, indexOf, isLocal } from "../core/copy-ref.js";
import { entityLayout } from "../core/entity-layout.js";
import { INTENTS_TABLE, type Intent } from "../core/intent-log.js";
import { type PlanStep, stageSteps, type WritePlan } from "../core/write-plan.js";
import { stampedBy, versionStamp } from "./copy-stamp.js";
import {
  commitTarget,
  describeActions,
  type Existing,
  type IndexedTarget,
  listStep,
  releaseSteps,
} from "./entity-plan.js";
import { submitEntityTransaction } from "./entity-transaction.js";
import { entityMember } from "./list-index.js";
import { membershipChanges } from "./list-membership.js";
import { isDefinitive } from "./write-errors.js";
import { settleRace } from "./write-settling.js";

/**
 * The plan of `commitDelete`: with copies elsewhere, an intent before; the transaction deleting the
 * entity and its same-partition copies (with the stages' rows); after it, the copies elsewhere
 * removed, list entities elsewhere brought in line, a race with another writer settled (see
 * `settleRace`), the intent removed. `prior` undefined: not known
 * (an explained delete): every index may hold a copy.
 */
export function planEntityDelete(
  target: IndexedTarget,
  partitionKey: string,
  rowKey: string,
  prior: Existing | undefined,
): WritePlan {
  const { model, table, runner, intents } = target;
  const refs = prior?.refs ?? [];
  const local = (ref: CopyRef) => isLocal(ref, table, partitionKey);
  const isList = (ref: CopyRef) => indexOf(model, ref).list;
  const remote = refs.filter((r) => !local(r));
  const listChanges = membershipChanges(
    refs.filter(isList),
    [],
    entityMember(model, runner, table, partitionKey, rowKey),
  );
  const layout = entityLayout(model, runner, table);
  const actions: TransactionAction[] = layout.remove(partitionKey, rowKey, prior?.etag ?? "*");
  const own = { layout, count: actions.length, rowKey };
  for (const ref of refs)
    if (local(ref) && !isList(ref))
      actions.push({ kind: "delete", partitionKey: ref.partitionKey, rowKey: ref.rowKey, ifMatch: "*" });
  const companion = target.companions?.companion({
    partitionKey,
    rowKey,
    condition: prior?.etag ?? "*",
    before: prior?.row,
    after: undefined,
  });
  const stage = companion && stageSteps(companion);
  const intentTable = runner.tableName(INTENTS_TABLE);
  const remoteIndexes = [...model.indexes.values()].filter((index) => !index.intraPartition);
  const withIntent = prior === undefined ? remoteIndexes.length > 0 : remote.length > 0;
  let intent: Intent | undefined;
  // A copy is removed only if the version deleted made it (copy-stamp.ts): the entity written again
  // meanwhile may have made or claimed the same copy.
  const replaced = prior === undefined ? undefined : versionStamp(prior.etag);
  const before: PlanStep[] = [];
  const after: PlanStep[] = [];
  if (withIntent) {
    before.push({
      request: "insert intent",
      table: intentTable,
      run: async () => {
        intent = await intents.record(model.type, table, partitionKey, rowKey, remote);
      },
      // Only a definite refusal left nothing to do; otherwise the delete may stand: repair finishes it.
      abandon: async (error) => {
        if (intent && isDefinitive(error)) await intents.complete(intent);
      },
    });
    for (const ref of remote.filter((r) => !isList(r)))
      after.push(
        ...releaseSteps(model, runner, { partitionKey, rowKey }, ref, stampedBy(replaced), "delete copy"),
      );
    if (prior === undefined)
      for (const index of remoteIndexes) {
        const at = { table: runner.tableName(index.table) };
        after.push({ request: `get replaced copy (${index.name})`, ...at });
        after.push({ request: `delete copy (${index.name})`, ...at });
      }
    for (const change of listChanges) if (!local(change.ref)) after.push(listStep(model, runner, change));
    // A write of the entity after this delete may have made the same copies again before these removals landed.
    after.push({
      request: "get (settle race)",
      table,
      partitionKey,
      rowKey,
      run: () =>
        intent ? settleRace(target, partitionKey, rowKey, undefined, intent, prior?.etag) : Promise.resolve(),
    });
    after.push({
      request: "delete intent",
      table: intentTable,
      run: () => (intent ? intents.complete(intent) : Promise.resolve()),
    });
  }
  const localLists = listChanges.filter((c) => local(c.ref));
  return {
    before: [...before, ...(stage?.before ?? [])],
    commit: {
      ...commitTarget(table, partitionKey),
      operations: [
        ...describeActions(actions, own.count, refs, undefined),
        ...localLists.map((c) => ({ kind: `update list (${c.ref.index})`, rowKey: c.ref.rowKey })),
        ...(stage?.operations ?? []),
      ],
      send: async () => {
        await submitEntityTransaction(
          model,
          runner,
          table,
          partitionKey,
          actions,
          localLists,
          refs,
          own,
          companion,
        );
      },
    },
    after: [...(stage?.after ?? []), ...after],
  };
}
