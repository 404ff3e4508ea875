import {
  ConcurrencyError,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  StoreError,
  TransactionError,
  ValidationError,
} from "../../errors.js";
import { blindSidecars } from "../../schema/blind-index-plan.js";
import type { EntityModel } from "../../schema/entity-model.js";
import { etagIn, rememberEtag } from "../../serialization/entity-etag.js";
import {
  assertWideRowKey,
  MAX_WIDE_PARTS,
  parseWideEtag,
  splitWide,
  wideEtag,
} from "../../serialization/wide-rows.js";
import type { StoredEntity, TransactionAction, WireEntity, WriteMode } from "../../store/table-store.js";
import { describeBytes } from "../../util/store-limits.js";
import { newWriteId } from "../core/entity-layout.js";
import type { EntityWriter } from "../core/entity-writer.js";
import { isOutcomeUnknown } from "../core/lost-answers.js";
import { batchBodyBytesOver } from "../core/payload-size.js";
import type { Backoff, Limited, Requests, Scoped } from "../core/requests.js";
import { submitTransaction } from "../core/submit-transaction.js";
import { readWide } from "../core/wide-reads.js";
import {
  type AssumedState,
  type ExplainedOperation,
  type ExplainedPlan,
  NOTHING_STORED,
} from "../core/write-plan.js";
import { KEYS_ONLY, keysOf, merged, plan, type WideKeys } from "./wide-actions.js";
import { explainWide } from "./wide-explain.js";

/**
 * Writes about which the caller states no version (upsert, `ifMatch: "*"`, merges, deletes without
 * an ETag) read the entity's rows first, then commit conditional on what they read, so rows left
 * over from a longer version are deleted in the same transaction; a concurrent write makes the
 * transaction fail and the write starts over, at most this many times.
 */
const MAX_ROUNDS = 10;

/**
 * Writes wide entities (several rows each, see wide-rows.ts): every write is one entity group
 * transaction over all the entity's rows, and the ETag it tracks lists every row's, so a change to any
 * row by someone else makes a conditional write fail with `ConcurrencyError`.
 */
export class WideWriter<T extends object> implements EntityWriter<T> {
  readonly #model: EntityModel<T>;
  readonly #table: string;
  readonly #runner: Requests & Scoped & Limited & Backoff;
  /** The stored property names in declaration order: how a merged entity is split. */
  readonly #order: readonly string[];

  constructor(model: EntityModel<T>, table: string, runner: Requests & Scoped & Limited & Backoff) {
    this.#model = model;
    this.#table = table;
    this.#runner = runner;
    this.#order = model.columns.map((column) => column.property);
  }

  async insert(entity: T): Promise<void> {
    const parts = this.#split(this.#model.mapper.toWire(entity));
    const keys = keysOf(parts);
    const etags = await this.#commit(keys, plan(keys, parts, []));
    rememberEtag(entity, wideEtag(etags), this.#runner.scope);
  }

  async upsert(entity: T, mode: WriteMode): Promise<void> {
    const wire = this.#model.mapper.toWire(entity);
    const parts = this.#split(wire);
    const keys = keysOf(parts);
    this.#assertFits(keys, plan(keys, parts, []));
    const etags = await this.#rounds(keys, mode, wire, parts, "upsert");
    rememberEtag(entity, wideEtag(etags), this.#runner.scope);
  }

  async update(entity: T, mode: WriteMode, ifMatch: string): Promise<void> {
    const wire = this.#model.mapper.toWire(entity);
    const parts = this.#split(wire);
    const keys = keysOf(parts);
    this.#assertFits(keys, plan(keys, parts, []));
    if (ifMatch === "*") {
      const etags = await this.#rounds(keys, mode, wire, parts, "update");
      rememberEtag(entity, wideEtag(etags), this.#runner.scope);
      return;
    }
    const expected = parseWideEtag(this.#model.name, ifMatch);
    let next = parts;
    if (mode === "merge") {
      const current = await this.#read(keys, undefined);
      if (current === undefined) throw this.#notFound(keys);
      if (current.etag !== ifMatch) throw new ConcurrencyError(this.#entityKeys(keys));
      next = this.#split(merged(current, wire, this.#order));
    }
    const etags = await this.#commit(keys, plan(keys, next, expected));
    rememberEtag(entity, wideEtag(etags), this.#runner.scope);
  }

  async delete(key: Partial<T>, ifMatch: string | undefined): Promise<boolean> {
    const values = key as Record<string, unknown>;
    const keys = {
      partitionKey: this.#model.partitionKey.encode(values, "PartitionKey"),
      base: this.#model.rowKey.encode(values, "RowKey"),
    };
    assertWideRowKey(this.#model.name, keys.base);
    const condition = ifMatch ?? etagIn(key, this.#runner.scope) ?? "*";
    let existed = true;
    if (condition === "*") {
      existed = await this.#deleteAny(keys);
    } else {
      const expected = parseWideEtag(this.#model.name, condition);
      try {
        await this.#commit(keys, plan(keys, [], expected));
      } catch (error) {
        // The first row gone: the entity was deleted (a conditional delete of a missing entity is `false`).
        if (!(error instanceof EntityNotFoundError)) throw error;
        existed = false;
      }
    }
    rememberEtag(key, undefined, this.#runner.scope);
    return existed;
  }

  /** The plan of one write, its rows in the commit and the read it needs first, if any (see `explainWide`). */
  explain(operation: ExplainedOperation, value: T, assumed: AssumedState = NOTHING_STORED): ExplainedPlan {
    const scope = this.#runner.scope;
    const tracked = etagIn(value, scope);
    const values = value as Record<string, unknown>;
    const current = assumed(
      this.#model.partitionKey.encode(values, "PartitionKey"),
      this.#model.rowKey.encode(values, "RowKey"),
    );
    // The rows the read will find: none when nothing is assumed stored, else those its read ETag lists.
    const stored = current === undefined ? null : etagIn(current, scope);
    return explainWide(
      this.#model,
      this.#table,
      (wire) => this.#split(wire),
      operation,
      value,
      tracked,
      stored,
    );
  }

  track(_entity: T, _stored: StoredEntity): void {
    // The assembled entity's ETag (every row's) is recorded by the reader.
  }

  /**
   * Upsert, or update with `ifMatch: "*"`: read the stored rows' ETags (or, to merge, the whole
   * entity), then commit conditional on them; start over when another write came in between.
   */
  async #rounds(
    keys: WideKeys,
    mode: WriteMode,
    wire: WireEntity,
    parts: WireEntity[],
    write: "upsert" | "update",
  ): Promise<string[]> {
    let conflict: unknown;
    for (let round = 1; round <= MAX_ROUNDS; round++) {
      const current = await this.#read(keys, mode === "merge" ? undefined : KEYS_ONLY);
      if (current === undefined && write === "update") throw this.#notFound(keys);
      const stored = current === undefined ? [] : parseWideEtag(this.#model.name, current.etag);
      const next =
        mode === "merge" && current !== undefined ? this.#split(merged(current, wire, this.#order)) : parts;
      try {
        return await this.#commit(keys, plan(keys, next, stored));
      } catch (error) {
        const raced =
          error instanceof ConcurrencyError ||
          error instanceof EntityAlreadyExistsError ||
          error instanceof EntityNotFoundError;
        if (!raced || isOutcomeUnknown(error)) throw error;
        conflict = error;
      }
    }
    throw conflict;
  }

  /** Deletes whatever version is stored; resolves whether there was one. */
  async #deleteAny(keys: WideKeys): Promise<boolean> {
    let conflict: unknown;
    for (let round = 1; round <= MAX_ROUNDS; round++) {
      const current = await this.#read(keys, KEYS_ONLY);
      if (current === undefined) return false;
      try {
        await this.#commit(keys, plan(keys, [], parseWideEtag(this.#model.name, current.etag)));
        return true;
      } catch (error) {
        const raced = error instanceof ConcurrencyError || error instanceof EntityNotFoundError;
        if (!raced || isOutcomeUnknown(error)) throw error;
        conflict = error;
      }
    }
    throw conflict;
  }

  #read(keys: WideKeys, select: readonly string[] | undefined): Promise<StoredEntity | undefined> {
    return readWide(this.#runner, this.#table, keys.partitionKey, keys.base, select);
  }

  #split(wire: WireEntity): WireEntity[] {
    const limits = this.#runner.limits;
    const maxParts = Math.min(MAX_WIDE_PARTS, limits.maxTransactionOperations);
    return splitWide(
      this.#model.name,
      wire,
      limits,
      newWriteId(),
      maxParts,
      blindSidecars(this.#model.columns),
    );
  }

  /** `ValidationError` before any request when the transaction would exceed what the service accepts. */
  #assertFits(keys: WideKeys, actions: readonly TransactionAction[]): void {
    const limits = this.#runner.limits;
    if (actions.length > limits.maxTransactionOperations) {
      throw new ValidationError(
        "wide-transaction-operations",
        `${this.#model.name} (RowKey '${keys.base}'): writing this entity takes ${actions.length} operations; one entity group transaction carries at most ${limits.maxTransactionOperations}`,
      );
    }
    const bytes = batchBodyBytesOver(limits, this.#table, actions, limits.maxTransactionBytes);
    if (bytes !== undefined) {
      throw new ValidationError(
        "wide-transaction-payload",
        `${this.#model.name} (RowKey '${keys.base}'): this entity's rows make a $batch body of ${bytes} bytes; an entity group transaction's request body may be at most ${describeBytes(limits.maxTransactionBytes)}`,
      );
    }
  }

  /**
   * Sends the entity's transaction and resolves the written rows' ETags in part order. Store answers
   * become the errors of a single-entity write: 409 `EntityAlreadyExistsError`, 412 `ConcurrencyError`,
   * 404 on the first row `EntityNotFoundError` (on another row: the entity changed, `ConcurrencyError`).
   */
  async #commit(keys: WideKeys, actions: readonly TransactionAction[]): Promise<string[]> {
    this.#assertFits(keys, actions);
    let results: Array<{ etag: string }>;
    try {
      ({ results } = await submitTransaction(this.#runner, this.#table, keys.partitionKey, actions));
    } catch (error) {
      throw this.#translate(error, keys, actions);
    }
    const etags: string[] = [];
    actions.forEach((action, index) => {
      if (action.kind !== "delete") etags.push((results[index] as { etag: string }).etag);
    });
    return etags;
  }

  #translate(error: unknown, keys: WideKeys, actions: readonly TransactionAction[]): unknown {
    if (!(error instanceof TransactionError)) return error;
    if (error.serviceCode === "TableNotFound") {
      // A period's table not created yet: the repository recognises this StoreError and creates it.
      return new StoreError(error.message, { statusCode: 404, serviceCode: "TableNotFound", cause: error });
    }
    const entityKeys = this.#entityKeys(keys);
    // Our own lost attempt may have applied and been changed since: the error says so (as for one row).
    const options = isOutcomeUnknown(error) ? { cause: error, outcomeUnknown: true } : { cause: error };
    const action = actions[error.index];
    if (error.statusCode === 409 && action?.kind === "insert") {
      return error.index === 0
        ? new EntityAlreadyExistsError(entityKeys, options)
        : new ConcurrencyError(entityKeys, options);
    }
    if (error.statusCode === 412) return new ConcurrencyError(entityKeys, options);
    if (error.statusCode === 404) {
      return error.index === 0
        ? new EntityNotFoundError(entityKeys, options)
        : new ConcurrencyError(entityKeys, options);
    }
    return error;
  }

  #entityKeys(keys: WideKeys): { table: string; partitionKey: string; rowKey: string } {
    return { table: this.#table, partitionKey: keys.partitionKey, rowKey: keys.base };
  }

  #notFound(keys: WideKeys): EntityNotFoundError {
    return new EntityNotFoundError(this.#entityKeys(keys));
  }
}
