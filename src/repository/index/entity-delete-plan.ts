import type { TransactionAction } from "../../store/table-store.js";
import { type CopyRef, indexOf, isLocal } from "../core/copy-ref.js";
import { entityLayout } from "../core/entity-layout.js";
import { stageSteps, type WritePlan } from "../core/write-plan.js";
import {
  commitTarget,
  describeActions,
  type Existing,
  type IndexedTarget,
  roundBefore,
} from "./entity-plan.js";
import { submitEntityTransaction } from "./entity-transaction.js";
import { entityMember } from "./list-index.js";
import { listReads, membershipChanges } from "./list-membership.js";
import { planRemoteProtocol } from "./remote-protocol.js";
import { RemoteProtocolRun } from "./remote-protocol-run.js";

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
  const { model, table, runner } = target;
  const refs = prior?.refs ?? [];
  const local = (ref: CopyRef) => isLocal(ref, table, partitionKey);
  const isList = (ref: CopyRef) => indexOf(model, ref).list;
  const remote = refs.filter((r) => !local(r));
  const listChanges = membershipChanges(
    refs.filter(isList),
    [],
    entityMember(model, runner, table, partitionKey, rowKey),
  );
  const layout = target.layout ?? entityLayout(model, runner, table);
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
  // A copy is removed only if the version deleted made it (copy-stamp.ts): the entity written again
  // meanwhile may have made or claimed the same copy.
  const protocol = planRemoteProtocol({
    model,
    naming: runner,
    table,
    partitionKey,
    rowKey,
    before: remote,
    next: [],
    lists: listChanges.filter((change) => !local(change.ref)),
    priorEtag: prior?.etag,
    unknown: prior === undefined,
    deletes: true,
  });
  const { before, after } = protocol
    ? new RemoteProtocolRun(target, { partitionKey, rowKey }, protocol, () => undefined).planSteps()
    : { before: [], after: [] };
  const localLists = listChanges.filter((c) => local(c.ref));
  return {
    before: [...before, ...roundBefore(listReads(localLists), stage)],
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
