import type { StoredEntity, WireEntity, WriteMode } from "../../store/table-store.js";
import type { AssumedState, ExplainedOperation, ExplainedPlan } from "./write-plan.js";

/**
 * How a repository writes one entity of a class: plain entities in one request each (`PlainWriter`),
 * the others as a plan of their stages (write-stages.ts). Every writer settles lost answers by the
 * same rules (`lost-answers.ts`) and tracks the written ETag (and copies) of the instance in the
 * runner's scope. Bulk writes are a `BulkWriter`'s (bulk-types.ts).
 *
 * `wire`, where a write takes one: the entity's row as prepared by a stage around the writer (the
 * large-value stage's, its large columns pointing at the blobs it uploaded), written instead of the
 * entity's mapping. The writer keeps its own rules (keys, copies, companions) over that row.
 */
export interface EntityWriter<T extends object> {
  /** Inserts; `EntityAlreadyExistsError` (or `UniqueConstraintError`) if the key (or a unique value) is taken. */
  insert(entity: T, wire?: WireEntity): Promise<void>;
  /** Inserts or replaces (or merges) without a condition. */
  upsert(entity: T, mode: WriteMode, wire?: WireEntity): Promise<void>;
  /** Replaces or merges an existing entity conditional on `ifMatch` (`"*"`: any version). */
  update(entity: T, mode: WriteMode, ifMatch: string, wire?: WireEntity): Promise<void>;
  /** Deletes by key; `ifMatch` default: the instance's tracked ETag, else unconditional. Resolves whether it existed. */
  delete(key: Partial<T>, ifMatch: string | undefined): Promise<boolean>;
  /**
   * The plan a write of `value` would run, built by the same stages without sending anything (the
   * reads it would make first are steps). `value` is an entity, or key fields for a delete;
   * `assumed`: what is stored (a writer whose requests depend on it plans exactly for that state).
   */
  explain?(operation: ExplainedOperation, value: T, assumed: AssumedState): ExplainedPlan;
  /** Records what a later write of an instance just read needs to know (its copies, for indexed entities). */
  track(entity: T, stored: StoredEntity): void;
}
