/**
 * Type-level views of an entity class's fields. Decorators cannot change a class's type, so the
 * compiler cannot tell columns from other properties: the data fields (every property that is not
 * a method) stand in for the columns, and the run-time checks keep the exact rule.
 */

/**
 * The data fields of an entity type: its string keys that are not methods. For a union of entity
 * types, the fields every member has (and none has as a method).
 */
export type DataField<T> = Exclude<
  keyof T & string,
  { [K in keyof T]-?: NonNullable<T[K]> extends Function ? K : never }[keyof T]
>;

/**
 * The data fields `repository.create` requires: those neither optional (`nickname?: string`) nor
 * readonly (a getter without a setter looks readonly, and is no column to give).
 */
export type RequiredField<T> = Extract<
  {
    // Mapping over keyof T keeps each key's modifiers visible to the readonly test.
    [K in keyof T]-?: {} extends Pick<T, K>
      ? never
      : (<G>() => G extends { [Q in K]: T[K] } ? 1 : 2) extends <G>() => G extends {
            -readonly [Q in K]: T[K];
          }
            ? 1
            : 2
        ? K
        : never;
  }[keyof T],
  DataField<T>
>;

/**
 * The values `repository.create(values)` takes: every required (non-optional, writable) data field
 * with its type, and optionally the others (optional ones may be given as `undefined`, read as
 * absent). Unknown properties are compile errors in an object literal (excess property check).
 */
export type CreateValues<T> = {
  [K in RequiredField<T>]: T[K];
} & {
  [K in Exclude<DataField<T>, RequiredField<T>>]?: T[K] | undefined;
};

/** The values of `where({ … })`: any data fields, each with its own (non-null) type. */
export type WhereValues<T> = { [K in DataField<T>]?: NonNullable<T[K]> };

/**
 * The rows of a projection on `K`: the selected fields (key fields are present at run time too).
 * Distributes over a union of entity types, so `instanceof` still tells the members apart.
 */
export type Selected<T, K extends PropertyKey> = T extends unknown ? Pick<T, K & keyof T> : never;
