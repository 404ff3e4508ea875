import type { WireEntity } from "../../store/table-store.js";
import { runPlan } from "../core/write-plan.js";
import type { EntityPlanning } from "./entity-plan.js";
import { EntityPlanRun, type EntityWritten, planDelete, planWrite } from "./entity-plan-run.js";
import type { Existing, IndexedTarget, Prior } from "./indexed-target.js";

export { entityPlanning, planDelete, planWrite } from "./entity-plan-run.js";
export type { Existing, IndexedTarget, Prior } from "./indexed-target.js";

/**
 * Writes an entity and its copies. Copies in the entity's own table and partition ride in the
 * entity's entity group transaction (atomic: the design guide's intra-partition index). Copies
 * elsewhere follow the eventually-consistent-transactions pattern: an intent is recorded first,
 * unique values are claimed, the entity is written, copies are brought in line, the intent is
 * removed; `repairIndexes` replays intents left by a crash (or by a write whose outcome is unknown).
 * Resolves the entity's new ETag and the copies it now has. The plan is data (`planWrite`); its
 * executor (`EntityPlanRun`) sends it.
 */
export function commitEntity(
  target: IndexedTarget,
  planning: EntityPlanning,
  wire: WireEntity,
  prior: Prior,
  ifMatch: string | undefined,
): Promise<EntityWritten> {
  const planned = planWrite(target, planning, wire, prior, ifMatch);
  return runPlan(planned.plan, new EntityPlanRun(target, planned));
}

/** Deletes an entity and its copies (the same protocol as `commitEntity`, with no claims). */
export async function commitDelete(
  target: IndexedTarget,
  planning: EntityPlanning,
  partitionKey: string,
  rowKey: string,
  prior: Existing,
): Promise<void> {
  const planned = planDelete(target, planning, partitionKey, rowKey, prior);
  await runPlan(planned.plan, new EntityPlanRun(target, planned));
}
