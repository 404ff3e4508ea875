import { SchemaError, ValidationError } from "../../errors.js";
import { type CommonValues, MultiEntityQuery } from "../../query/multi-entity-query.js";
import { Query, type QueryExecutor } from "../../query/query.js";
import type { RowKeyBounds } from "../../query/query-plan.js";
import { ENTITY_TYPE_PROPERTY } from "../../schema/build-entity-model.js";
import type { ColumnModel, EntityClass, EntityModel } from "../../schema/entity-model.js";
import type { EntityMapper } from "../../serialization/entity-mapper.js";
import type { StoredEntity } from "../../store/table-store.js";
import { parseEntityType } from "../core/entity-rows.js";
import { withExpiryColumn } from "../core/expiry.js";
import { queryExecutor } from "../core/query-executor.js";
import type { Backend, Requests } from "../core/requests.js";
import { assertNoLargeColumns } from "../large/large-values.js";
import type { Repository } from "./repository.js";

/** The instance type of an entity class (`EntityOf<typeof Employee>` is `Employee`); distributes over unions. */
export type EntityOf<C> = C extends EntityClass<infer T> ? T : never;

/**
 * Several entity classes sharing one table, read together: `db.query(Department, Employee)`.
 * Every class must live in the same table and build its PartitionKey from the same template, so a
 * `find` is one partition. Results are typed as the union and each row is resolved to its class by
 * its `EntityType` (upcast when written by an older version).
 * @example
 * const rows = await db.query(Department, Employee).find({ department: "Sales" }).toArray();
 * for (const row of rows) if (row instanceof Employee) console.log(row.lastName);
 */
export class MultiEntitySource<U extends object> {
  readonly #models: readonly EntityModel[];
  readonly #label: string;
  readonly #table: string;
  readonly #shape: EntityModel<U>;
  readonly #common: ReadonlyMap<string, ColumnModel>;
  readonly #executor: QueryExecutor<U>;

  /** @internal Use `TableContext.query(...classes)`. */
  static build<U extends object>(
    repositories: ReadonlyArray<Repository<object>>,
    runner: Requests & Backend,
  ): MultiEntitySource<U> {
    return new MultiEntitySource(repositories, runner);
  }

  private constructor(repositories: ReadonlyArray<Repository<object>>, runner: Requests & Backend) {
    const unique = [...new Map(repositories.map((r) => [r.model.ctor, r] as const)).values()];
    if (unique.length === 0) {
      throw new ValidationError("query-classes", "db.query() needs at least one entity class");
    }
    const models = unique.map((r) => r.model);
    this.#models = models;
    this.#label = `db.query(${models.map((m) => m.name).join(", ")})`;
    // Their blobs are fetched by each class's repository reads only.
    for (const model of models) assertNoLargeColumns(model, this.#label);
    const first = unique[0] as Repository<object>;
    const caseSensitive = runner.backend.capabilities.limits?.caseSensitiveTableNames ?? false;
    assertSharedTableAndPartition(this.#label, models, caseSensitive);
    this.#table = first.table;

    const byType = new Map<string, Repository<object>>();
    for (const repository of unique) {
      const clash = byType.get(repository.model.type);
      if (clash) {
        throw new SchemaError(
          `${this.#label}: ${clash.model.name} and ${repository.model.name} both have type '${repository.model.type}'; rows could not be told apart`,
        );
      }
      byType.set(repository.model.type, repository);
    }

    this.#common = commonColumns(models);
    this.#shape = shapeOf<U>(this.#label, first.model, this.#common);
    const resolve = (stored: StoredEntity): U | undefined => {
      const type = parseEntityType(stored[ENTITY_TYPE_PROPERTY])?.type;
      const repository = type === undefined ? undefined : byType.get(type);
      // readRow also skips index copies (they carry their entity's EntityType) and upcasts old versions.
      return repository?.readRow(stored) as U | undefined;
    };
    // A projection still fetches each expiring class's expiry column, so its expired rows stay hidden.
    let executor = queryExecutor(runner, resolve);
    for (const repository of unique) executor = withExpiryColumn(repository.model, executor);
    this.#executor = executor;
  }

  /** The physical table read. */
  get table(): string {
    return this.#table;
  }

  /**
   * Every row of the given classes in one partition (every partition-key field is required, and
   * only those: each class has its own RowKey space, so there is no RowKey range). Results come in
   * RowKey order, each resolved to its class (on an unsorted store such as the Cosmos DB Table API:
   * from `toArray`, `first` and `take`; iteration and pages follow the store's order).
   */
  find(partial: CommonValues<U>): MultiEntityQuery<U> {
    const model = this.#models[0] as EntityModel;
    const given = (partial ?? {}) as Record<string, unknown>;
    const partitionFields = model.partitionKey.fields;
    for (const field of Object.keys(given)) {
      if (!partitionFields.includes(field)) {
        throw new ValidationError(
          "find-key-fields",
          `${this.#label}: find() takes partition-key fields only (${partitionFields.join(", ") || "none"}); ` +
            `'${field}' is not one. The classes have different RowKeys, so narrow with where()/filter() or use a repository's find()`,
          { field },
        );
      }
    }
    const missing = partitionFields.filter((field) => given[field] === undefined || given[field] === null);
    if (missing.length > 0) {
      throw new ValidationError(
        "find-partition",
        `${this.#label}: find() needs every partition-key field (missing ${missing.join(", ")}); use scan() for a table scan`,
        { field: missing[0] as string },
      );
    }
    const partitionKey = model.partitionKey.encode(given, "PartitionKey");
    return this.#query(partitionKey);
  }

  /** Every row of the given classes in the whole table: a table scan, which must be asked for explicitly. */
  scan(): MultiEntityQuery<U> {
    return this.#query(undefined);
  }

  #query(partitionKey: string | undefined): MultiEntityQuery<U> {
    const rowKey: RowKeyBounds = {};
    const query = Query.build<U>(this.#shape, this.#executor, {
      table: this.#table,
      ...(partitionKey === undefined ? {} : { partitionKey }),
      rowFields: {},
      rowKey,
      filters: [],
    });
    return MultiEntityQuery.build(query, this.#label, this.#common);
  }
}

/** One table, one PartitionKey template (with the same field types), or a find could not be one partition query. */
function assertSharedTableAndPartition(
  label: string,
  models: readonly EntityModel[],
  caseSensitive: boolean,
): void {
  const first = models[0] as EntityModel;
  const periodic = models.find((model) => model.tableTemplate !== undefined);
  if (periodic !== undefined) {
    throw new SchemaError(
      `${label}: ${periodic.name} keeps a table per period ('${periodic.table}'); multi-type queries read one fixed table`,
    );
  }
  for (const model of models.slice(1)) {
    if (!sameTable(model.table, first.table, caseSensitive)) {
      throw new SchemaError(
        `${label}: ${first.name} is stored in table '${first.table}' and ${model.name} in '${model.table}'; ` +
          "a multi-type query reads one table, so every class must share it",
      );
    }
    if (model.partitionKey.source !== first.partitionKey.source) {
      throw new SchemaError(
        `${label}: ${first.name} has partitionKey '${first.partitionKey.source}' and ${model.name} '${model.partitionKey.source}'; ` +
          "find() must resolve to one partition for every class (and entities of one partition are what a transaction can span), " +
          "so every class needs the same partitionKey template",
      );
    }
    for (const field of first.partitionKey.fields) {
      const a = first.columnsByField.get(field);
      const b = model.columnsByField.get(field);
      if (a?.type !== b?.type) {
        throw new SchemaError(
          `${label}: partition-key field '${field}' is ${a?.type} in ${first.name} but ${b?.type} in ${model.name}; ` +
            "the same values must encode to the same PartitionKey for every class",
        );
      }
    }
  }
}

/** Table storage ignores the case of table names; the Cosmos DB Table API does not. */
function sameTable(a: string, b: string, caseSensitive: boolean): boolean {
  return caseSensitive ? a === b : a.toLowerCase() === b.toLowerCase();
}

/** Columns every model has under the same field, stored name and type (what `where`/`select` may use). */
function commonColumns(models: readonly EntityModel[]): Map<string, ColumnModel> {
  const common = new Map<string, ColumnModel>();
  const [first, ...rest] = models as [EntityModel, ...EntityModel[]];
  for (const column of first.columns) {
    const everywhere = rest.every((model) => {
      const other = model.columnsByField.get(column.field);
      return (
        other !== undefined &&
        other.property === column.property &&
        other.type === column.type &&
        other.series === column.series &&
        other.encrypted === column.encrypted
      );
    });
    if (everywhere) common.set(column.field, column);
  }
  return common;
}

/**
 * The model a multi-type `Query` compiles against: the shared table and partition key, and the
 * common columns only. It never maps rows (each row is mapped by its own class's repository).
 */
function shapeOf<U extends object>(
  label: string,
  first: EntityModel,
  common: ReadonlyMap<string, ColumnModel>,
): EntityModel<U> {
  const unmapped = (): never => {
    throw new ValidationError("multi-type-mapping", `${label}: rows are mapped by their own class`);
  };
  const mapper: EntityMapper<U> = {
    toWire: unmapped,
    fromWire: unmapped,
    propertiesOf(fields) {
      return fields.flatMap((field) => {
        const column = common.get(field);
        if (!column)
          throw new ValidationError("unknown-field", `${label}: no common column '${field}'`, { field });
        return column.properties;
      });
    },
  };
  return {
    ...(first as unknown as EntityModel<U>),
    name: label,
    columns: [...common.values()],
    columnsByField: common,
    indexes: new Map(),
    mapper,
  };
}
