import type { ColumnType } from "../wire/column-type.js";
import type { KEY_FIELDS } from "./key-fields.js";

/** The TypeScript field type a column type stores (`Json`: any value). */
export type ColumnTypeValue<T extends ColumnType> = T extends "String" | "Guid"
  ? string
  : T extends "Int32" | "Double"
    ? number
    : T extends "Int64"
      ? bigint
      : T extends "Boolean"
        ? boolean
        : T extends "DateTime"
          ? Date
          : T extends "Binary"
            ? Uint8Array
            : unknown;

/**
 * The field type `@Column(options)` accepts: from `options.type`, or anything when it is left to
 * inference; with `series`, an array of that type whose slots may be `undefined` (`number[]` fits too).
 */
export type ColumnValueOf<O> = O extends { type: infer T extends ColumnType }
  ? [T] extends [never]
    ? unknown
    : O extends { series: number }
      ? readonly (ColumnTypeValue<T> | undefined)[]
      : ColumnTypeValue<T>
  : unknown;

/**
 * The decorator `@Column(options)` returns. Its two call signatures are the two dialects TypeScript
 * checks a field decorator against, so a field whose declared type does not fit the column type is a
 * compile error in either: standard decorators pass `(undefined, context)` with the field's type in
 * the context; `experimentalDecorators` passes `(prototype, key)`, and the prototype's field `key` must
 * fit. Optional fields and `null`/`undefined` in the field type always fit.
 */
export interface ColumnDecorator<V> {
  (
    value: undefined,
    context: ClassFieldDecoratorContext<unknown, V | null | undefined> & {
      readonly name: string;
      readonly static: false;
      readonly private: false;
    },
  ): void;
  // TypeScript-`private`/`protected` fields are not in `keyof T` and stay unchecked, as do keys only
  // known as `string`; `prototype?: never` rejects a class constructor (a static field's target).
  <T extends object, K extends string>(
    target: T &
      (string extends K
        ? unknown
        : NoInfer<K> extends keyof T
          ? { [P in NoInfer<K>]?: V | null | undefined }
          : unknown) & {
        prototype?: never;
      },
    key: K,
    // A method or accessor's decorator gets its descriptor here: not a field.
    descriptor?: undefined,
  ): void;
}

/**
 * The field names a key template reads: `"empid_{employeeId:6}"` → `"employeeId"`; nothing for a
 * template only known as `string` (checked at run time).
 */
export type KeyTemplateFields<S> = string extends S
  ? never
  : S extends `${string}{${infer Body}}${infer Rest}`
    ? (Body extends `${infer Field}:${string}` ? Field : Body) | KeyTemplateFields<Rest>
    : never;

/** Every field name entity options read: entity and index key templates, index `project` lists, summed columns, remote summary templates. */
export type EntityOptionsFields<O> =
  | KeyTemplateFields<O extends { partitionKey: infer S } ? S : never>
  | KeyTemplateFields<O extends { rowKey: infer S } ? S : never>
  | (O extends { indexes?: infer I }
      ? I extends object
        ? {
            [N in keyof I]:
              | KeyTemplateFields<I[N] extends { partitionKey?: infer S } ? S : never>
              | KeyTemplateFields<I[N] extends { rowKey: infer S } ? S : never>
              | (I[N] extends { project?: readonly (infer P)[] } ? (string extends P ? never : P) : never);
          }[keyof I]
        : never
      : never)
  | (O extends { summaries?: infer S }
      ? S extends object
        ? {
            [N in keyof S]:
              | (S[N] extends { sum?: infer M }
                  ? M extends object
                    ? string extends keyof M
                      ? never
                      : keyof M
                    : never
                  : never)
              | KeyTemplateFields<S[N] extends { partitionKey?: infer P } ? P : never>;
          }[keyof S]
        : never
      : never)
  | (O extends { expiresAt?: infer E } ? (string extends E ? never : Exclude<E, undefined>) : never);

/** The fields entity options name that instances of class `C` lack (`never` when none is missing). */
export type MissingFields<C, O> = C extends abstract new (
  ...args: never[]
) => infer I
  ? Exclude<EntityOptionsFields<O> & string, keyof I>
  : never;

/**
 * What instances must be for the `when` callbacks of entity options: the intersection of the
 * parameter types they declare (`unknown` when none does).
 */
export type WhenParameters<O> = [O] extends [never]
  ? unknown
  : O extends { indexes?: infer I }
    ? I extends object
      ? {
          [N in keyof I]: (I[N] extends { when?: infer W } ? W : never) extends
            | ((entity: infer E) => boolean)
            | undefined
            ? [E] extends [never] // an unannotated parameter: nothing to check
              ? never
              : (x: E) => void
            : never;
        }[keyof I] extends infer F
        ? [F] extends [never]
          ? unknown
          : [F] extends [(x: infer E) => void] // from a union of functions: the intersection
            ? E
            : unknown
        : unknown
      : unknown
    : unknown;

/**
 * The fields a key argument needs: those of the PartitionKey and RowKey templates and of a
 * table-per-period template; `never` while a template is only known as `string`.
 */
export type EntityKeyFields<O> = O extends { partitionKey: infer P; rowKey: infer R; table: infer N }
  ? string extends P | R | N
    ? never
    : KeyTemplateFields<P> | KeyTemplateFields<R> | KeyTemplateFields<N>
  : never;

/**
 * How a class's `[KEY_FIELDS]` declaration differs from the fields its key templates read (`never`
 * when it declares none, names exactly those, or the templates are only known as `string`).
 */
export type KeyFieldsMismatch<C, O> = C extends abstract new (
  ...args: never[]
) => infer I
  ? typeof KEY_FIELDS extends keyof I
    ? [EntityKeyFields<O>] extends [never]
      ? never
      : [
            | Exclude<EntityKeyFields<O>, NonNullable<I[typeof KEY_FIELDS]>>
            | Exclude<NonNullable<I[typeof KEY_FIELDS]>, EntityKeyFields<O>>,
          ] extends [never]
        ? never
        : {
            missing: Exclude<EntityKeyFields<O>, NonNullable<I[typeof KEY_FIELDS]>>;
            extra: Exclude<NonNullable<I[typeof KEY_FIELDS]>, EntityKeyFields<O>>;
          }
    : never
  : never;

/**
 * What `wide: true` cannot be combined with (checked again at run time, with the reason): a space in
 * the RowKey template (the space separates each row's part number).
 */
export type WideConflicts<O> = O extends { wide: true }
  ? O extends { rowKey: `${string} ${string}` }
    ? "a space in rowKey"
    : never
  : never;

/**
 * The decorator `@Entity(options)` returns: accepts a class with every field the options' key
 * templates and `project` lists name, whose instances fit the annotated `when` parameters, in
 * either dialect (standard decorators pass a context, `experimentalDecorators` does not).
 */
export type EntityDecorator<O> = <C extends abstract new (...args: never[]) => WhenParameters<O>>(
  target: C &
    ([MissingFields<C, O>] extends [never]
      ? unknown
      : { "tablekit: a key template, index or project names fields the class lacks": MissingFields<C, O> }) &
    ([WideConflicts<O>] extends [never]
      ? unknown
      : { "tablekit: a wide entity cannot have": WideConflicts<O> }) &
    ([KeyFieldsMismatch<C, O>] extends [never]
      ? unknown
      : {
          "tablekit: [KEY_FIELDS] must name exactly the fields of the key templates": KeyFieldsMismatch<C, O>;
        }),
  context?: ClassDecoratorContext<C>,
) => void;

/** The decorator `@Entity<T>(options)` returns: accepts a class whose instances are `T`s. */
export type TypedEntityDecorator<T> = <C extends abstract new (...args: never[]) => T>(
  target: C,
  context?: ClassDecoratorContext<C>,
) => void;
