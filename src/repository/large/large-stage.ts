import type { EntityModel } from "../../schema/entity-model.js";
import type { StoredEntity, WireEntity, WriteMode } from "../../store/table-store.js";
import { writeEach } from "../core/bulk/bulk-each.js";
import type { BulkOptions, BulkResult } from "../core/bulk/bulk-types.js";
import type { EntityWriter } from "../core/entity-writer.js";
import type { LargeValues } from "./large-values.js";

/** Entities being written as a row whose large values were uploaded ahead (see `writeUploaded`). */
const uploadedAhead = new WeakMap<object, WireEntity>();

/**
 * Runs `write` (a repository write of `entity`) with `wire` as the entity's row: its large columns
 * already point at blobs uploaded before (a `db.eventually` step uploads them before recording its
 * intent, so a replay by repair writes the same references). The stage uploads nothing then; it
 * still removes the blobs the row pointed at before, once the row has committed.
 */
export async function writeUploaded<R>(
  entity: object,
  wire: WireEntity,
  write: () => Promise<R>,
): Promise<R> {
  uploadedAhead.set(entity, wire);
  try {
    return await write();
  } finally {
    uploadedAhead.delete(entity);
  }
}

/**
 * The large-value stage of every entity write, around the writer of whatever else the entity keeps
 * (its row alone, its index copies, its summary rows): before the commit, the values are uploaded
 * under fresh blob names and the row is pointed at them; the inner writer then commits the row (with
 * its copies and summary rows, by its own rules); after the commit, the blobs the row pointed at
 * before are removed. The stage knows nothing of the inner writer's features, and the inner writer
 * nothing of blobs: it only sees, through `withPreparedWires`, a row that already carries references.
 *
 * A crash or failure between those requests leaves at worst a blob no row points at, which
 * `db.repair()` removes; a row never points at a blob that was not fully written.
 */
export class LargeStage<T extends object> implements EntityWriter<T> {
  readonly #model: EntityModel<T>;
  readonly #large: LargeValues;
  readonly #inner: EntityWriter<T>;
  readonly #prepared: WeakMap<object, WireEntity>;

  /** `inner` must be built on `withPreparedWires(model, prepared)` with the same `prepared` map. */
  constructor(
    model: EntityModel<T>,
    large: LargeValues,
    inner: EntityWriter<T>,
    prepared: WeakMap<object, WireEntity>,
  ) {
    this.#model = model;
    this.#large = large;
    this.#inner = inner;
    this.#prepared = prepared;
  }

  insert(entity: T): Promise<void> {
    // No row exists (or the insert fails): nothing old to remove, so no read first.
    return this.#write(entity, "replace", false, () => this.#inner.insert(entity));
  }

  upsert(entity: T, mode: WriteMode): Promise<void> {
    return this.#write(entity, mode, true, () => this.#inner.upsert(entity, mode));
  }

  update(entity: T, mode: WriteMode, ifMatch: string): Promise<void> {
    return this.#write(entity, mode, true, () => this.#inner.update(entity, mode, ifMatch));
  }

  async delete(key: Partial<T>, ifMatch: string | undefined): Promise<boolean> {
    const values = key as Record<string, unknown>;
    const partitionKey = this.#model.partitionKey.encode(values, "PartitionKey");
    const rowKey = this.#model.rowKey.encode(values, "RowKey");
    const before = await this.#large.current(partitionKey, rowKey);
    const existed = await this.#inner.delete(key, ifMatch);
    await this.#large.replaced(before, undefined, false);
    return existed;
  }

  bulkInsert(items: Iterable<T> | AsyncIterable<T>, options: BulkOptions): Promise<BulkResult<T>> {
    // Each entity's blobs are ordered around its own row: one composite write per item.
    return writeEach(items, (item) => this.insert(item), this.#partitionOf, options);
  }

  bulkUpsert(
    items: Iterable<T> | AsyncIterable<T>,
    mode: WriteMode,
    options: BulkOptions,
  ): Promise<BulkResult<T>> {
    return writeEach(items, (item) => this.upsert(item, mode), this.#partitionOf, options);
  }

  bulkDelete(
    keys: Iterable<Partial<T>> | AsyncIterable<Partial<T>>,
    options: BulkOptions,
  ): Promise<BulkResult<Partial<T>>> {
    return writeEach(keys, (key) => this.delete(key, undefined), this.#partitionOf, options);
  }

  track(entity: T, stored: StoredEntity): void {
    this.#inner.track(entity, stored);
  }

  readonly #partitionOf = (item: Partial<T>): string =>
    this.#model.partitionKey.encode(item as Record<string, unknown>, "PartitionKey");

  /**
   * Before: the row's current references (when it may replace one) and the uploads. Commit: the
   * inner writer, with the prepared row. After: the replaced blobs removed (or, when the commit was
   * certainly refused, the new ones).
   */
  async #write(entity: T, mode: WriteMode, replaces: boolean, commit: () => Promise<void>): Promise<void> {
    const ahead = uploadedAhead.get(entity);
    // Taken once: a later write of the same instance uploads its values as usual.
    uploadedAhead.delete(entity);
    const wire = ahead === undefined ? this.#model.mapper.toWire(entity) : { ...ahead };
    const uploads = ahead === undefined ? this.#large.prepare(entity, wire) : [];
    const before = replaces ? await this.#large.current(wire.partitionKey, wire.rowKey) : undefined;
    await this.#large.upload(uploads);
    this.#prepared.set(entity, wire);
    try {
      await commit();
    } catch (error) {
      await this.#large.discard(uploads, error);
      throw error;
    } finally {
      this.#prepared.delete(entity);
    }
    if (before !== undefined) await this.#large.replaced(before, wire, mode === "merge");
  }
}

/**
 * The model as the inner writer of a `LargeStage` sees it: `toWire` of an entity being written
 * answers the row the stage prepared (pointing at the uploaded blobs), of anything else the row as
 * mapped (the mapper leaves large columns out).
 */
export function withPreparedWires<T extends object>(
  model: EntityModel<T>,
  prepared: WeakMap<object, WireEntity>,
): EntityModel<T> {
  const mapper = model.mapper;
  return {
    ...model,
    mapper: {
      ...mapper,
      toWire: (entity: T) => {
        const wire = prepared.get(entity);
        return wire === undefined ? mapper.toWire(entity) : { ...wire };
      },
    },
  };
}
