import { ValidationError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import type { EntityWriter } from "../core/entity-writer.js";
import { type ExplainedOperation, renderPlan, singleRequest } from "../core/write-plan.js";

export type { ExplainedOperation } from "../core/write-plan.js";

/**
 * One step of a write's plan, in the order the write sends it (API.md `explainWrite`). The public
 * shape of the plan `core/write-plan.ts` renders (`RenderedStep`, kept internal).
 */
export interface WriteStep {
  /** Before the commit (uploads, claims, intents, reads), the commit itself, or after it (copies elsewhere, cleanup). */
  phase: "before" | "commit" | "after";
  /** The request: `get`, `query` (a wide entity's rows), `putBlob`, `insert intent`, `claim`, `transaction`, `upsert copy`, `deleteBlob`, … */
  request: string;
  /** The table (or, for a blob, the container) it goes to. */
  table: string;
  partitionKey?: string;
  rowKey?: string;
  /** The operations of an entity group transaction, in order. */
  operations?: Array<{ kind: string; rowKey: string }>;
}

/** The plan of one write, without anything sent. */
export interface WritePlan {
  steps: WriteStep[];
}

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
  // A writer that explains nothing itself: its one request.
  const values = value as Record<string, unknown>;
  const partitionKey = model.partitionKey.encode(values, "PartitionKey");
  const rowKey = model.rowKey.encode(values, "RowKey");
  return renderPlan(singleRequest(operation, table, partitionKey, rowKey));
}
