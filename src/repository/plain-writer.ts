import { ConcurrencyError, EntityAlreadyExistsError, EntityNotFoundError } from "../errors.js";
import type { EntityModel } from "../schema/entity-model.js";
import { etagIn, rememberEtag } from "../serialization/entity-etag.js";
import type { StoredEntity, WriteMode } from "../store/table-store.js";
import type { BulkOptions, BulkResult } from "./bulk/bulk-types.js";
import { writeBulk } from "./bulk/bulk-writer.js";
import type { EntityWriter } from "./entity-writer.js";
import { deleteExisted, ourEtag, settleLostAnswer } from "./lost-answers.js";
import type { StoreRunner } from "./store-runner.js";

/** Writes entities without secondary indexes: one request per write, bulk writes as batches. */
export class PlainWriter<T extends object> implements EntityWriter<T> {
  readonly #model: EntityModel<T>;
  readonly #table: string;
  readonly #runner: StoreRunner;

  constructor(model: EntityModel<T>, table: string, runner: StoreRunner) {
    this.#model = model;
    this.#table = table;
    this.#runner = runner;
  }

  async insert(entity: T): Promise<void> {
    const wire = this.#model.mapper.toWire(entity);
    const table = this.#table;
    const { etag } = await this.#runner.run("insert", table, async (s, { possiblyApplied }) => {
      try {
        return await s.insert(table, wire);
      } catch (error) {
        // Not ours after all: the key is taken (whether our lost attempt was first cannot be known).
        return settleLostAnswer(error, possiblyApplied, {
          ownEffect: (e) => e instanceof EntityAlreadyExistsError,
          readBack: () => ourEtag(s, table, wire, "replace"),
          otherwise: "mark",
        });
      }
    });
    rememberEtag(entity, etag, this.#runner.scope);
  }

  async upsert(entity: T, mode: WriteMode): Promise<void> {
    const wire = this.#model.mapper.toWire(entity);
    // Unconditional and idempotent: a retry after a lost answer writes the same state again.
    const { etag } = await this.#runner.run("upsert", this.#table, (s) => s.upsert(this.#table, wire, mode));
    rememberEtag(entity, etag, this.#runner.scope);
  }

  async update(entity: T, mode: WriteMode, ifMatch: string): Promise<void> {
    const wire = this.#model.mapper.toWire(entity);
    const table = this.#table;
    const keys = { table, partitionKey: wire.partitionKey, rowKey: wire.rowKey };
    const { etag } = await this.#runner.run("update", table, async (s, { possiblyApplied }) => {
      try {
        return await s.update(table, wire, mode, ifMatch);
      } catch (error) {
        // Our earlier attempt may have applied and changed the ETag (412), or applied and been deleted since (404).
        return settleLostAnswer(error, possiblyApplied, {
          ownEffect: (e) => e instanceof ConcurrencyError || e instanceof EntityNotFoundError,
          readBack: () => ourEtag(s, table, wire, mode),
          otherwise: keys,
        });
      }
    });
    rememberEtag(entity, etag, this.#runner.scope);
  }

  async delete(key: Partial<T>, ifMatch: string | undefined): Promise<boolean> {
    const values = key as Record<string, unknown>;
    const partitionKey = this.#model.partitionKey.encode(values, "PartitionKey");
    const rowKey = this.#model.rowKey.encode(values, "RowKey");
    const condition = ifMatch ?? etagIn(key, this.#runner.scope) ?? "*";
    const table = this.#table;
    const existed = await this.#runner.run("delete", table, async (s, { possiblyApplied }) => {
      try {
        return deleteExisted(await s.delete(table, partitionKey, rowKey, condition), possiblyApplied);
      } catch (error) {
        return settleLostAnswer(error, possiblyApplied, {
          ownEffect: (e) => e instanceof EntityNotFoundError || e instanceof ConcurrencyError,
          readBack: async () => ((await s.getEntity(table, partitionKey, rowKey)) ? undefined : true),
          otherwise: { table, partitionKey, rowKey },
        });
      }
    });
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

  track(_entity: T, _stored: StoredEntity): void {
    // A plain entity's ETag is all there is to track, and the reader records it.
  }
}
