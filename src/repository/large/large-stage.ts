import type { EntityModel } from "../../schema/entity-model.js";
import type { StoredEntity, WireEntity, WriteMode } from "../../store/table-store.js";
import type { EntityWriter } from "../core/entity-writer.js";
import {
  type AssumedState,
  around,
  type ExplainedOperation,
  type ExplainedPlan,
  type PlanCommit,
  type PlanExecutor,
  type PlanStep,
  runPlan,
  type StepAction,
  singleRequest,
} from "../core/write-plan.js";
import type { LargeValues } from "./large-values.js";

/**
 * The large-value stage of every entity write, around the writer of whatever else the entity keeps
 * (its row alone, its index copies, its summary rows): before the commit, the values are uploaded
 * under fresh blob names and the row is pointed at them; the inner writer then commits the row (with
 * its copies and summary rows, by its own rules); after the commit, the blobs the row pointed at
 * before are removed. The stage knows nothing of the inner writer's features, and the inner writer
 * nothing of blobs: it is handed the prepared row (its `wire` parameter), which already carries references.
 *
 * A crash or failure between those requests leaves at worst a blob no row points at, which
 * `db.repair()` removes; a row never points at a blob that was not fully written.
 */
export class LargeStage<T extends object> implements EntityWriter<T> {
  readonly #model: EntityModel<T>;
  readonly #large: LargeValues;
  readonly #inner: EntityWriter<T>;

  constructor(model: EntityModel<T>, large: LargeValues, inner: EntityWriter<T>) {
    this.#model = model;
    this.#large = large;
    this.#inner = inner;
  }

  // The outermost writer: it prepares the row itself, unless it is given one prepared ahead (`ahead`:
  // a `db.eventually` step's, `Repository.writePrepared`), whose large values are uploaded already.
  insert(entity: T, ahead?: WireEntity): Promise<void> {
    // No row exists (or the insert fails): nothing old to remove, so no read first.
    return this.#write(entity, ahead, "replace", false, (wire) => this.#inner.insert(entity, wire));
  }

  upsert(entity: T, mode: WriteMode, ahead?: WireEntity): Promise<void> {
    return this.#write(entity, ahead, mode, true, (wire) => this.#inner.upsert(entity, mode, wire));
  }

  update(entity: T, mode: WriteMode, ifMatch: string, ahead?: WireEntity): Promise<void> {
    return this.#write(entity, ahead, mode, true, (wire) => this.#inner.update(entity, mode, ifMatch, wire));
  }

  async delete(key: Partial<T>, ifMatch: string | undefined): Promise<boolean> {
    const values = key as Record<string, unknown>;
    const partitionKey = this.#model.partitionKey.encode(values, "PartitionKey");
    const rowKey = this.#model.rowKey.encode(values, "RowKey");
    const row = { partitionKey, rowKey };
    const plan = { ...largeSteps(this.#large, row, undefined, true), commit: COMMIT };
    return runPlan(
      plan,
      new LargeRun(this.#large, row, undefined, false, () => this.#inner.delete(key, ifMatch)),
    );
  }

  /**
   * The large values' steps around the inner writer's plan: the stored row's references read (when
   * the write may replace them), the uploads, and after the commit one removal per blob the stored
   * row (as `assumed` gives it) points at that the written row no longer does.
   */
  explain(operation: ExplainedOperation, value: T, assumed: AssumedState): ExplainedPlan {
    const inner = this.#inner.explain?.(operation, value, assumed);
    const values = value as Record<string, unknown>;
    const partitionKey = this.#model.partitionKey.encode(values, "PartitionKey");
    const rowKey = this.#model.rowKey.encode(values, "RowKey");
    const row = { partitionKey, rowKey };
    // Encodes the values (a bad one is a ValidationError here too) under names nothing is sent to.
    const uploads = operation === "delete" ? undefined : this.#large.prepare(value, { ...row });
    const steps = largeSteps(this.#large, row, uploads, operation !== "insert");
    // The blobs the stored row points at: each is replaced (a new value has a new name), kept by a
    // patch that leaves its column alone; a write refused before its commit removes none.
    const stored = assumed(partitionKey, rowKey) as Record<string, unknown> | undefined;
    const written = inner?.commit !== undefined;
    const stale = this.#large.columns.filter(
      (column) =>
        written && stored?.[column.field] != null && !(operation === "patch" && values[column.field] == null),
    );
    const removals = stale.map((column) => ({
      request: `deleteBlob (replaced ${column.field})`,
      table: this.#large.container,
    }));
    const plan = inner ?? singleRequest(operation, this.#large.table, partitionKey, rowKey);
    return around({ before: steps.before, after: removals }, plan);
  }

  track(entity: T, stored: StoredEntity): void {
    this.#inner.track(entity, stored);
  }

  /**
   * Before: the row's current references (when it may replace one) and the uploads. Commit: the
   * inner writer, with the prepared row. After: the replaced blobs removed (or, when the commit was
   * certainly refused, the new ones).
   */
  async #write(
    entity: T,
    ahead: WireEntity | undefined,
    mode: WriteMode,
    replaces: boolean,
    commit: (wire: WireEntity) => Promise<void>,
  ): Promise<void> {
    const wire = ahead === undefined ? this.#model.mapper.toWire(entity) : { ...ahead };
    const uploads = ahead === undefined ? this.#large.prepare(entity, wire) : [];
    const plan = { ...largeSteps(this.#large, wire, uploads, replaces), commit: COMMIT };
    // The inner writer gets a copy: `wire` is what the removals after the commit compare with.
    await runPlan(
      plan,
      new LargeRun(this.#large, wire, uploads, mode === "merge", () => commit({ ...wire })),
    );
  }
}

/** The commit of a large stage's plan: the inner writer's (rendered from its own plan). */
const COMMIT: PlanCommit = { request: "write", table: "", operations: [] };

const REFERENCES: StepAction = { kind: "large references" };
const UPLOADS: StepAction = { kind: "large uploads" };
const REMOVALS: StepAction = { kind: "large removals" };
const DONE = Promise.resolve();

/**
 * The executor of a large stage's plan (`largeSteps`): the references read, the uploads (undone,
 * where the error says that is safe, when the write fails after them), the replaced blobs removed;
 * its commit is the inner writer's write (`inner`). It holds the references read before the commit.
 */
class LargeRun<R> implements PlanExecutor<PlanStep, R> {
  readonly #large: LargeValues;
  readonly #row: { partitionKey: string; rowKey: string };
  readonly #uploads: ReturnType<LargeValues["prepare"]> | undefined;
  readonly #merge: boolean;
  readonly #inner: () => Promise<R>;
  #current: ReadonlyMap<string, string> | undefined;

  constructor(
    large: LargeValues,
    row: { partitionKey: string; rowKey: string },
    uploads: ReturnType<LargeValues["prepare"]> | undefined,
    merge: boolean,
    inner: () => Promise<R>,
  ) {
    this.#large = large;
    this.#row = row;
    this.#uploads = uploads;
    this.#merge = merge;
    this.#inner = inner;
  }

  async run(step: PlanStep): Promise<void> {
    const large = this.#large;
    switch (step.action?.kind) {
      case "large references":
        this.#current = await large.current(this.#row.partitionKey, this.#row.rowKey);
        return;
      case "large uploads":
        return large.upload(this.#uploads ?? []);
      case "large removals": {
        const current = this.#current;
        const written = this.#uploads === undefined ? undefined : (this.#row as WireEntity);
        if (current !== undefined) await large.replaced(current, written, this.#merge);
        return;
      }
    }
  }

  abandon(step: PlanStep, error: unknown): Promise<void> {
    return step.action?.kind === "large uploads" ? this.#large.discard(this.#uploads ?? [], error) : DONE;
  }

  commit(): Promise<R> {
    return this.#inner();
  }
}

/**
 * The large values' steps of one write: before the commit, the references the row holds now (when
 * it may replace them) and each upload (`uploads` of `LargeValues.prepare`: the row already points at
 * them; undefined for a delete); after it, the blobs the row no longer points at removed. A commit
 * that is certainly refused removes the new blobs instead; one that may have applied leaves them to
 * repair.
 */
export function largeSteps(
  large: Pick<LargeValues, "wide" | "table" | "container">,
  row: { partitionKey: string; rowKey: string },
  uploads: ReturnType<LargeValues["prepare"]> | undefined,
  replaces: boolean,
): { before: PlanStep[]; after: PlanStep[] } {
  const before: PlanStep[] = [];
  const after: PlanStep[] = [];
  const { partitionKey, rowKey } = row;
  if (replaces) {
    before.push({
      // A wide entity's rows are read as one range query.
      request: large.wide ? "query (large references)" : "get (large references)",
      table: large.table,
      partitionKey,
      rowKey,
      action: REFERENCES,
    });
  }
  // One step per value, sent together by the first (an entity has few large columns).
  (uploads ?? []).forEach((upload, i) => {
    before.push({
      request: `putBlob (${upload.field})`,
      table: large.container,
      ...(i === 0 ? { action: UPLOADS } : {}),
    });
  });
  if (replaces)
    after.push({ request: "deleteBlob (replaced values)", table: large.container, action: REMOVALS });
  return { before, after };
}
