import { ValidationError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import type { DataField } from "../../util/entity-fields.js";

/**
 * The columns `repository.patch` changes: any writable data fields, each with its own type. Key fields are
 * data fields too (the compiler cannot read key templates), so they are refused at run time;
 * `undefined` means "not changed". An array field (a data series) also takes `{ [slot]: value }`.
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
  >]?: T[K] | SeriesSlots<T[K]> | undefined;
};

/**
 * Single slots of a data series: `{ 13: 5 }` changes slot 13 only. Offered for every array field
 * (the compiler cannot tell a series from a `Json` array: a `Json` column stores such an object as its value).
 */
export type SeriesSlots<V> =
  NonNullable<V> extends readonly (infer E)[]
    ? { readonly [slot: number]: Exclude<E, undefined | null> | undefined }
    : never;

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
    const column = model.columnsByField.get(field);
    const slots =
      column?.series === undefined ? undefined : seriesSlots(model.name, field, column.series, value);
    if (slots === null) continue;
    instance[field] = slots ?? value;
    changed++;
  }
  if (changed === 0) {
    throw new ValidationError("patch-empty", `${model.name}: patch needs at least one column to change`, {
      field: "changes",
    });
  }
  return instance as T;
}

/** A canonical slot number: `0`, `13`, never `013`, `1.5` or `-1`. */
const SLOT = /^(0|[1-9][0-9]*)$/;

/**
 * A series' patch value as the array the mapper writes: an array as given, or `{ [slot]: value }` as
 * a sparse array holding only those slots (a merge then sends only them); `null` when it changes no
 * slot. A slot out of range or not an integer is a `ValidationError`.
 */
function seriesSlots(entity: string, field: string, count: number, value: unknown): unknown[] | null {
  if (Array.isArray(value)) return value;
  if (typeof value !== "object" || value === null) {
    throw new ValidationError(
      "type",
      `${entity}.${field}: a series is patched with an array or { [slot]: value }, got ${typeof value}`,
      { field },
    );
  }
  const sparse = new Array<unknown>(count);
  let given = 0;
  for (const [slot, item] of Object.entries(value)) {
    const index = SLOT.test(slot) ? Number(slot) : Number.NaN;
    if (!(index < count)) {
      throw new ValidationError(
        "series-slot",
        `${entity}.${field}: slot '${slot}' is not an integer from 0 to ${count - 1}`,
        { field },
      );
    }
    if (item === undefined) continue;
    if (item === null) {
      throw new ValidationError(
        "patch-null",
        `${entity}.${field}: patch cannot remove slot ${slot} (a merge keeps every property it does not send); use update with mode "replace"`,
        { field },
      );
    }
    sparse[index] = item;
    given++;
  }
  return given === 0 ? null : sparse;
}
