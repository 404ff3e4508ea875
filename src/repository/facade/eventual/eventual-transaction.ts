import { ValidationError } from "../../../errors.js";
import {
  type EntityClass,
  type EntityModel,
  getEntityModel,
  modelOfInstance,
} from "../../../schema/entity-model.js";
import type { KeyValues } from "../../../schema/key-fields.js";
import { etagIn } from "../../../serialization/entity-etag.js";
import type { WireEntity, WriteMode } from "../../../store/table-store.js";
import type { StateScope } from "../../../util/scoped-state.js";
import { writeMode } from "../../core/write-mode.js";
import type { DeleteOptions, UpdateOptions, UpsertOptions } from "../repository-options.js";

/** The four single-entity operations a step can be. */
export type StepOp = "insert" | "upsert" | "update" | "delete";

/** One step as planned from the caller's call: the instance (or key) it came from, and its wire form. */
export interface PlannedStep {
  index: number;
  op: StepOp;
  model: EntityModel<object>;
  /** Logical table (the model's) and physical table (with prefix and period). */
  table: string;
  physicalTable: string;
  /** The full entity for insert/upsert/update; only the keys for delete. */
  wire: WireEntity;
  mode: WriteMode;
  /** The caller's instance or key: its tracked ETag is updated when the step applies. */
  source: object;
  /** The caller's condition: a tracked or given ETag; `undefined` when the version must be read first. */
  ifMatch: string | undefined;
}

/**
 * Collects the steps of one eventually consistent transaction (`db.eventually`): any tables, any
 * partitions, each entity at most once. Each step is checked as it is added (keys, values,
 * limits); nothing is sent until the callback returns.
 */
export class EventualTransaction {
  readonly #steps: PlannedStep[] = [];
  readonly #seen = new Map<string, number>();
  readonly #scope: StateScope;
  readonly #tableName: (table: string) => string;

  /** @internal Created by `db.eventually(...)`. */
  static build(scope: StateScope, tableName: (table: string) => string): EventualTransaction {
    return new EventualTransaction(scope, tableName);
  }

  private constructor(scope: StateScope, tableName: (table: string) => string) {
    this.#scope = scope;
    this.#tableName = tableName;
  }

  /** Inserts an entity; the step fails if its key exists. */
  insert<T extends object>(entity: T): this {
    const model = modelOfInstance(entity);
    return this.#add("insert", model, model.mapper.toWire(entity), entity, "replace", undefined);
  }

  /** Inserts or replaces (default) or merges an entity. */
  upsert<T extends object>(entity: T, options: UpsertOptions = {}): this {
    const model = modelOfInstance(entity);
    const mode = writeMode(options.mode);
    return this.#add("upsert", model, model.mapper.toWire(entity), entity, mode, etagIn(entity, this.#scope));
  }

  /** Updates an existing entity, conditional on its tracked ETag (or `ifMatch`; `"*"`: the version read when the set is recorded). */
  update<T extends object>(entity: T, options: UpdateOptions = {}): this {
    const model = modelOfInstance(entity);
    const ifMatch = options.ifMatch ?? etagIn(entity, this.#scope);
    if (ifMatch === undefined) {
      throw new ValidationError(
        "etag-required",
        `eventual step ${this.#steps.length} (update ${model.name}): no tracked ETag; read it first or pass { ifMatch: "*" }`,
        { field: "ifMatch" },
      );
    }
    const mode = writeMode(options.mode);
    return this.#add(
      "update",
      model,
      model.mapper.toWire(entity),
      entity,
      mode,
      ifMatch === "*" ? undefined : ifMatch,
    );
  }

  /** Deletes an entity by key (or entity); conditional on its tracked ETag, else on the version read when the set is recorded. */
  delete<T extends object>(
    entityClass: EntityClass<T>,
    key: KeyValues<T>,
    options: DeleteOptions = {},
  ): this {
    const model = getEntityModel(entityClass) as EntityModel<object>;
    const values = key as Record<string, unknown>;
    const wire: WireEntity = {
      partitionKey: model.partitionKey.encode(values, "PartitionKey"),
      rowKey: model.rowKey.encode(values, "RowKey"),
    };
    const ifMatch = options.ifMatch ?? etagIn(key, this.#scope);
    return this.#add("delete", model, wire, key, "replace", ifMatch === "*" ? undefined : ifMatch);
  }

  /** @internal The steps added so far, in order. */
  get steps(): readonly PlannedStep[] {
    return this.#steps;
  }

  #add(
    op: StepOp,
    model: EntityModel<object>,
    wire: WireEntity,
    source: object,
    mode: WriteMode,
    ifMatch: string | undefined,
  ): this {
    const index = this.#steps.length;
    // A table per period: the step goes to the table of its entity's period.
    const table = model.tableTemplate
      ? model.tableTemplate.nameOf(source as Record<string, unknown>)
      : model.table;
    const physicalTable = this.#tableName(table);
    const key = `${physicalTable.toLowerCase()}\u0000${wire.partitionKey}\u0000${wire.rowKey}`;
    const previous = this.#seen.get(key);
    if (previous !== undefined) {
      throw new ValidationError(
        "eventual-duplicate",
        `an eventual transaction touches each entity once: step ${index} (${op} ${model.name}, PartitionKey '${wire.partitionKey}', RowKey '${wire.rowKey}') repeats step ${previous}`,
      );
    }
    this.#seen.set(key, index);
    this.#steps.push({ index, op, model, table, physicalTable, wire, mode, source, ifMatch });
    return this;
  }
}
