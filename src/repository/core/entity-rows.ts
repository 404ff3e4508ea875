import { SchemaError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import type { StoredEntity, WireValue } from "../../store/table-store.js";
import { ENTITY_TYPE_PROPERTY, isUserProperty } from "../../wire/system-properties.js";

/** A row's discriminator (`"Employee@2"`) split into its type and version. */
export interface EntityTypeTag {
  type: string;
  /** `undefined` when the text carries no `@version` (rows written by other clients). */
  version: number | undefined;
}

const VERSION = /^[0-9]+$/;

/** Splits an `EntityType` value into type and version; `undefined` when the row has none. */
export function parseEntityType(value: unknown): EntityTypeTag | undefined {
  if (typeof value !== "string") return undefined;
  const at = value.lastIndexOf("@");
  if (at < 0) return { type: value, version: undefined };
  const digits = value.slice(at + 1);
  return { type: value.slice(0, at), version: VERSION.test(digits) ? Number(digits) : undefined };
}

/**
 * Compiles the upcasting step of a class's read path: a row whose `EntityType` records an older
 * version than the class's goes through the class's `upcast` and comes back as a row of the current
 * version, keys and ETag unchanged; any other row is returned as it is (same object). `undefined`
 * when the class has no upcaster, so the common read path pays nothing.
 */
export function compileUpcaster(model: EntityModel): ((stored: StoredEntity) => StoredEntity) | undefined {
  const upcast = model.upcast;
  if (upcast === undefined) return undefined;
  const current = `${model.type}@${model.version}`;
  return (stored) => {
    const tag = stored[ENTITY_TYPE_PROPERTY];
    if (tag === current) return stored;
    const fromVersion = parseEntityType(tag)?.version;
    if (fromVersion === undefined || fromVersion >= model.version) return stored;
    const properties: Record<string, unknown> = {};
    for (const name of Object.keys(stored)) {
      if (isUserProperty(name)) properties[name] = stored[name];
    }
    const upgraded: unknown = upcast(properties, fromVersion);
    if (upgraded === null || typeof upgraded !== "object" || Array.isArray(upgraded)) {
      throw new SchemaError(
        `${model.name}: upcast(properties, ${fromVersion}) must return the upgraded properties as an object, got ${
          upgraded === null ? "null" : Array.isArray(upgraded) ? "an array" : typeof upgraded
        }`,
      );
    }
    const row: StoredEntity = {
      ...(upgraded as Record<string, WireValue>),
      partitionKey: stored.partitionKey,
      rowKey: stored.rowKey,
      etag: stored.etag,
      [ENTITY_TYPE_PROPERTY]: current,
    };
    if (stored.timestamp !== undefined) row.timestamp = stored.timestamp;
    return row;
  };
}

const upcasters = new WeakMap<EntityModel, ((stored: StoredEntity) => StoredEntity) | undefined>();

/** The compiled upcaster of a model (see `compileUpcaster`), built once per model. */
export function upcasterOf(model: EntityModel): ((stored: StoredEntity) => StoredEntity) | undefined {
  if (!model.upcast) return undefined;
  let upcaster = upcasters.get(model);
  if (upcaster === undefined) {
    upcaster = compileUpcaster(model);
    upcasters.set(model, upcaster);
  }
  return upcaster;
}
