import type { TransactionAction } from "../../store/table-store.js";
import { type CopyRef, indexOf, isLocal } from "../core/copy-ref.js";
import type { StagePart } from "../core/write-plan.js";
import { stageSteps } from "../core/write-plan.js";
import {
  describeActions,
  type EntityPlan,
  type EntityPlanning,
  type Existing,
  protocolSteps,
  roundBefore,
} from "./entity-plan.js";
import { entityMember } from "./list-index.js";
import { listReads, membershipChanges } from "./list-membership.js";
import { planRemoteProtocol } from "./remote-protocol.js";

/**
 * The plan of `commitDelete`: with copies elsewhere, an intent before; the transaction deleting the
 * entity and its same-partition copies (with the stage's rows, `stage`: see `stagePart`); after it,
 * the copies elsewhere removed, list entities elsewhere brought in line, a race with another writer
 * settled (see `settleRace`), the intent removed. `prior` undefined: not known
 * (an explained delete): every index may hold a copy.
 */
export function planEntityDelete(
  planning: EntityPlanning,
  partitionKey: string,
  rowKey: string,
  prior: Existing | undefined,
  stage: StagePart | undefined,
): EntityPlan {
  const { model, table, naming, layout } = planning;
  const refs = prior?.refs ?? [];
  const local = (ref: CopyRef) => isLocal(ref, table, partitionKey);
  const isList = (ref: CopyRef) => indexOf(model, ref).list;
  const remote = refs.filter((r) => !local(r));
  const listChanges = membershipChanges(
    refs.filter(isList),
    [],
    entityMember(model, naming, table, partitionKey, rowKey),
  );
  const actions: TransactionAction[] = layout.remove(partitionKey, rowKey, prior?.etag ?? "*");
  const own = { count: actions.length, rowKey };
  for (const ref of refs)
    if (local(ref) && !isList(ref))
      actions.push({ kind: "delete", partitionKey: ref.partitionKey, rowKey: ref.rowKey, ifMatch: "*" });
  const staged = stage && stageSteps(stage);
  // A copy is removed only if the version deleted made it (copy-stamp.ts): the entity written again
  // meanwhile may have made or claimed the same copy.
  const protocol = planRemoteProtocol({
    model,
    naming,
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
  const { before, after } = protocolSteps(protocol);
  const localLists = listChanges.filter((c) => local(c.ref));
  return {
    before: [...before, ...roundBefore(listReads(localLists), staged)],
    // One entity group transaction in the entity's partition (fields listed: see `planEntityWrite`).
    commit: {
      request: "transaction",
      table,
      operations: [
        ...describeActions(actions, own.count, refs, undefined),
        ...localLists.map((c) => ({ kind: `update list (${c.ref.index})`, rowKey: c.ref.rowKey })),
        ...(staged?.operations ?? []),
      ],
      partitionKey,
      actions,
      localLists,
      refs,
      own,
    },
    after: [...(staged?.after ?? []), ...after],
    protocol,
    row: { partitionKey, rowKey },
    deletes: true,
  };
}
