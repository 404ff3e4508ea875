import type { EntityModel } from "../../schema/entity-model.js";
import { type CopyRef, indexOf, refKey } from "../core/copy-ref.js";
import { INTENTS_TABLE } from "../core/intent-log.js";
import type { TableNaming } from "../core/requests.js";
import type { StepTarget } from "../core/write-plan.js";
import type { ListChange } from "./list-membership.js";
import { union } from "./write-settling.js";

/**
 * One request of the remote-copy protocol, as data: what it does (`kind`, with the copy or list change
 * it is about) and the request it renders as (`target`). `remote-protocol-run.ts` sends it.
 */
export type RemoteStep = { readonly target: StepTarget } & (
  | { readonly kind: "insert intent"; readonly refs: readonly CopyRef[] }
  | { readonly kind: "claim" | "upsert copy" | "get kept copy" | "replace copy"; readonly ref: CopyRef }
  /** `ref` undefined: the state is not known (an explained write), the index may hold a copy. */
  | { readonly kind: "get replaced copy" | "remove replaced copy"; readonly ref: CopyRef | undefined }
  | { readonly kind: "update list"; readonly change: ListChange }
  | { readonly kind: "settle" | "delete intent" }
);

/** The protocol of one write with copies elsewhere: its steps before and after the commit. */
export interface RemoteProtocol {
  readonly before: readonly RemoteStep[];
  readonly after: readonly RemoteStep[];
  /** The version the write replaces (its condition), when it replaces one: its copies are the ones removed. */
  readonly priorEtag: string | undefined;
  /**
   * What a definite refusal of the commit undoes: `reconcile` brings the copies the intent names in
   * line with the entity as stored (taking back this write's claims), then drops the intent; `drop`
   * only drops it (a single delete claims nothing).
   */
  readonly onRefusal: "reconcile" | "drop";
}

/** What the protocol of one write is planned from. */
export interface RemoteWrite {
  readonly model: EntityModel<object>;
  readonly naming: TableNaming;
  /** The entity's physical table. */
  readonly table: string;
  readonly partitionKey: string;
  readonly rowKey: string;
  /** The entity's copies in other partitions or tables before the write, and after it. */
  readonly before: readonly CopyRef[];
  readonly next: readonly CopyRef[];
  /** Its membership changes of list entities in other partitions or tables. */
  readonly lists: readonly ListChange[];
  readonly priorEtag: string | undefined;
  /** The copies the entity holds are not known (an explained write): each remote index may drop one. */
  readonly unknown: boolean;
  /**
   * A single delete (`planEntityDelete`): its removals render as `delete copy`, and a refusal only
   * drops the intent. A transaction's delete is planned as a write (it renders and undoes as one).
   */
  readonly deletes?: boolean;
}

/**
 * The remote-copy protocol of one write (`undefined` when it has no copies elsewhere: no request).
 * Before the commit: the intent naming every remote copy that may exist after it (old and new), then
 * the claims of unique values the entity does not hold yet. After it: each copy written (stamped with
 * the version committed; a unique value's only over this write's own, so a kept value's copy is read
 * first), each copy the replaced version made read and removed, list entities elsewhere brought in
 * line, the race with another writer settled (issue 34), the intent removed. Pure: no request is sent.
 */
export function planRemoteProtocol(write: RemoteWrite): RemoteProtocol | undefined {
  const { model, naming, before: held, next } = write;
  const remoteIndexes = [...model.indexes.values()].filter((index) => !index.intraPartition);
  const described = write.unknown && remoteIndexes.length > 0;
  if (held.length === 0 && next.length === 0 && !described) return undefined;
  const isList = (ref: CopyRef) => indexOf(model, ref).list;
  const heldKeys = new Set(held.map(refKey));
  const intents = { table: naming.tableName(INTENTS_TABLE) };
  const before: RemoteStep[] = [
    { kind: "insert intent", refs: union(held, next), target: { request: "insert intent", ...intents } },
  ];
  const after: RemoteStep[] = [];
  for (const ref of next) {
    if (isList(ref)) continue;
    if (!indexOf(model, ref).unique) {
      // A copy no other entity can hold (its key is this entity's).
      after.push({ kind: "upsert copy", ref, target: refTarget(`upsert copy (${ref.index})`, ref) });
      continue;
    }
    // A new value is claimed before the commit; a value the replaced version held is not claimed again.
    if (heldKeys.has(refKey(ref))) {
      after.push({ kind: "get kept copy", ref, target: refTarget(`get kept copy (${ref.index})`, ref) });
    } else {
      before.push({ kind: "claim", ref, target: refTarget(`claim (${ref.index})`, ref) });
    }
    after.push({ kind: "replace copy", ref, target: refTarget(`replace copy (${ref.index})`, ref) });
  }
  const removal = write.deletes ? "delete copy" : "delete replaced copy";
  const keep = new Set(next.map(refKey));
  for (const ref of held) {
    if (isList(ref) || keep.has(refKey(ref))) continue;
    after.push(
      { kind: "get replaced copy", ref, target: refTarget(`get replaced copy (${ref.index})`, ref) },
      { kind: "remove replaced copy", ref, target: refTarget(`${removal} (${ref.index})`, ref) },
    );
  }
  if (write.unknown) {
    for (const index of remoteIndexes) {
      const table = naming.tableName(index.table);
      after.push(
        {
          kind: "get replaced copy",
          ref: undefined,
          target: { request: `get replaced copy (${index.name})`, table },
        },
        {
          kind: "remove replaced copy",
          ref: undefined,
          target: { request: `${removal} (${index.name})`, table },
        },
      );
    }
  }
  for (const change of write.lists)
    after.push({
      kind: "update list",
      change,
      target: refTarget(`update list (${change.ref.index})`, change.ref),
    });
  const { table, partitionKey, rowKey } = write;
  after.push(
    // A wide entity's rows are read as one range query.
    {
      kind: "settle",
      target: { request: `${model.wide ? "query" : "get"} (settle race)`, table, partitionKey, rowKey },
    },
    { kind: "delete intent", target: { request: "delete intent", ...intents } },
  );
  return { before, after, priorEtag: write.priorEtag, onRefusal: write.deletes ? "drop" : "reconcile" };
}

function refTarget(request: string, ref: CopyRef): StepTarget {
  return { request, table: ref.table, partitionKey: ref.partitionKey, rowKey: ref.rowKey };
}
