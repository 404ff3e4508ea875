import { ValidationError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import type { EntityWriter } from "../core/entity-writer.js";
import {
  type ExplainedOperation,
  type RenderedPlan,
  type RenderedStep,
  renderPlan,
  singleRequest,
} from "../core/write-plan.js";

export type { ExplainedOperation } from "../core/write-plan.js";

/** One step of a write's plan, in the order the write sends it (API.md `explainWrite`). */
export type WriteStep = RenderedStep;

/** The plan of one write, without anything sent. */
export type WritePlan = RenderedPlan;

const OPERATIONS: readonly ExplainedOperation[] = ["insert", "upsert", "update", "patch", "delete"];

/**
 * The plan of a write of `value`, built by the entity's writer and its stages exactly as the write
 * builds it (core/write-plan.ts), rendered without sending anything: each stage (large values,
 * indexes, summaries) adds its steps before, in, or after the entity's commit. Reads the write
 * needs first are steps too (a read the tracked state makes unnecessary is left out).
 */
export function explainWrite<T extends object>(
  model: EntityModel<T>,
  table: string,
  writer: EntityWriter<T>,
  operation: ExplainedOperation,
  value: unknown,
): WritePlan {
  if (value === null || typeof value !== "object") {
    throw new ValidationError("entity", `${model.name}: explainWrite needs an entity or its key fields`);
  }
  if (!OPERATIONS.includes(operation)) {
    throw new ValidationError(
      "operation",
      `${model.name}: explainWrite explains ${OPERATIONS.join(", ")}, not '${String(operation)}'`,
      { field: "operation" },
    );
  }
  const plan = writer.explain?.(operation, value as T);
  if (plan !== undefined) return renderPlan(plan);
  // A writer without stages of its own (a wide entity's rows): its one commit.
  const values = value as Record<string, unknown>;
  const partitionKey = model.partitionKey.encode(values, "PartitionKey");
  const rowKey = model.rowKey.encode(values, "RowKey");
  return renderPlan(singleRequest(operation, table, partitionKey, rowKey));
}
