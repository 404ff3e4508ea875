import { ValidationError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import { etagIn } from "../../serialization/entity-etag.js";
import type { StateScope } from "../../util/scoped-state.js";
import { type CopyRef, deriveCopyRefs, isLocal } from "../core/copy-ref.js";
import { INTENTS_TABLE } from "../core/intent-log.js";
import { trackedCopies } from "../index/copy-state.js";
import { containerOf } from "../large/large-reference.js";
import { largeColumnsOf } from "../large/large-values.js";

/** The write operations `explainWrite` renders. */
export type ExplainedOperation = "insert" | "upsert" | "update" | "patch" | "delete";

/** One step of a write's plan, in the order the write sends it. */
export interface WriteStep {
  /** Before the commit (uploads, claims, intents, reads), the commit itself, or after it (copies elsewhere, cleanup). */
  phase: "before" | "commit" | "after";
  /** The request: `get`, `putBlob`, `insert intent`, `claim`, `transaction`, `upsert copy`, `deleteBlob`, … */
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

/** What the stages of a write see: the entity's model, its physical table, and how names are prefixed. */
export interface ExplainContext {
  model: EntityModel<object>;
  table: string;
  tableName: (table: string) => string;
  scope: StateScope;
}

/**
 * The plan of a write of `value`, as the write stages would send it: each stage (large values,
 * indexes, summaries) adds its steps before, in, or after the entity's one entity group transaction.
 * Reads the write needs first are steps too (a read the tracked state makes unnecessary is left out).
 */
export function explainWrite(
  context: ExplainContext,
  operation: ExplainedOperation,
  value: unknown,
): WritePlan {
  const { model, table } = context;
  if (value === null || typeof value !== "object") {
    throw new ValidationError("entity", `${model.name}: explainWrite needs an entity or its key fields`);
  }
  const values = value as Record<string, unknown>;
  const partitionKey = model.partitionKey.encode(values, "PartitionKey");
  const rowKey = model.rowKey.encode(values, "RowKey");
  const writes = operation !== "delete";
  const replaces = operation !== "insert";
  const before: WriteStep[] = [];
  const commit: Array<{ kind: string; rowKey: string }> = [];
  const after: WriteStep[] = [];
  const entityKind =
    operation === "insert"
      ? "insert"
      : operation === "delete"
        ? "delete"
        : operation === "patch"
          ? "merge"
          : operation;
  commit.push({ kind: entityKind, rowKey });

  // Stage: large values. Blob first (the row points at it), the replaced blob removed after.
  const large = largeColumnsOf(model);
  if (large !== undefined) {
    const container = containerOf(table);
    if (replaces)
      before.push({ phase: "before", request: "get (large references)", table, partitionKey, rowKey });
    if (writes) {
      for (const column of large) {
        if (values[column.field] === undefined || values[column.field] === null) continue;
        before.push({ phase: "before", request: `putBlob (${column.field})`, table: container });
      }
    }
    if (replaces) after.push({ phase: "after", request: "deleteBlob (replaced values)", table: container });
  }

  // Stage: indexes. Same-partition copies ride in the transaction; copies elsewhere follow an intent.
  if (model.indexes.size > 0) {
    const tracked =
      etagIn(values, context.scope) !== undefined && trackedCopies(values, context.scope) !== undefined;
    if (replaces && (!tracked || operation === "patch")) {
      before.push({ phase: "before", request: "get (current copies)", table, partitionKey, rowKey });
    }
    const next: CopyRef[] = writes ? deriveCopyRefs(model, value as object, context.tableName, true) : [];
    const local = (ref: CopyRef) => isLocal(ref, table, partitionKey);
    // A copy key the entity did not hold is inserted (a 409 on it: a unique violation), see local-plan.ts.
    for (const ref of next.filter(local))
      commit.push({
        kind: `${operation === "insert" ? "insert" : "upsert"} copy (${ref.index})`,
        rowKey: ref.rowKey,
      });
    const remote = next.filter((ref) => !local(ref));
    const remoteIndexes = [...model.indexes.values()].filter((index) => !index.intraPartition);
    if (remoteIndexes.length > 0) {
      before.push({ phase: "before", request: "insert intent", table: context.tableName(INTENTS_TABLE) });
      for (const ref of remote) {
        const index = model.indexes.get(ref.index);
        if (index?.unique) {
          before.push({
            phase: "before",
            request: `claim (${ref.index})`,
            table: ref.table,
            partitionKey: ref.partitionKey,
            rowKey: ref.rowKey,
          });
        } else {
          after.push({
            phase: "after",
            request: `upsert copy (${ref.index})`,
            table: ref.table,
            partitionKey: ref.partitionKey,
            rowKey: ref.rowKey,
          });
        }
      }
      if (replaces) {
        for (const index of remoteIndexes) {
          after.push({
            phase: "after",
            request: `delete replaced copy (${index.name})`,
            table: context.tableName(index.table),
          });
        }
      }
      after.push({ phase: "after", request: "get (settle race)", table, partitionKey, rowKey });
      after.push({ phase: "after", request: "delete intent", table: context.tableName(INTENTS_TABLE) });
    }
  }

  // Stage: summaries. Each summary row of the partition rides in the transaction, under its ETag; a
  // summary kept elsewhere adds its intent before and its mirrored contribution after (summary-stage.ts).
  const remoteSummaries = [...model.summaries.values()].filter((summary) => summary.remote !== undefined);
  const intents = context.tableName(INTENTS_TABLE);
  if (remoteSummaries.length > 0)
    before.push({ phase: "before", request: "insert summary intent", table: intents });
  for (const summary of model.summaries.values()) {
    commit.push({ kind: `update summary (${summary.name})`, rowKey: summary.rowKey });
  }
  for (const summary of remoteSummaries) {
    after.push({
      phase: "after",
      request: `upsert contribution (${summary.name})`,
      table: context.tableName((summary.remote as { table: string }).table),
    });
  }
  if (remoteSummaries.length > 0)
    after.push({ phase: "after", request: "delete summary intent", table: intents });
  if (model.summaries.size > 0 && replaces) {
    before.push({
      phase: "before",
      request: "get (row before, for the summary delta)",
      table,
      partitionKey,
      rowKey,
    });
  }

  const request = commit.length === 1 ? (commit[0] as { kind: string }).kind : "transaction";
  return {
    steps: [
      ...before,
      {
        phase: "commit",
        request,
        table,
        partitionKey,
        ...(commit.length === 1 ? { rowKey } : {}),
        operations: commit,
      },
      ...after,
    ],
  };
}
