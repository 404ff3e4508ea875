import { ValidationError } from "../../errors.js";
import {
  type EntityClass,
  type EntityModel,
  getEntityModel,
  modelOfInstance,
} from "../../schema/entity-model.js";
import type { KeyValues } from "../../schema/key-fields.js";
import { etagIn, etagOf } from "../../serialization/entity-etag.js";
import type { TransactionAction, WireEntity } from "../../store/table-store.js";
import { limitViolation } from "../../util/limit-violation.js";
import type { StateScope } from "../../util/scoped-state.js";
import { AZURE_TABLE_LIMITS, describeBytes, type StoreLimits } from "../../util/store-limits.js";
import { batchBodyBytesOver } from "../core/payload-size.js";
import { writeMode } from "../core/write-mode.js";
import { assertWithinLimits } from "../pipeline/backend-limits.js";
import { feedRowsNeeded } from "../pipeline/feed/feed-plan.js";
import type { DeleteOptions, UpdateOptions, UpsertOptions } from "./repository-options.js";

/** One planned operation: what is sent, and the instance whose ETag is updated afterwards. */
export interface PlannedOperation {
  table: string;
  action: TransactionAction;
  partitionKey: string;
  rowKey: string;
  entity: object | undefined;
  describe: string;
  /** The entity's model (index copies are derived from it when the transaction is planned). */
  model: EntityModel<object>;
}

/**
 * Collects the operations of one entity group transaction (one table, one partition, atomic).
 * Operations are checked as they are added; the service rules are checked before sending.
 */
export class Transaction {
  readonly #operations: PlannedOperation[] = [];
  /** The context's store and prefix: ETags tracked elsewhere are no condition here. */
  readonly #scope: StateScope | undefined;

  /** @internal Created by `db.transaction(...)`. */
  static build(scope?: StateScope): Transaction {
    return new Transaction(scope);
  }

  private constructor(scope?: StateScope) {
    this.#scope = scope;
  }

  /** Inserts an entity; the whole transaction fails if its key exists. */
  insert<T extends object>(entity: T): this {
    const { wire, model } = toWire(entity);
    return this.#add(model, { kind: "insert", entity: wire }, entity, `insert ${model.name}`);
  }

  /** Inserts or replaces (default) or merges an entity. */
  upsert<T extends object>(entity: T, options: UpsertOptions = {}): this {
    const { wire, model } = toWire(entity);
    return this.#add(
      model,
      { kind: "upsert", entity: wire, mode: writeMode(options.mode) },
      entity,
      `upsert ${model.name}`,
    );
  }

  /** Updates an existing entity, conditional on its tracked ETag unless `ifMatch` is given. */
  update<T extends object>(entity: T, options: UpdateOptions = {}): this {
    const { wire, model } = toWire(entity);
    const name = model.name;
    const ifMatch = options.ifMatch ?? this.#etagOf(entity);
    if (ifMatch === undefined) {
      throw new ValidationError(
        "etag-required",
        `transaction operation ${this.#operations.length} (update ${name}): no tracked ETag; read it first or pass { ifMatch: "*" }`,
        { field: "ifMatch" },
      );
    }
    return this.#add(
      model,
      { kind: "update", entity: wire, mode: writeMode(options.mode), ifMatch },
      entity,
      `update ${name}`,
    );
  }

  /** Deletes an entity by key (or entity); conditional when an ETag is known. */
  delete<T extends object>(
    entityClass: EntityClass<T>,
    key: KeyValues<T>,
    options: DeleteOptions = {},
  ): this {
    const model = getEntityModel(entityClass);
    const partitionKey = model.partitionKey.encode(key as Record<string, unknown>, "PartitionKey");
    const rowKey = model.rowKey.encode(key as Record<string, unknown>, "RowKey");
    const ifMatch = options.ifMatch ?? this.#etagOf(key) ?? "*";
    return this.#add(
      model as EntityModel<object>,
      { kind: "delete", partitionKey, rowKey, ifMatch },
      key,
      `delete ${model.name}`,
    );
  }

  /** The operations added so far, in order. */
  get operations(): readonly PlannedOperation[] {
    return this.#operations;
  }

  #etagOf(entity: object): string | undefined {
    return this.#scope === undefined ? etagOf(entity) : etagIn(entity, this.#scope);
  }

  #add(model: EntityModel<object>, action: TransactionAction, entity: object, describe: string): this {
    this.#operations.push(plannedOperation(model, action, entity, describe));
    return this;
  }
}

/** One operation of `model`'s entity (or key, for a delete), in the table of its entity's period if it has one. */
export function plannedOperation(
  model: EntityModel<object>,
  action: TransactionAction,
  entity: object,
  describe: string,
): PlannedOperation {
  const keys = "entity" in action ? action.entity : action;
  return {
    // A table per period: the operation goes to the table of its entity's period.
    table: model.tableTemplate ? model.tableTemplate.nameOf(entity as Record<string, unknown>) : model.table,
    model,
    action,
    partitionKey: keys.partitionKey,
    rowKey: keys.rowKey,
    entity,
    describe,
  };
}

/**
 * Checks an operation list against the service's EGT rules: not empty, at most 100 operations,
 * one table, one PartitionKey, each entity once, a `$batch` body of at most 4 MiB (the backend's `limits`:
 * 2 MiB on the Cosmos DB Table API, whose key and property-name limits are checked too), sized exactly
 * on the table's physical name (`physicalName`; unknown: the longest name is assumed).
 */
export function assertValidTransaction(
  operations: readonly PlannedOperation[],
  limits: StoreLimits = AZURE_TABLE_LIMITS,
  physicalName: (table: string) => string | undefined = () => undefined,
): void {
  const first = operations[0];
  if (!first) throw new ValidationError("transaction-empty", "A transaction needs at least one operation");
  const maxOperations = limits.maxTransactionOperations;
  if (operations.length > maxOperations) {
    const extra = operations[maxOperations] as PlannedOperation;
    throw new ValidationError(
      "transaction-operations",
      `A transaction holds at most ${maxOperations} operations (index copies included); it has ${operations.length}, the first over the limit is operation ${maxOperations} (${extra.describe})`,
    );
  }
  // A change-fed entity's write carries its change rows in the same transaction (pipeline/feed/).
  const feedRows = feedRowsNeeded(
    operations.map((operation) => operation.action),
    operations.map((operation) => operation.model.changeFeed !== undefined),
  );
  if (operations.length + feedRows > maxOperations) {
    throw new ValidationError(
      "transaction-operations",
      `A transaction holds at most ${maxOperations} operations; these ${operations.length} need ${feedRows} more for their change feed (a head, a journal row per change, a tombstone per delete)`,
    );
  }
  const seen = new Map<string, number>();
  operations.forEach((operation, index) => {
    // Described only when it fails: this runs for every operation of every transaction.
    if (operation.table !== first.table) {
      throw new ValidationError(
        "transaction-table",
        `A transaction spans one table: ${describeOperation(operation, index)} is in table ${operation.table}, operation 0 in ${first.table}`,
      );
    }
    if (operation.partitionKey !== first.partitionKey) {
      throw new ValidationError(
        "transaction-partition",
        `A transaction spans one partition: ${describeOperation(operation, index)} is not in PartitionKey '${first.partitionKey}' of operation 0`,
      );
    }
    const previous = seen.get(operation.rowKey);
    if (previous !== undefined) {
      throw new ValidationError(
        "transaction-duplicate",
        `A transaction may touch each entity once: ${describeOperation(operation, index)} repeats operation ${previous}`,
      );
    }
    seen.set(operation.rowKey, index);
    // A wide entity's rows are checked as rows (its write is split into them before it is sent).
    if (!operation.model.wide && limitViolation(limits, operation.action) !== undefined)
      assertWithinLimits(limits, operation.action, `Transaction ${describeOperation(operation, index)}`);
  });
  // One table (checked above): the body is sized on its physical name, exactly only when it may be over.
  const actions = operations.map((operation) => operation.action);
  const table = physicalName(first.table);
  const bytes = batchBodyBytesOver(limits, table, actions, limits.maxTransactionBytes);
  if (bytes !== undefined) {
    throw new ValidationError(
      "transaction-payload",
      `A transaction's request body may be at most ${describeBytes(limits.maxTransactionBytes)} (${limits.maxTransactionBytes} bytes); these ${operations.length} operations make a $batch body of ${bytes} bytes`,
    );
  }
  passed.set(operations, { length: operations.length, limits, table });
}

/** The operation lists `assertValidTransaction` passed: their length then, the limits and the physical table name. */
const passed = new WeakMap<
  readonly PlannedOperation[],
  { length: number; limits: StoreLimits; table: string | undefined }
>();

/**
 * Whether `rows` are exactly the operations of a list `assertValidTransaction` already passed with
 * these limits and this table (the same objects in the same order, none added since), so checking
 * them again would repeat the same walk: a transaction of plain entities, to which planning adds no
 * row and changes none.
 */
export function passedAsIs(
  rows: readonly PlannedOperation[],
  operations: readonly PlannedOperation[],
  limits: StoreLimits,
  table: string,
): boolean {
  const check = passed.get(operations);
  if (check === undefined || check.limits !== limits || check.table !== table) return false;
  if (rows.length !== check.length || operations.length !== check.length) return false;
  for (let index = 0; index < rows.length; index++) if (rows[index] !== operations[index]) return false;
  return true;
}

function describeOperation(operation: PlannedOperation, index: number): string {
  return `operation ${index} (${operation.describe}, PartitionKey '${operation.partitionKey}', RowKey '${operation.rowKey}')`;
}

function toWire(entity: object): { wire: WireEntity; model: EntityModel<object> } {
  const model = modelOfInstance(entity);
  return { wire: model.mapper.toWire(entity), model };
}
