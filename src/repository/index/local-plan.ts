import type { EntityModel } from "../../schema/entity-model.js";
import type { TransactionAction, WireEntity } from "../../store/table-store.js";
import { type CopyRef, refKey } from "../core/copy-ref.js";
import { buildCopy } from "./copy-builder.js";

/**
 * The actions of one entity write in its own partition: the entity (an insert, or a replace
 * conditional on `ifMatch`; or `entityActions`, the rows of a wide entity, see entity-layout.ts), deletes of same-partition copies it no longer derives, and its
 * current same-partition copies. A copy key the entity did not hold before is written with an
 * insert, so a 409 on it means another entity holds the value (a unique violation).
 */
export function planLocalActions<T extends object>(
  model: EntityModel<T>,
  row: WireEntity,
  ifMatch: string | undefined,
  before: readonly CopyRef[],
  next: readonly CopyRef[],
  isLocal: (ref: CopyRef) => boolean,
  entityActions?: readonly TransactionAction[],
): TransactionAction[] {
  const actions: TransactionAction[] = entityActions
    ? [...entityActions]
    : [
        ifMatch === undefined
          ? { kind: "insert", entity: row }
          : { kind: "update", entity: row, mode: "replace", ifMatch },
      ];
  const nextKeys = new Set(next.map(refKey));
  const beforeKeys = new Set(before.map(refKey));
  for (const ref of before) {
    if (isLocal(ref) && !nextKeys.has(refKey(ref))) {
      actions.push({ kind: "delete", partitionKey: ref.partitionKey, rowKey: ref.rowKey, ifMatch: "*" });
    }
  }
  for (const ref of next) {
    if (!isLocal(ref)) continue;
    const copy = buildCopy(model, row, ref);
    actions.push(
      beforeKeys.has(refKey(ref))
        ? { kind: "upsert", entity: copy, mode: "replace" }
        : { kind: "insert", entity: copy },
    );
  }
  return actions;
}
