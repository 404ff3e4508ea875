import type { ColumnModel, EntityModel } from "../../schema/entity-model.js";
import type { Backend, BlobSealing, LargeValueSupport, Requests } from "../core/requests.js";
import type { StepTarget } from "../core/write-plan.js";
import { containerOf } from "../large/large-reference.js";
import {
  blobStoreMissing,
  LargeValues,
  largeColumnsOf,
  prepareUploads,
  type Upload,
} from "../large/large-values.js";
import type { PlannedOperation } from "./transaction.js";

/**
 * The large values of a transaction (or bulk batch), in one place: planned as data (`planLargeWrites`),
 * described as the plan's steps (`largeReads`, `largeUploads`, `largeRemovals`: pure, for
 * `transactionPlan`), and run by `LargeSteps` (the executor's half: the only one that sends).
 */

/** The blob half of one operation with large columns, as data: its row points at the values to upload. */
export interface LargeWrite {
  readonly operation: PlannedOperation;
  /** The physical table of the row; `container` holds its blobs. */
  readonly table: string;
  readonly container: string;
  /** The fields of the entity class's large columns. */
  readonly fields: readonly string[];
  readonly uploads: readonly Upload[];
}

/**
 * Points the rows of entities with large columns at fresh blobs, before any request: a
 * `ValidationError` for a store without blobs, a value that cannot be encoded, or an encrypted one
 * without keys (`backend`: the planning input's `largeValues`). Pure.
 */
export function planLargeWrites(
  table: string,
  operations: readonly PlannedOperation[],
  backend: LargeValueSupport["largeValues"],
): LargeWrite[] {
  const container = containerOf(table);
  // Per class, once (most transactions hold one or two classes and no large column).
  const byModel = new Map<EntityModel<object>, ColumnModel[] | undefined>();
  const writes: LargeWrite[] = [];
  for (const operation of operations) {
    const { model, action } = operation;
    let columns = byModel.get(model);
    if (columns === undefined && !byModel.has(model)) {
      columns = largeColumnsOf(model);
      if (columns !== undefined && !backend.blobs) throw blobStoreMissing(model.name, columns, backend.store);
      byModel.set(model, columns);
    }
    if (columns === undefined) continue;
    const large = { model: model.name, columns, table };
    const uploads =
      action.kind === "delete"
        ? []
        : prepareUploads(large, operation.entity as object, action.entity, backend.canSeal);
    const fields = columns.map((column) => column.field);
    writes.push({ operation, table, container, fields, uploads });
  }
  return writes;
}

/** Before: the references each replacing operation's row holds now (`LargeSteps.readReplaced`). */
export function largeReads(writes: readonly LargeWrite[]): StepTarget[] {
  return writes
    .filter((write) => write.operation.action.kind !== "insert")
    .map(({ table, operation }) => ({
      // A wide entity's rows are read as one range query.
      request: operation.model.wide ? "query (large references)" : "get (large references)",
      table,
      partitionKey: operation.partitionKey,
      rowKey: operation.rowKey,
    }));
}

/** Before: the values uploaded (the rows point at them). */
export function largeUploads(writes: readonly LargeWrite[]): StepTarget[] {
  return writes.flatMap((write) =>
    write.uploads.map((upload) => ({ request: `putBlob (${upload.field})`, table: write.container })),
  );
}

/**
 * After: the blobs each operation's stored row (as `stored` gives it) points at that its written row no
 * longer does (`LargeValues.replaced`).
 */
export function largeRemovals(
  writes: readonly LargeWrite[],
  stored: (operation: PlannedOperation) => object | undefined,
): StepTarget[] {
  return writes.flatMap(({ container, fields, operation }) => {
    const { action } = operation;
    if (action.kind === "insert") return [];
    const row = stored(operation) as Record<string, unknown> | undefined;
    const written = (operation.entity ?? {}) as Record<string, unknown>;
    const merge = action.kind !== "delete" && action.mode === "merge";
    return fields
      .filter((field) => row?.[field] != null && !(merge && written[field] == null))
      .map((field) => ({ request: `deleteBlob (replaced ${field})`, table: container }));
  });
}

/** The executor of a transaction's large writes: what each of their steps sends. */
export class LargeSteps {
  readonly #writes: ReadonlyArray<{ write: LargeWrite; values: LargeValues }>;
  /** The blobs each replacing operation's row pointed at before the commit (read first). */
  readonly #before: Array<ReadonlyMap<string, string> | undefined> = [];

  constructor(runner: Requests & Backend & BlobSealing, writes: readonly LargeWrite[]) {
    // Per class, once (most transactions hold one or two classes).
    const byModel = new Map<EntityModel<object>, LargeValues>();
    this.#writes = writes.map((write) => {
      const { model } = write.operation;
      let values = byModel.get(model);
      if (values === undefined) {
        values = new LargeValues(model, largeColumnsOf(model) ?? [], write.table, runner);
        byModel.set(model, values);
      }
      return { write, values };
    });
  }

  /** Reads the blobs the rows replace (their references now), once the transaction passed every rule. */
  async readReplaced(): Promise<void> {
    await Promise.all(
      this.#writes.map(async ({ write, values }, at) => {
        const { action, partitionKey, rowKey } = write.operation;
        if (action.kind === "insert") return;
        this.#before[at] = await values.current(partitionKey, rowKey);
      }),
    );
  }

  /** Uploads every operation's values. */
  async upload(): Promise<void> {
    await Promise.all(this.#writes.map(({ write, values }) => values.upload(write.uploads)));
  }

  /** The commit did not happen (or may not have): the uploads are removed where that is safe. */
  async discard(error: unknown): Promise<void> {
    for (const { write, values } of this.#writes) await values.discard(write.uploads, error);
  }

  /** After the commit: the blobs each stored row pointed at that its written row no longer does, removed. */
  async removeReplaced(): Promise<void> {
    for (const [at, { write, values }] of this.#writes.entries()) {
      const before = this.#before[at];
      if (before === undefined) continue;
      const { action } = write.operation;
      const merge = action.kind !== "insert" && action.kind !== "delete" && action.mode === "merge";
      await values.replaced(before, action.kind === "delete" ? undefined : action.entity, merge);
    }
  }
}
