import { ValidationError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import { etagIn } from "../../serialization/entity-etag.js";
import type { StoredEntity } from "../../store/table-store.js";
import { COPY_REFS_PROPERTY, encodeCopyRefs } from "../core/copy-ref.js";
import { dependsOnStored, readOfStored } from "../core/entity-features.js";
import type { Planning, RequestContext, Scoped } from "../core/requests.js";
import type { RenderedStep, StepTarget } from "../core/write-plan.js";
import { trackedCopies } from "../index/copy-state.js";
import type { PlannedOperation } from "./transaction.js";
import { planTransaction, type StoredReader } from "./transaction-parts.js";
import { transactionPlan } from "./transaction-plan.js";

/** The version an explained transaction assumes of an entity given as stored that no read returned. */
const ASSUMED_ETAG = 'W/"assumed"';

/** Numbers the groups of steps sent in parallel, across the transactions of one plan (a bulk write's batches). */
export interface GroupCounter {
  next: number;
}

/**
 * The steps of one `db.transaction` (or bulk batch) as it runs from the state `assumed` gives,
 * planned by the code the transaction runs (`planTransaction`: its reads go to `assumed` instead of
 * the store; `transactionPlan`: the steps `commitTransaction` runs) and rendered request by request. The
 * requests of different entities that run together (their reads, uploads, intents and claims,
 * copies elsewhere) share a `group`: in any order among themselves.
 */
export async function explainTransactionSteps(
  runner: RequestContext,
  planning: Planning,
  operations: readonly PlannedOperation[],
  assumed: (operation: PlannedOperation) => object | undefined,
  groups: GroupCounter,
): Promise<RenderedStep[]> {
  for (const { model } of operations) {
    // Its rows are replaced by what a read of their keys finds (wide-actions.ts), which is not planned here.
    if (model.wide && !dependsOnStored(model))
      throw new ValidationError(
        "explain",
        `${model.name}: a wide entity without indexes or summaries is not explained in a transaction`,
      );
  }
  const reads: StepTarget[] = [];
  const read: StoredReader = async (operation) => {
    const table = planning.tableName(operation.table);
    const { partitionKey, rowKey, model } = operation;
    const request = readOfStored(model);
    reads.push({ request, table, partitionKey, rowKey });
    const entity = assumed(operation);
    return entity && storedRow(model, entity, planning);
  };
  const parts = await planTransaction(runner, planning, operations, read);
  const plan = transactionPlan(planning, operations, parts, assumed);
  const steps: RenderedStep[] = [];
  const together = (phase: RenderedStep["phase"], targets: readonly StepTarget[]) => {
    const group = targets.length > 1 ? ++groups.next : undefined;
    for (const target of targets) steps.push({ phase, ...target, ...(group === undefined ? {} : { group }) });
  };
  // The planner's reads first (planTransaction's), then the plan's steps as the send path runs them.
  together("before", reads);
  for (const step of plan.before) together("before", step.requests);
  steps.push({ phase: "commit", ...plan.commit });
  for (const step of plan.after) together("after", step.requests);
  return steps;
}

/**
 * The entity as a read of it would have returned it: its row, under its tracked (or an assumed) ETag,
 * listing the copies tracked for it (an instance changed since its read still holds those).
 */
function storedRow(model: EntityModel<object>, entity: object, planning: Scoped): StoredEntity {
  const refs = trackedCopies(entity, planning.scope);
  return {
    ...model.mapper.toWire(entity),
    ...(refs === undefined ? {} : { [COPY_REFS_PROPERTY]: encodeCopyRefs(refs) }),
    etag: etagIn(entity, planning.scope) ?? ASSUMED_ETAG,
  };
}
