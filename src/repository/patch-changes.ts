import { ValidationError } from "../errors.js";
import type { EntityModel } from "../schema/entity-model.js";
import type { DataField } from "../util/entity-fields.js";

/**
 * The columns `repository.patch` changes: any writable data fields, each with its own type. Key fields are
 * data fields too (the compiler cannot read key templates), so they are refused at run time;
 * `undefined` means "not changed".
 */
export type PatchChanges<T> = {
  [K in Extract<
    {
      // Writable fields only, by the same readonly test as `RequiredField` (a getter without a
      // setter looks readonly, and is no column to change).
      [P in keyof T]-?: (<G>() => G extends { [Q in P]: T[P] } ? 1 : 2) extends <G>() => G extends {
        -readonly [Q in P]: T[P];
      }
        ? 1
        : 2
        ? P
        : never;
    }[keyof T],
    DataField<T>
  >]?: T[K] | undefined;
};

/**
 * An instance holding only the key fields of `key` and the given changes, for a merge that sends
 * just those columns. Built without running the constructor: field initializers would add columns
 * the caller did not change. Bad input is a `ValidationError` before any request.
 */
export function patchInstance<T extends object>(
  model: EntityModel<T>,
  key: Partial<T>,
  changes: PatchChanges<T>,
): T {
  if (changes === null || typeof changes !== "object" || Array.isArray(changes)) {
    throw new ValidationError("patch", `${model.name}: patch needs an object of column values`, {
      field: "changes",
    });
  }
  const keyFields = new Set([...model.partitionKey.fields, ...model.rowKey.fields]);
  const instance = Object.create(model.ctor.prototype) as Record<string, unknown>;
  for (const field of keyFields) instance[field] = (key as Record<string, unknown>)[field];
  let changed = 0;
  for (const [field, value] of Object.entries(changes)) {
    if (!model.columnsByField.has(field)) {
      throw new ValidationError("unknown-field", `${model.name} has no column '${field}'`, { field });
    }
    if (keyFields.has(field)) {
      throw new ValidationError(
        "patch-key",
        `${model.name}: '${field}' is a key field; patch changes other columns (a new key is another entity)`,
        { field },
      );
    }
    // Skipped like in create(): under exactOptionalPropertyTypes callers pass undefined for "not given".
    if (value === undefined) continue;
    if (value === null) {
      throw new ValidationError(
        "patch-null",
        `${model.name}: patch cannot remove '${field}' (a merge keeps every column it does not send); use update with mode "replace"`,
        { field },
      );
    }
    instance[field] = value;
    changed++;
  }
  if (changed === 0) {
    throw new ValidationError("patch-empty", `${model.name}: patch needs at least one column to change`, {
      field: "changes",
    });
  }
  return instance as T;
}
