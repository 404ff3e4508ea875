import type { EntityModel } from "../../schema/entity-model.js";
import {
  assertWideRowKey,
  MAX_WIDE_PARTS,
  parseWideEtag,
  partRowKey,
} from "../../serialization/wide-rows.js";
import type { TransactionAction, WireEntity } from "../../store/table-store.js";
import {
  actionOf,
  type ExplainedOperation,
  type ExplainedPlan,
  type PlanOperation,
  type PlanStep,
  type WritePlan,
} from "../core/write-plan.js";
import { plan } from "./wide-actions.js";

/**
 * The plan of one write of a wide entity without indexes or summaries (`explainWrite`), as
 * `WideWriter` sends it: one entity group transaction over the entity's rows (`partRowKey`), the
 * first named by the operation, the others `<action> part`. An insert needs no read, nor do an
 * update and a delete conditional on the instance's tracked ETag (it lists every stored row's). The others read the stored rows first (a query of the entity's RowKey range: only
 * their keys, or every column to merge onto); the rows they replace or delete are those of the state
 * assumed (`stored`: `null` for none, or a read's ETag listing every row's). A patch, or a stored
 * entity without a read's ETag, names them from the first one that may exist (`<action> stored parts`).
 */
export function explainWide<T extends object>(
  model: EntityModel<T>,
  table: string,
  split: (wire: WireEntity) => WireEntity[],
  operation: ExplainedOperation,
  value: T,
  tracked: string | undefined,
  stored: string | null | undefined = undefined,
): ExplainedPlan {
  const values = value as Record<string, unknown>;
  const partitionKey = model.partitionKey.encode(values, "PartitionKey");
  const base = model.rowKey.encode(values, "RowKey");
  assertWideRowKey(model.name, base);
  const keys = { partitionKey, base };
  const kind = actionOf(operation);
  const known = (actions: readonly TransactionAction[]): PlanOperation[] =>
    actions.map((action, i) => {
      const rowKey = action.kind === "delete" ? action.rowKey : action.entity.rowKey;
      return { kind: i === 0 ? kind : `${action.kind} part`, rowKey };
    });
  const parts = () => split(model.mapper.toWire(value));
  const planOf = (before: PlanStep[], operations: PlanOperation[]): WritePlan<unknown> => ({
    before,
    commit: { request: "transaction", table, partitionKey, operations },
    after: [],
  });
  if (operation === "insert") return planOf([], known(plan(keys, parts(), [])));
  const conditional = tracked !== undefined && (operation === "update" || operation === "delete");
  if (conditional) {
    const next = operation === "delete" ? [] : parts();
    return planOf([], known(plan(keys, next, parseWideEtag(model.name, tracked))));
  }
  // Upsert, patch (a merge), update with "*", delete without an ETag: the stored rows read first.
  const merge = operation === "patch";
  const read: PlanStep = {
    request: merge ? "query (stored rows)" : "query (stored rows' keys)",
    table,
    partitionKey,
    rowKey: base,
  };
  // The rows the read finds, when the assumed state says: none (`null`), or those a read's ETag lists.
  const found = stored === undefined ? undefined : stored === null ? [] : parseWideEtag(model.name, stored);
  if (found !== undefined && !merge) {
    // Nothing stored: an update fails on the read (EntityNotFoundError) and a delete ends there.
    if (found.length === 0 && operation !== "upsert") return { before: [read], after: [] };
    return planOf([read], known(plan(keys, operation === "delete" ? [] : parts(), found)));
  }
  // The new version's rows (a merge's and a delete's first row: the rest are known once read), then
  // the stored rows from the first that may exist beyond them (replaced by a merge, else deleted).
  const head = operation === "delete" || merge ? 1 : parts().length;
  const operations: PlanOperation[] = [];
  for (let i = 0; i < head; i++)
    operations.push({ kind: i === 0 ? kind : `${kind} part`, rowKey: partRowKey(base, i) });
  if (head < MAX_WIDE_PARTS)
    operations.push({ kind: `${merge ? "merge" : "delete"} stored parts`, rowKey: partRowKey(base, head) });
  return planOf([read], operations);
}
