import { findState } from "../../query/find-state.js";
import { Query, type QueryExecutor } from "../../query/query.js";
import type { QueryExplanation } from "../../query/query-plan.js";
import type { EntityModel, IndexModel } from "../../schema/entity-model.js";
import { rememberEtag } from "../../serialization/entity-etag.js";
import type { StoredEntity } from "../../store/table-store.js";
import type { StoreRunner } from "../store-runner.js";
import { COPY_INDEX_PROPERTY } from "./copy-ref.js";

/**
 * Reads through one secondary index. Results are entities of the class built from the copies
 * (projected indexes carry only their fields plus keys). They carry no ETag: a copy's version is
 * not the entity's, so read the entity by its key before a conditional update.
 */
export class IndexLookup<T extends object> {
  readonly #model: EntityModel<T>;
  readonly #index: IndexModel;
  readonly #table: string;
  readonly #runner: StoreRunner;
  readonly #keySpace: EntityModel<T>;

  /** @internal Use `repository.index(name)`. */
  constructor(model: EntityModel<T>, index: IndexModel, runner: StoreRunner) {
    this.#model = model;
    this.#index = index;
    this.#runner = runner;
    this.#table = runner.tableName(index.table);
    // Queries over the index's key space reuse the entity's columns and mapper.
    this.#keySpace = { ...model, table: index.table, partitionKey: index.partitionKey, rowKey: index.rowKey };
  }

  /** Point query on the index (every field of its keys given); `undefined` when no entity has the value. */
  async get(values: Partial<T>): Promise<T | undefined> {
    const key = values as Record<string, unknown>;
    const partitionKey = this.#index.partitionKey.encode(key, "PartitionKey");
    const rowKey = this.#index.rowKey.encode(key, "RowKey");
    return this.#executor().fetchPoint(this.#table, partitionKey, rowKey, undefined);
  }

  /** Range query over the index: partition fields required, leading row-key fields narrow it. */
  find(values: Partial<T>): Query<T> {
    const state = findState(
      `${this.#model.name}.indexes.${this.#index.name}`,
      this.#index.partitionKey,
      this.#index.rowKey,
      values as Record<string, unknown>,
    );
    return new Query(this.#keySpace, this.#executor(), { table: this.#table, ...state, filters: [] });
  }

  /** How `get(values)` runs, without sending anything. */
  explainGet(values: Partial<T>): QueryExplanation {
    return this.find(values).explain();
  }

  #executor(): QueryExecutor<T> {
    const name = this.#index.name;
    const toEntity = (stored: StoredEntity): T | undefined => {
      if (stored[COPY_INDEX_PROPERTY] !== name) return undefined;
      const entity = this.#model.mapper.fromWire(stored);
      rememberEtag(entity, undefined);
      return entity;
    };
    return {
      fetchPoint: async (table, partitionKey, rowKey, select) => {
        const stored = await this.#runner.run("get", table, (s) =>
          s.getEntity(table, partitionKey, rowKey, select),
        );
        return stored ? toEntity(stored) : undefined;
      },
      fetchPage: async (table, filter, select, top, continuation) => {
        const page = await this.#runner.run("query", table, (s) =>
          s.queryPage(table, {
            filter,
            ...(select ? { select } : {}),
            top,
            ...(continuation ? { continuation } : {}),
          }),
        );
        const items: T[] = [];
        for (const stored of page.items) {
          const entity = toEntity(stored);
          if (entity) items.push(entity);
        }
        return page.continuation ? { items, continuation: page.continuation } : { items };
      },
    };
  }
}
