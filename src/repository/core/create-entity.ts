import { ValidationError } from "../../errors.js";
import type { EntityClass, EntityModel } from "../../schema/entity-model.js";

/**
 * Builds an instance of the model's class from field values (what `repository.create` does): only
 * columns may be given, since anything else would be silently dropped when the entity is written
 * (a misspelt `lastNmae` would leave `lastName` empty); `undefined` values are left out.
 */
export function createEntity<T extends object>(model: EntityModel<T>, values: object): T {
  if (values === null || typeof values !== "object" || Array.isArray(values)) {
    throw new ValidationError(
      "create",
      `${model.name}: create() takes an object of field values, got ${values === null ? "null" : Array.isArray(values) ? "an array" : typeof values}`,
    );
  }
  const unknown = Object.keys(values).filter((field) => !model.columnsByField.has(field));
  if (unknown.length > 0) {
    throw new ValidationError(
      "unknown-field",
      `${model.name}: create() got ${unknown.map((field) => `'${field}'`).join(", ")}, not ${unknown.length === 1 ? "a column" : "columns"} of the entity ` +
        `(columns: ${[...model.columnsByField.keys()].join(", ")})`,
      { field: unknown[0] },
    );
  }
  const entity = instantiate(model.ctor) as Record<string, unknown>;
  for (const [field, value] of Object.entries(values)) if (value !== undefined) entity[field] = value;
  return entity as T;
}

/**
 * A new instance, with the class's field initializers (defaults) applied. A constructor that
 * declares parameters would get `undefined` for each and may throw or build nonsense, so such a
 * class is instantiated as reads do it: from its prototype, without calling the constructor.
 */
function instantiate<T extends object>(ctor: EntityClass<T>): T {
  if (ctor.length > 0) return Object.create(ctor.prototype) as T;
  return new (ctor as unknown as new () => T)();
}
