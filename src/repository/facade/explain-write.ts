import { ValidationError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import { etagIn } from "../../serialization/entity-etag.js";
import type { StateScope } from "../../util/scoped-state.js";
import type { EntityWriter } from "../core/entity-writer.js";
import { type AssumedState, type ExplainedOperation, renderPlan, singleRequest } from "../core/write-plan.js";

export type { ExplainedOperation } from "../core/write-plan.js";

/**
 * One step of a write's plan, in the order the write sends it (API.md `explainWrite`). The public
 * shape of the plan `core/write-plan.ts` renders (`RenderedStep`, kept internal).
 */
export interface WriteStep {
  /** Before the commit (uploads, claims, intents, reads), the commit itself, or after it (copies elsewhere, cleanup). */
  phase: "before" | "commit" | "after";
  /** The request: `get`, `query` (a wide entity's rows), `putBlob`, `insert intent`, `claim`, `transaction`, `upsert copy`, `get kept copy`, `replace copy`, `deleteBlob`, … */
  request: string;
  /** The table (or, for a blob, the container) it goes to. */
  table: string;
  partitionKey?: string;
  rowKey?: string;
  /** The operations of an entity group transaction, in order. */
  operations?: Array<{ kind: string; rowKey: string }>;
  /**
   * Set on steps that are sent in parallel (the reads, uploads, intents and claims of several
   * entities of one transaction, the batches of a bulk write): the steps of one group are sent in
   * any order among themselves (the requests of one entity or batch keep their order); groups, and
   * steps without one, are sent in plan order. Absent: the step is sent in its place.
   */
  group?: number;
}

/** What an explained write may assume (API.md, "Explaining every write form"). */
export interface ExplainOptions<T extends object = object> {
  /**
   * The stored entities (as reads returned them) the plan may assume; an entity returned by a read
   * is its own current state, and anything else is assumed absent. The plan is exact for that state:
   * the requests the write then sends from it are the plan's steps.
   */
  current?: Iterable<Partial<T>> | undefined;
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
 * needs first are steps too (a read the tracked state makes unnecessary is left out). The plan is
 * exact for the state `options.current` describes (with `value` itself when a read returned it).
 */
export function explainWrite<T extends object>(
  model: EntityModel<T>,
  table: string,
  writer: EntityWriter<T>,
  operation: ExplainedOperation,
  value: unknown,
  options: ExplainOptions<T> & { scope: StateScope },
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
  const plan = writer.explain?.(operation, value as T, assumedState(model, value as T, options));
  if (plan !== undefined) return renderPlan(plan);
  // A writer that explains nothing itself: its one request.
  const values = value as Record<string, unknown>;
  const partitionKey = model.partitionKey.encode(values, "PartitionKey");
  const rowKey = model.rowKey.encode(values, "RowKey");
  return renderPlan(singleRequest(operation, table, partitionKey, rowKey));
}

/**
 * The state a plan assumes: `value` itself at its keys when a read returned it (its ETag is tracked
 * in `scope`), else the entity of `current` at those keys, else nothing.
 */
export function assumedState<T extends object>(
  model: EntityModel<T>,
  value: T | undefined,
  { current, scope }: ExplainOptions<T> & { scope: StateScope },
): AssumedState {
  const stored = new Map<string, object>();
  const at = (entity: object) => {
    const values = entity as Record<string, unknown>;
    return `${model.partitionKey.encode(values, "PartitionKey")}\u0001${model.rowKey.encode(values, "RowKey")}`;
  };
  for (const entity of current ?? []) {
    if (entity === null || typeof entity !== "object")
      throw new ValidationError(
        "current",
        `${model.name}: options.current holds entities, not '${String(entity)}'`,
      );
    stored.set(at(entity), entity);
  }
  if (value !== undefined && etagIn(value, scope) !== undefined) stored.set(at(value), value);
  return (partitionKey, rowKey) => stored.get(`${partitionKey}\u0001${rowKey}`);
}
