import type { EntityModel } from "../../schema/entity-model.js";
import type { Backend, BlobSealing, Requests } from "../core/requests.js";
import { LargeValues, largeColumnsOf } from "../large/large-values.js";
import type { PlannedOperation } from "./transaction.js";

/** The blob half of one operation with large columns: its uploads before, the blobs it replaces after. */
export interface LargeWork {
  large: LargeValues;
  uploads: ReturnType<LargeValues["prepare"]>;
  before: ReadonlyMap<string, string> | undefined;
  operation: PlannedOperation;
}

/** Points the rows of entities with large columns at fresh blobs (no request: see `readReplaced`). */
export function prepareLarge(
  runner: Requests & Backend & BlobSealing,
  table: string,
  operations: readonly PlannedOperation[],
): LargeWork[] {
  // Per class, once (most transactions hold one or two classes and no large column).
  const byModel = new Map<EntityModel<object>, LargeValues | undefined>();
  const work: LargeWork[] = [];
  for (const operation of operations) {
    let large = byModel.get(operation.model);
    if (large === undefined && !byModel.has(operation.model)) {
      const columns = largeColumnsOf(operation.model);
      large = columns && new LargeValues(operation.model, columns, table, runner);
      byModel.set(operation.model, large);
    }
    if (large === undefined) continue;
    const { action } = operation;
    const uploads = action.kind === "delete" ? [] : large.prepare(operation.entity as object, action.entity);
    work.push({ large, uploads, before: undefined, operation });
  }
  return work;
}

/** Reads the blobs the rows replace (their references now), once the transaction passed every rule. */
export async function readReplaced(work: readonly LargeWork[]): Promise<void> {
  await Promise.all(
    work.map(async (item) => {
      if (item.operation.action.kind === "insert") return;
      item.before = await item.large.current(item.operation.partitionKey, item.operation.rowKey);
    }),
  );
}
