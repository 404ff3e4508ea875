import type { EntityModel } from "../../schema/entity-model.js";
import { etagIn, rememberEtag } from "../../serialization/entity-etag.js";
import type { StoredEntity, WireEntity, WriteMode } from "../../store/table-store.js";
import type { BulkOptions, BulkResult } from "../bulk/bulk-types.js";
import type { EntityWriter } from "../entity-writer.js";
import type { StoreRunner } from "../store-runner.js";
import { deleteWire, insertWire, updateWire, upsertWire } from "../wire-writes.js";
import { type LargeValues, largeUnsupported } from "./large-values.js";

/**
 * Writes entities with large columns, one entity per write: the values' blobs first, then the row
 * (with the lost-answer rules of every single write), then the blobs the row pointed at before
 * (see `LargeValues`). Bulk writes are refused: a batch cannot be ordered after its blobs' uploads
 * and before their old blobs' removal per entity without giving up what makes it a batch.
 */
export class LargeValueWriter<T extends object> implements EntityWriter<T> {
  readonly #model: EntityModel<T>;
  readonly #table: string;
  readonly #runner: StoreRunner;
  readonly #large: LargeValues;

  constructor(model: EntityModel<T>, table: string, runner: StoreRunner, large: LargeValues) {
    this.#model = model;
    this.#table = table;
    this.#runner = runner;
    this.#large = large;
  }

  async insert(entity: T): Promise<void> {
    // No row exists (or the insert fails): nothing old to remove, so no read first.
    const wire = this.#model.mapper.toWire(entity);
    const uploads = this.#large.prepare(entity, wire);
    await this.#large.upload(uploads);
    const etag = await this.#writeRow(uploads, () => insertWire(this.#runner, this.#table, wire));
    rememberEtag(entity, etag, this.#runner.scope);
  }

  async upsert(entity: T, mode: WriteMode): Promise<void> {
    const wire = this.#model.mapper.toWire(entity);
    const etag = await this.#replacing(entity, wire, mode, () =>
      upsertWire(this.#runner, this.#table, wire, mode),
    );
    rememberEtag(entity, etag, this.#runner.scope);
  }

  async update(entity: T, mode: WriteMode, ifMatch: string): Promise<void> {
    const wire = this.#model.mapper.toWire(entity);
    const etag = await this.#replacing(entity, wire, mode, () =>
      updateWire(this.#runner, this.#table, wire, mode, ifMatch),
    );
    rememberEtag(entity, etag, this.#runner.scope);
  }

  async delete(key: Partial<T>, ifMatch: string | undefined): Promise<boolean> {
    const values = key as Record<string, unknown>;
    const partitionKey = this.#model.partitionKey.encode(values, "PartitionKey");
    const rowKey = this.#model.rowKey.encode(values, "RowKey");
    const condition = ifMatch ?? etagIn(key, this.#runner.scope) ?? "*";
    const before = await this.#large.current(partitionKey, rowKey);
    const existed = await deleteWire(this.#runner, this.#table, partitionKey, rowKey, condition);
    rememberEtag(key, undefined, this.#runner.scope);
    await this.#large.replaced(before, undefined, false);
    return existed;
  }

  bulkInsert(_items: Iterable<T> | AsyncIterable<T>, _options: BulkOptions): Promise<BulkResult<T>> {
    return this.#noBulk("bulkInsert");
  }

  bulkUpsert(
    _items: Iterable<T> | AsyncIterable<T>,
    _mode: WriteMode,
    _options: BulkOptions,
  ): Promise<BulkResult<T>> {
    return this.#noBulk("bulkUpsert");
  }

  bulkDelete(
    _keys: Iterable<Partial<T>> | AsyncIterable<Partial<T>>,
    _options: BulkOptions,
  ): Promise<BulkResult<Partial<T>>> {
    return this.#noBulk("bulkDelete");
  }

  track(_entity: T, _stored: StoredEntity): void {
    // The reader records the ETag; the references are read again before each replacing write.
  }

  /**
   * A write that may replace a stored row: reads the row's references first (the blobs to remove
   * after the write), uploads the new values, writes the row, then removes the replaced blobs.
   */
  async #replacing(
    entity: T,
    wire: WireEntity,
    mode: WriteMode,
    write: () => Promise<string>,
  ): Promise<string> {
    const uploads = this.#large.prepare(entity, wire);
    const before = await this.#large.current(wire.partitionKey, wire.rowKey);
    await this.#large.upload(uploads);
    const etag = await this.#writeRow(uploads, write);
    await this.#large.replaced(before, wire, mode === "merge");
    return etag;
  }

  async #writeRow(
    uploads: Parameters<LargeValues["discard"]>[0],
    write: () => Promise<string>,
  ): Promise<string> {
    try {
      return await write();
    } catch (error) {
      await this.#large.discard(uploads, error);
      throw error;
    }
  }

  async #noBulk<R>(what: string): Promise<R> {
    throw largeUnsupported(this.#model, what);
  }
}
