import type { EntityModel } from "../../schema/entity-model.js";
import type { EdmType, PropertyTypes } from "../../store/table-store.js";

const cache = new WeakMap<EntityModel, PropertyTypes | undefined>();

/**
 * The property types a typed read of `model` expects, which let a store read rows without type
 * annotations (`AzureStore`: `odata=nometadata`). `undefined` for a model with an upcaster (its rows
 * of older versions have a shape the current columns do not describe) and for a wide model (its rows
 * are parts holding values under other names): those reads keep their annotations.
 * Properties outside the model (discriminator, bookkeeping) are Strings and need no type.
 */
export function readTypesOf(model: EntityModel): PropertyTypes | undefined {
  if (cache.has(model)) return cache.get(model);
  let types: PropertyTypes | undefined;
  if (model.upcast === undefined && !model.wide) {
    const record: Record<string, EdmType> = {};
    // A Json column is stored as a String, an encrypted one as Binary (its sealed bytes); a data
    // series stores each slot under its own name.
    for (const column of model.columns) {
      // A large column's row property is its blob reference, a String.
      const stored = column.encrypted
        ? "Binary"
        : column.type === "Json" || column.large
          ? "String"
          : column.type;
      for (const property of column.properties) record[property] = stored;
    }
    types = Object.freeze(record);
  }
  cache.set(model, types);
  return types;
}
