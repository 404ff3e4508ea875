import { blindSidecars } from "../../schema/blind-index-plan.js";
import type { EntityModel } from "../../schema/entity-model.js";
import {
  assertWideRowKey,
  MAX_WIDE_PARTS,
  parseWideEtag,
  partRowKey,
  splitWide,
} from "../../serialization/wide-rows.js";
import type { StoredEntity, TransactionAction, WireEntity } from "../../store/table-store.js";
import { isUserProperty } from "../../wire/system-properties.js";
import { KEYS_ONLY, newWriteId, wideRowActions } from "../core/entity-layout.js";
import type { Limited } from "../core/requests.js";

/**
 * What a wide entity's write inside a caller's entity group transaction reads of its stored rows
 * first (see `wideTransactionActions`): nothing (an insert, or a condition on a known version), their
 * keys, or (a merge) the whole entity. `undefined`: no read.
 */
export function wideTransactionRead(
  model: EntityModel<object>,
  action: TransactionAction,
): { select: readonly string[] | undefined } | undefined {
  assertWideRowKey(model.name, action.kind === "delete" ? action.rowKey : action.entity.rowKey);
  if (action.kind === "insert") return undefined;
  const conditional = (action.kind === "update" || action.kind === "delete") && action.ifMatch !== "*";
  const merge = action.kind !== "delete" && action.mode === "merge";
  return conditional && !merge ? undefined : { select: merge ? undefined : KEYS_ONLY };
}

/**
 * The actions of one wide entity's write inside a caller's entity group transaction (`db.transaction`):
 * its rows replacing what is stored, as its own write would send them (an upsert, a merge or an update
 * with `"*"` replaces the stored rows `current` that `wideTransactionRead` read, so rows of a longer
 * version are deleted with it).
 */
export function wideTransactionActions(
  model: EntityModel<object>,
  limited: Limited,
  action: TransactionAction,
  current: StoredEntity | undefined,
): TransactionAction[] {
  const order = model.columns.map((column) => column.property);
  const split = (wire: WireEntity) =>
    splitWide(
      model.name,
      wire,
      limited.limits,
      newWriteId(),
      Math.min(MAX_WIDE_PARTS, limited.limits.maxTransactionOperations),
      blindSidecars(model.columns),
    );
  const partitionKey = action.kind === "delete" ? action.partitionKey : action.entity.partitionKey;
  const base = action.kind === "delete" ? action.rowKey : action.entity.rowKey;
  assertWideRowKey(model.name, base);
  const conditional = (action.kind === "update" || action.kind === "delete") && action.ifMatch !== "*";
  const merge = action.kind !== "insert" && action.kind !== "delete" && action.mode === "merge";
  if (action.kind === "insert") return wideRowActions(partitionKey, base, split(action.entity), []);
  const stored = conditional
    ? parseWideEtag(model.name, (action as { ifMatch: string }).ifMatch)
    : current === undefined
      ? []
      : parseWideEtag(model.name, current.etag);
  if (action.kind === "delete") {
    // Absent: a delete of the first row, which fails the transaction as for any missing entity.
    return stored.length === 0
      ? [{ kind: "delete", partitionKey, rowKey: partRowKey(base, 0), ifMatch: "*" }]
      : wideRowActions(partitionKey, base, [], stored);
  }
  if (action.kind === "update" && stored.length === 0) {
    return [
      { kind: "update", entity: { partitionKey, rowKey: partRowKey(base, 0) }, mode: "merge", ifMatch: "*" },
    ];
  }
  const wire = merge && current !== undefined ? merged(current, action.entity, order) : action.entity;
  return wideRowActions(partitionKey, base, split(wire), stored);
}

/**
 * A merge: the stored entity's properties, overwritten by those the write sends, in the class's
 * column order (then properties the class does not know), so the rows are split as for a replace.
 */
function merged(current: StoredEntity, wire: WireEntity, order: readonly string[]): WireEntity {
  const values: Record<string, WireEntity[string]> = {};
  for (const name in current) {
    if (isUserProperty(name)) values[name] = current[name];
  }
  for (const name in wire) {
    if (name !== "partitionKey" && name !== "rowKey") values[name] = wire[name];
  }
  const out: WireEntity = { partitionKey: wire.partitionKey, rowKey: wire.rowKey };
  for (const name of order) {
    if (values[name] !== undefined) out[name] = values[name];
  }
  for (const name in values) {
    if (!(name in out)) out[name] = values[name];
  }
  return out;
}
