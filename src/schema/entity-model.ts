import { SchemaError } from "../errors.js";
import type { KeyTemplate } from "../keys/key-template.js";
import type { TableTemplate } from "../keys/table-template.js";
import type { EntityMapper } from "../serialization/entity-mapper.js";
import type { MappedColumn } from "../serialization/mapped-column.js";
import type { EntityClass } from "../util/entity-class.js";
import type { BlindIndexModel } from "./blind-index-plan.js";

export type { EntityClass } from "../util/entity-class.js";

/** One resolved column. */
export interface ColumnModel extends MappedColumn {
  /** Encrypted client-side (`@Column({ encrypt: true })`): stored as Binary, never filtered on. */
  readonly encrypted?: true;
  /** An encrypted column's blind index (`@Column({ blindIndex })`): equality lookups and index keys. */
  readonly blindIndex?: BlindIndexModel;
}

/** One resolved secondary index (behaviour lives with the index feature). */
export interface IndexModel {
  readonly name: string;
  readonly table: string;
  /** Set when `table` names a period (`Logs{at:month}`): each copy lives in its entity's period's table. */
  readonly tableTemplate?: TableTemplate | undefined;
  readonly partitionKey: KeyTemplate;
  readonly rowKey: KeyTemplate;
  /** True when the copies live in the entity's own table and partition (kept atomic with an EGT). */
  readonly intraPartition: boolean;
  readonly unique: boolean;
  /** An index entity per value listing its entities' keys (non-unique), instead of copies. */
  readonly list: boolean;
  readonly project: readonly string[] | undefined;
  readonly when: ((entity: never) => boolean) | undefined;
  /** Fields of its keys that are blind-indexed columns: the keys hold their untruncated blind values. */
  readonly blindFields?: readonly string[];
}

/** One summed column of a summary: the entity's column and the name its sum is stored under. */
export interface SummedColumn {
  readonly column: ColumnModel;
  /** The property (and result field) holding the sum. */
  readonly target: string;
}

/** Where a summary kept in another partition lives (see `SummaryOptions.partitionKey`). */
export interface RemoteSummaryModel {
  /** The remote PartitionKey, from fields of the entity's PartitionKey. */
  readonly partitionKey: KeyTemplate;
  /** The logical table (before the context's prefix). */
  readonly table: string;
  /** The RowKey prefix of its contribution rows (`<rowKey>~<source partition>`). */
  readonly rowKey: string;
}

/** One resolved summary (see `EntityOptions.summaries`): a row per partition with a count and sums. */
export interface SummaryModel {
  readonly name: string;
  /** The summary row's RowKey in every partition of the entity (a hidden one for a remote summary's local row). */
  readonly rowKey: string;
  /** Set for a summary kept in another partition: the local row is mirrored there. */
  readonly remote?: RemoteSummaryModel | undefined;
  /** The property (and result field) holding the count, if counted. */
  readonly count: string | undefined;
  readonly sums: readonly SummedColumn[];
}

/** Expiry of an entity (`EntityOptions.expiresAt`): the DateTime column that says when it expires. */
export interface ExpiryModel {
  readonly field: string;
  /** The property it is stored under. */
  readonly property: string;
}

/** The validated model of an entity class: table, keys, columns and the compiled wire mapper. */
export interface EntityModel<T extends object = object> {
  readonly ctor: EntityClass<T>;
  readonly name: string;
  readonly table: string;
  /** Set when `table` names a period (`Logs{at:month}`): each entity lives in its period's table. */
  readonly tableTemplate?: TableTemplate | undefined;
  /** The discriminator stored in every row. */
  readonly type: string;
  readonly version: number;
  /** Upgrades the stored properties of rows of older versions (see `EntityOptions.upcast`). */
  readonly upcast?:
    | ((properties: Record<string, unknown>, fromVersion: number) => Record<string, unknown>)
    | undefined;
  readonly partitionKey: KeyTemplate;
  readonly rowKey: KeyTemplate;
  /** Stored as several rows (see `EntityOptions.wide` and `wide-rows.ts`). */
  readonly wide: boolean;
  readonly columns: readonly ColumnModel[];
  readonly columnsByField: ReadonlyMap<string, ColumnModel>;
  readonly indexes: ReadonlyMap<string, IndexModel>;
  /** Summaries by name (empty when the entity has none). */
  readonly summaries: ReadonlyMap<string, SummaryModel>;
  /** Set when entities expire (`expiresAt`); its expiry index is in `indexes` (resolve-expiry.ts). */
  readonly expiry?: ExpiryModel | undefined;

  /** Set when every committed write is recorded in the change feed (`EntityOptions.changeFeed`). */
  readonly changeFeed?: ChangeFeedModel | undefined;
  readonly mapper: EntityMapper<T>;
  /** Design warnings a context reports once (`schema-warning` events), e.g. the append-only anti-pattern. */
  readonly warnings: readonly SchemaWarning[];
}

/** The change feed of an entity: how long its changes are kept. */
export interface ChangeFeedModel {
  readonly retentionMs: number;
}

/** A legal but risky design choice, reported as a `schema-warning` event. */
export interface SchemaWarning {
  /** A stable name for the warning, e.g. `append-only-partition`. */
  readonly rule: string;
  readonly message: string;
}

const models = new WeakMap<Function, EntityModel>();
/** Models with encrypted columns by `type`: a row read or written anywhere is matched to its model by its `EntityType`. */
const encryptedByType = new Map<string, EntityModel[]>();

/** Records the model built for a decorated class. */
export function registerEntityModel(ctor: Function, model: EntityModel): void {
  models.set(ctor, model);
  if (model.changeFeed !== undefined) changeFed.push(model);
  if (!model.columns.some((column) => column.encrypted)) return;
  const list = encryptedByType.get(model.type) ?? [];
  list.push(model);
  encryptedByType.set(model.type, list);
}

/** Every defined model with a change feed: a write anywhere to one of its rows records its change. */
const changeFed: EntityModel[] = [];

/** The defined models with `changeFeed`. */
export function changeFedModels(): readonly EntityModel[] {
  return changeFed;
}

/** The defined models of this `type` that have encrypted columns. */
export function encryptedModelsOfType(type: string): readonly EntityModel[] {
  return encryptedByType.get(type) ?? [];
}

/** True when the class itself (not a base class) was decorated with `@Entity`. */
export function hasEntityModel(ctor: Function): boolean {
  return models.has(ctor);
}

/** The model of a class decorated with `@Entity`; `SchemaError` for any other class. */
export function getEntityModel<T extends object>(ctor: EntityClass<T>): EntityModel<T> {
  const model = models.get(ctor);
  if (!model) {
    const name = typeof ctor === "function" ? ctor.name || "(anonymous class)" : String(ctor);
    throw new SchemaError(
      `${name} is not an entity: decorate it with @Entity({ table, partitionKey, rowKey })`,
    );
  }
  return model as EntityModel<T>;
}

/** The model of an entity instance's class. */
export function modelOfInstance<T extends object>(entity: T): EntityModel<T> {
  if (entity === null || typeof entity !== "object") {
    throw new SchemaError(`Expected an entity instance, got ${entity === null ? "null" : typeof entity}`);
  }
  return getEntityModel(entity.constructor as EntityClass<T>);
}
