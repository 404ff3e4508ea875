import { SchemaError } from "../errors.js";
import type { KeyTemplate } from "../keys/key-template.js";
import type { EntityMapper } from "../serialization/entity-mapper.js";
import type { ColumnType } from "./column-type.js";

/** A class whose instances are entities; constructors are never called by tablekit when reading. */
export type EntityClass<T extends object = object> = abstract new (...args: never[]) => T;

/** One resolved column. */
export interface ColumnModel {
  /** The class field. */
  readonly field: string;
  /** The property name stored in the table. */
  readonly property: string;
  readonly type: ColumnType;
  /** For Json columns: the class values are rebuilt as. */
  readonly jsonClass?: new () => object;
}

/** One resolved secondary index (behaviour lives with the index feature). */
export interface IndexModel {
  readonly name: string;
  readonly table: string;
  readonly partitionKey: KeyTemplate;
  readonly rowKey: KeyTemplate;
  /** True when the copies live in the entity's own table and partition (kept atomic with an EGT). */
  readonly intraPartition: boolean;
  readonly unique: boolean;
  /** An index entity per value listing its entities' keys (non-unique), instead of copies. */
  readonly list: boolean;
  readonly project: readonly string[] | undefined;
  readonly when: ((entity: never) => boolean) | undefined;
}

/** The validated model of an entity class: table, keys, columns and the compiled wire mapper. */
export interface EntityModel<T extends object = object> {
  readonly ctor: EntityClass<T>;
  readonly name: string;
  readonly table: string;
  /** The discriminator stored in every row. */
  readonly type: string;
  readonly version: number;
  /** Upgrades the stored properties of rows of older versions (see `EntityOptions.upcast`). */
  readonly upcast?:
    | ((properties: Record<string, unknown>, fromVersion: number) => Record<string, unknown>)
    | undefined;
  readonly partitionKey: KeyTemplate;
  readonly rowKey: KeyTemplate;
  readonly columns: readonly ColumnModel[];
  readonly columnsByField: ReadonlyMap<string, ColumnModel>;
  readonly indexes: ReadonlyMap<string, IndexModel>;
  readonly mapper: EntityMapper<T>;
}

const models = new WeakMap<Function, EntityModel>();

/** Records the model built for a decorated class. */
export function registerEntityModel(ctor: Function, model: EntityModel): void {
  models.set(ctor, model);
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
