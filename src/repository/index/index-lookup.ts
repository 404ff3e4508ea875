import { ValidationError } from "../../errors.js";
import { findState } from "../../query/find-state.js";
import { Query, type QueryExecutor } from "../../query/query.js";
import type { QueryExplanation } from "../../query/query-plan.js";
import type { EntityModel, IndexModel } from "../../schema/entity-model.js";
import { rememberEtag } from "../../serialization/entity-etag.js";
import type { StoredEntity } from "../../store/table-store.js";
import { indexKeyValues } from "../core/blind-keys.js";
import { COPY_INDEX_PROPERTY, type CopyRef } from "../core/copy-ref.js";
import { isExpiredRow, withExpiryColumn } from "../core/expiry.js";
import { tolerateMissingTable } from "../core/period-tables.js";
import { queryExecutor } from "../core/query-executor.js";
import { readTypesOf } from "../core/read-types.js";
import type { Backend, BlindIndexing, Clock, Requests, TableNaming } from "../core/requests.js";
import { listIndexExecutor } from "./list-index-query.js";

/**
 * Reads through one secondary index. Results are entities of the class built from the copies
 * (projected indexes carry only their fields plus keys). They carry no ETag: a copy's version is
 * not the entity's, so read the entity by its key before a conditional update.
 */
export class IndexLookup<T extends object> {
  readonly #model: EntityModel<T>;
  readonly #index: IndexModel;
  /** The copies' table; for an index kept in a table per period, the prefixed template (for messages). */
  readonly #table: string;
  readonly #runner: Requests & TableNaming & Backend & Clock & Partial<BlindIndexing>;
  readonly #keySpace: EntityModel<T>;
  /** The repository's own row reader (upcast, ETag and copies tracked), for the entities a list names. */
  readonly #readRow: (stored: StoredEntity) => T | undefined;

  /** @internal Use `repository.index(name)`. */
  static build<T extends object>(
    model: EntityModel<T>,
    index: IndexModel,
    runner: Requests & TableNaming & Backend & Clock & Partial<BlindIndexing>,
    readRow: (stored: StoredEntity) => T | undefined,
  ): IndexLookup<T> {
    return new IndexLookup(model, index, runner, readRow);
  }

  private constructor(
    model: EntityModel<T>,
    index: IndexModel,
    runner: Requests & TableNaming & Backend & Clock & Partial<BlindIndexing>,
    readRow: (stored: StoredEntity) => T | undefined,
  ) {
    this.#readRow = readRow;
    this.#model = model;
    this.#index = index;
    this.#runner = runner;
    this.#table = runner.tableName(index.table);
    // Queries over the index's key space reuse the entity's columns and mapper.
    this.#keySpace = { ...model, table: index.table, partitionKey: index.partitionKey, rowKey: index.rowKey };
  }

  /** Point query on the index (every field of its keys given); `undefined` when no entity has the value. */
  async get(values: Partial<T>): Promise<T | undefined> {
    if (this.#index.list) {
      throw new ValidationError(
        "list-index-get",
        `${this.#model.name}.indexes.${this.#index.name} lists many entities per value: use find()`,
        { field: this.#index.name },
      );
    }
    const key = values as Record<string, unknown>;
    // A blind-indexed field: the key holds its blind value; while a blind-index key is being rotated,
    // an entity not yet rewritten is found under a previous key (see db.rewriteBlindIndexes).
    const generations =
      this.#index.blindFields === undefined ? 1 : (this.#runner.blindIndex?.generations ?? 1);
    for (let generation = 0; generation < generations; generation++) {
      const keyValues = this.#blindKeyValues(key, generation);
      const partitionKey = this.#index.partitionKey.encode(keyValues, "PartitionKey");
      const rowKey = this.#index.rowKey.encode(keyValues, "RowKey");
      const found = await this.#executor().fetchPoint(this.#tableOf(key), partitionKey, rowKey, undefined);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  /** The values with each blind-indexed field's blind value (under key `generation`) in place of its plaintext. */
  #blindKeyValues(values: Record<string, unknown>, generation = 0): Record<string, unknown> {
    return indexKeyValues(this.#model, this.#index, values, this.#runner.blindIndex, generation);
  }

  /**
   * Range query over the index: partition fields required, leading row-key fields narrow it; for an
   * index kept in a table per period, the period field too (it picks the period's table).
   */
  find(values: Partial<T>): Query<T> {
    if (this.#index.list) return this.#findInList(values as Record<string, unknown>);
    const table = this.#tableOf(values as Record<string, unknown>);
    const state = findState(
      `${this.#model.name}.indexes.${this.#index.name}`,
      this.#index.partitionKey,
      this.#index.rowKey,
      this.#blindKeyValues(this.#keyValues(values as Record<string, unknown>)),
    );
    const query = Query.build(this.#keySpace, this.#executor(), { table, ...state, filters: [] });
    // A bucket holds many values of its hashed field: unless the RowKey prefix pins it, filter on it (as find() does).
    const hashed = this.#index.partitionKey.hashed?.field;
    const value = hashed === undefined ? undefined : (values as Record<string, unknown>)[hashed];
    if (hashed === undefined || value === undefined || hashed in state.rowFields) return query;
    return query.where({ [hashed]: value } as never);
  }

  /** The values without the period field that only picks the table (unless the index's keys hold it too). */
  #keyValues(values: Record<string, unknown>): Record<string, unknown> {
    const field = this.#index.tableTemplate?.field;
    const { partitionKey, rowKey } = this.#index;
    if (field === undefined || partitionKey.fields.includes(field) || rowKey.fields.includes(field))
      return values;
    const { [field]: _period, ...rest } = values;
    return rest;
  }

  /** The physical table of the copies: fixed, or the period's table the values name (its field is then required). */
  #tableOf(values: Record<string, unknown>): string {
    const template = this.#index.tableTemplate;
    return template === undefined ? this.#table : this.#runner.tableName(template.nameOf(values));
  }

  /** How `get(values)` runs, without sending anything. */
  explainGet(values: Partial<T>): QueryExplanation {
    return this.find(values).explain();
  }

  /**
   * The entities listed under one value: reads the value's index entity (a range over its shards)
   * and fetches the listed entities in parallel, at most 8 at a time, in key order. For an entity
   * whose PartitionKey has a hash bucket, a value without the hashed field is listed in every bucket's
   * partition: each is read and the members merged in RowKey order (as `find()` merges buckets). For an
   * index in a table per period, the period field picks the table; for an entity kept in a table per
   * period, each member names its entity's period table.
   */
  #findInList(values: Record<string, unknown>): Query<T> {
    const index = this.#index;
    const name = `${this.#model.name}.indexes.${index.name}`;
    const keyValues = this.#blindKeyValues(this.#keyValues(values));
    const state = findState(name, index.partitionKey, index.rowKey, keyValues);
    const table = this.#tableOf(values);
    const rowKey = index.rowKey.encode(keyValues, "RowKey");
    const refs: CopyRef[] = (state.partitionKeys ?? [state.partitionKey]).map((partitionKey) => ({
      index: index.name,
      table,
      partitionKey,
      rowKey,
    }));
    const ref = refs[0] as CopyRef;
    const hashed = index.partitionKey.hashed?.field;
    const pinned = hashed === undefined ? undefined : keyValues[hashed];
    const executor = listIndexExecutor({
      name,
      model: this.#model,
      runner: this.#runner,
      refs,
      fanOut: state.partitionKeys !== undefined,
      periodic: index.tableTemplate !== undefined,
      readRow: (stored) => this.#readRow(stored),
      // A bucket lists every value of its hashed field: keep the one asked for.
      holdsValue: (entity) => pinned === undefined || this.#holdsHashed(entity, pinned),
    });
    return Query.build(this.#keySpace, withExpiryColumn(this.#model, executor), {
      table,
      partitionKey: ref.partitionKey,
      rowFields: {},
      rowKey: { ge: ref.rowKey, lt: `${ref.rowKey}~\uffff` },
      filters: [],
    });
  }

  /** Whether an entity's hashed partition field holds `value` (a Guid in any case, a DateTime by its instant). */
  #holdsHashed(entity: T, value: unknown): boolean {
    const field = this.#index.partitionKey.hashed?.field as string;
    const own = (entity as Record<string, unknown>)[field];
    if (own instanceof Date && value instanceof Date) return own.getTime() === value.getTime();
    if (this.#model.columnsByField.get(field)?.type === "Guid")
      return String(own).toLowerCase() === String(value).toLowerCase();
    return String(own) === String(value);
  }

  /**
   * Copies carry no ETag of their entity: the instances built from them track none. A copy of an
   * expired entity is hidden like the entity (copies of an `expiresAt` entity always carry its expiry).
   */
  #executor(): QueryExecutor<T> {
    const name = this.#index.name;
    const executor = queryExecutor(
      this.#runner,
      (stored) => {
        if (stored[COPY_INDEX_PROPERTY] !== name) return undefined;
        if (isExpiredRow(this.#model, stored, this.#runner.now())) return undefined;
        const entity = this.#model.mapper.fromWire(stored);
        rememberEtag(entity, undefined);
        return entity;
      },
      readTypesOf(this.#model),
    );
    // A period nobody has written to has no table yet: its copies read as none.
    return withExpiryColumn(
      this.#model,
      this.#index.tableTemplate === undefined ? executor : tolerateMissingTable(executor),
    );
  }
}
