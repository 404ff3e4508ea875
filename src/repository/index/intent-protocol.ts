import type { WireEntity } from "../../store/table-store.js";
import type { CopyRef } from "../core/copy-ref.js";
import { runPlan } from "../core/write-plan.js";
import { planEntityDelete } from "./entity-delete-plan.js";
import { type Existing, type IndexedTarget, type Prior, planEntityWrite } from "./entity-plan.js";

export { planEntityDelete } from "./entity-delete-plan.js";
export type { Existing, IndexedTarget, Prior } from "./entity-plan.js";
export { planEntityWrite } from "./entity-plan.js";

/**
 * Writes an entity and its copies. Copies in the entity's own table and partition ride in the
 * entity's entity group transaction (atomic: the design guide's intra-partition index). Copies
 * elsewhere follow the eventually-consistent-transactions pattern: an intent is recorded first,
 * unique values are claimed, the entity is written, copies are brought in line, the intent is
 * removed; `repairIndexes` replays intents left by a crash (or by a write whose outcome is unknown).
 * Resolves the entity's new ETag and the copies it now has.
 */
export function commitEntity(
  target: IndexedTarget,
  wire: WireEntity,
  prior: Prior,
  ifMatch: string | undefined,
): Promise<{ etag: string; refs: CopyRef[] }> {
  return runPlan(planEntityWrite(target, wire, prior, ifMatch));
}

/** Deletes an entity and its copies (the same protocol as `commitEntity`, with no claims). */
export async function commitDelete(
  target: IndexedTarget,
  partitionKey: string,
  rowKey: string,
  prior: Existing,
): Promise<void> {
  await runPlan(planEntityDelete(target, partitionKey, rowKey, prior));
}
