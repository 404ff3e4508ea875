import type { ColumnType } from "../wire/column-type.js";

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

/** The field type `@Column(options)` accepts: from `options.type`, or anything when it is left to inference. */
export type ColumnValueOf<O> = O extends { type: infer T extends ColumnType }
  ? [T] extends [never]
    ? unknown
    : ColumnTypeValue<T>
  : unknown;

/**
 * The decorator `@Column(options)` returns. Its two call signatures are the two dialects TypeScript
 * checks a field decorator against, so a field whose declared type does not fit the column type is a
 * compile error in either: standard decorators pass `(undefined, context)` with the field's type in
 * the context; `experimentalDecorators` passes `(prototype, key)`, and the prototype must have `key`
 * with a fitting type (`prototype?: never` rejects the constructor, i.e. a static field).
 * Optional fields and `null`/`undefined` in the field type always fit.
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
  <T extends object, K extends string>(
    target: T & LegacyFieldOwner<T, NoInfer<K>, V>,
    key: K,
    // A method or accessor's decorator gets its descriptor here: not a field.
    descriptor?: undefined,
  ): void;
}

/**
 * What a prototype must be for field `K` to fit `V`. TypeScript-`private` and `protected` fields are
 * not in `keyof T` and stay unchecked (as do keys only known as `string`); `prototype?: never` rejects
 * a class constructor, which is what a static field's decorator receives.
 */
type LegacyFieldOwner<T, K extends string, V> = (string extends K
  ? unknown
  : K extends keyof T
    ? { [P in K]?: V | null | undefined }
    : unknown) & { prototype?: never };

/**
 * The field names a key template reads: `"empid_{employeeId:6}"` → `"employeeId"`; nothing for a
 * template only known as `string` (checked at run time).
 */
export type KeyTemplateFields<S> = string extends S ? never : LiteralTemplateFields<S>;

type LiteralTemplateFields<S> = S extends `${string}{${infer Body}}${infer Rest}`
  ? (Body extends `${infer Field}:${string}` ? Field : Body) | LiteralTemplateFields<Rest>
  : never;

/** Every field name the key templates of entity options read (entity keys and index keys). */
export type EntityOptionsFields<O> =
  | KeyTemplateFields<O extends { partitionKey: infer S } ? S : never>
  | KeyTemplateFields<O extends { rowKey: infer S } ? S : never>
  | IndexFields<O extends { indexes?: infer I } ? I : never>;

type IndexFields<I> = I extends object
  ? {
      [N in keyof I]: I[N] extends infer X
        ?
            | KeyTemplateFields<X extends { partitionKey?: infer S } ? S : never>
            | KeyTemplateFields<X extends { rowKey: infer S } ? S : never>
            | (X extends { project?: readonly (infer P)[] } ? (string extends P ? never : P) : never)
        : never;
    }[keyof I]
  : never;

/** The parameter types `when` callbacks declare: the entity must be assignable to each. */
type WhenParameters<O> = [O] extends [never] ? unknown : WhenParametersOf<O>;

type WhenParametersOf<O> = O extends { indexes?: infer I }
  ? I extends object
    ? NeverToUnknown<
        UnionToIntersection<
          { [N in keyof I]: I[N] extends { when?: (entity: infer E) => boolean } ? E : never }[keyof I]
        >
      >
    : unknown
  : unknown;

type NeverToUnknown<T> = [T] extends [never] ? unknown : T;

type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void
  ? I
  : never;

/** Every field the options name, missing from instances of `C`. */
export type MissingFields<C, O> = C extends abstract new (
  ...args: never[]
) => infer I
  ? Exclude<EntityOptionsFields<O> & string, keyof I>
  : never;

/** Fails assignability (naming the fields) when the class lacks a field the options name. */
type FieldsCheck<Missing> = [Missing] extends [never]
  ? unknown
  : { "tablekit: a key template, index or project names fields the class lacks": Missing };

/**
 * The decorator `@Entity(options)` returns: accepts a class with every field the options' key
 * templates and `project` lists name, whose instances fit the annotated `when` parameters, in
 * either dialect (standard decorators pass a context, `experimentalDecorators` does not).
 */
export type EntityDecorator<O> = <C extends abstract new (...args: never[]) => WhenParameters<O>>(
  target: C & FieldsCheck<MissingFields<C, O>>,
  context?: ClassDecoratorContext<C>,
) => void;

/** The decorator `@Entity<T>(options)` returns: accepts a class whose instances are `T`s. */
export type TypedEntityDecorator<T> = <C extends abstract new (...args: never[]) => T>(
  target: C,
  context?: ClassDecoratorContext<C>,
) => void;
