import type { EntityModel } from "../../schema/entity-model.js";
import { etagIn, rememberEtag } from "../../serialization/entity-etag.js";
import type { StoredEntity, WireEntity, WriteMode } from "../../store/table-store.js";
import type { BulkOptions, BulkResult, BulkWriter } from "./bulk/bulk-types.js";
import { writeBulk } from "./bulk/bulk-writer.js";
import type { EntityWriter } from "./entity-writer.js";
import type { Backoff, Limited, PeriodTableLookup, Requests, Scoped } from "./requests.js";
import { deleteWire, insertWire, updateWire, upsertWire } from "./wire-writes.js";
import { type ExplainedOperation, singleRequest, type WritePlan } from "./write-plan.js";

/** Writes entities without secondary indexes: one request per write, bulk writes as batches. */
export class PlainWriter<T extends object> implements EntityWriter<T>, BulkWriter<T> {
  readonly #model: EntityModel<T>;
  readonly #table: string;
  readonly #runner: Requests & Scoped & Limited & Backoff & PeriodTableLookup;

  constructor(
    model: EntityModel<T>,
    table: string,
    runner: Requests & Scoped & Limited & Backoff & PeriodTableLookup,
  ) {
    this.#model = model;
    this.#table = table;
    this.#runner = runner;
  }

  async insert(entity: T, wire?: WireEntity): Promise<void> {
    const etag = await insertWire(this.#runner, this.#table, wire ?? this.#model.mapper.toWire(entity));
    rememberEtag(entity, etag, this.#runner.scope);
  }

  // The hot path of a plain entity: a `then`, no async frame (a mapping error is a rejection all the same).
  upsert(entity: T, mode: WriteMode, wire?: WireEntity): Promise<void> {
    const scope = this.#runner.scope;
    try {
      const row = wire ?? this.#model.mapper.toWire(entity);
      return upsertWire(this.#runner, this.#table, row, mode).then((result) =>
        rememberEtag(entity, result.etag, scope),
      );
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async update(entity: T, mode: WriteMode, ifMatch: string, wire?: WireEntity): Promise<void> {
    const row = wire ?? this.#model.mapper.toWire(entity);
    const etag = await updateWire(this.#runner, this.#table, row, mode, ifMatch);
    rememberEtag(entity, etag, this.#runner.scope);
  }

  async delete(key: Partial<T>, ifMatch: string | undefined): Promise<boolean> {
    const values = key as Record<string, unknown>;
    const partitionKey = this.#model.partitionKey.encode(values, "PartitionKey");
    const rowKey = this.#model.rowKey.encode(values, "RowKey");
    const condition = ifMatch ?? etagIn(key, this.#runner.scope) ?? "*";
    const existed = await deleteWire(this.#runner, this.#table, partitionKey, rowKey, condition);
    rememberEtag(key, undefined, this.#runner.scope);
    return existed;
  }

  bulkInsert(items: Iterable<T> | AsyncIterable<T>, options: BulkOptions): Promise<BulkResult<T>> {
    return writeBulk(this.#runner, this.#model, this.#table, items, { kind: "insert" }, options);
  }

  bulkUpsert(
    items: Iterable<T> | AsyncIterable<T>,
    mode: WriteMode,
    options: BulkOptions,
  ): Promise<BulkResult<T>> {
    return writeBulk(this.#runner, this.#model, this.#table, items, { kind: "upsert", mode }, options);
  }

  bulkDelete(
    keys: Iterable<Partial<T>> | AsyncIterable<Partial<T>>,
    options: BulkOptions,
  ): Promise<BulkResult<Partial<T>>> {
    const model = this.#model as unknown as EntityModel<Partial<T>>;
    return writeBulk(this.#runner, model, this.#table, keys, { kind: "delete" }, options);
  }

  /** One request: the entity's write (this is the fast path: the write itself builds no plan). */
  explain(operation: ExplainedOperation, value: T): WritePlan {
    const values = value as Record<string, unknown>;
    const partitionKey = this.#model.partitionKey.encode(values, "PartitionKey");
    const rowKey = this.#model.rowKey.encode(values, "RowKey");
    return singleRequest(operation, this.#table, partitionKey, rowKey);
  }

  track(_entity: T, _stored: StoredEntity): void {
    // A plain entity's ETag is all there is to track, and the reader records it.
  }
}
