import { SchemaError } from "../errors.js";
import { buildEntityModel } from "./build-entity-model.js";
import type { ColumnRecord, DecoratorDialect } from "./column-record.js";
import type {
  ColumnDecorator,
  ColumnValueOf,
  EntityDecorator,
  TypedEntityDecorator,
} from "./decorator-types.js";
import { type EntityClass, hasEntityModel, registerEntityModel } from "./entity-model.js";
import type { ColumnOptions, EntityOptions, LargeColumnCheck } from "./entity-options.js";

// Standard decorators get a `context.metadata` object (shared by a class's member and class decorators,
// and inherited by subclasses) only where `Symbol.metadata` exists: TypeScript's emit checks for it at
// class definition, and Node 20 lacks it. Defining it here, when tablekit is imported and so before
// any entity class is evaluated, is the polyfill TypeScript's 5.2 release notes suggest; `Symbol.for`
// matches esbuild's own fallback. (In this module, not a side-effect-only import a bundler could drop.)
(Symbol as { metadata?: symbol }).metadata ??= Symbol.for("Symbol.metadata");

/**
 * Columns recorded per owner: a class prototype (`experimentalDecorators`) or a class's decorator
 * metadata object (standard). Both chain to the base class's owner, which is how inheritance is read.
 */
const columnsByOwner = new WeakMap<object, ColumnRecord[]>();
/**
 * Standard field decorators seen without `context.metadata` (a class defined before tablekit set up
 * `Symbol.metadata`); the next `@Entity` takes them. Columns of an undecorated base class then go to
 * the first entity class defined after it.
 */
let pending: ColumnRecord[] = [];
const dialects = new WeakMap<Function, DecoratorDialect>();

/**
 * Marks a class as a table entity and resolves its model at once, so definition mistakes
 * throw `SchemaError` when the class is declared, never at query time. Works with standard
 * decorators and with TypeScript's `experimentalDecorators`. The compiler checks that the class has
 * every field the key templates and index `project` lists name, and fits annotated `when` parameters.
 * @example
 * @Entity({ table: "Employees", partitionKey: "{department}", rowKey: "empid_{employeeId:6}" })
 * class Employee { @Column({ type: "String" }) department!: string; @Column({ type: "Int32" }) employeeId!: number; }
 */
export function Entity<const O extends EntityOptions>(options: O): EntityDecorator<O>;
/**
 * `@Entity<Employee>({ … })`: the options are typed by the entity (`indexes[…].when` receives an
 * `Employee`, `project` takes its field names) and the class must be an `Employee`. Key template
 * fields are then checked when the class is decorated, at run time: TypeScript infers no other type
 * argument once one is given.
 */
export function Entity<T extends object>(options: EntityOptions<T>): TypedEntityDecorator<T>;
export function Entity(
  options: EntityOptions,
  ...misuse: unknown[]
): (target: never, context?: never) => void {
  if (typeof options === "function" || misuse.length > 0) {
    throw new SchemaError(
      "@Entity needs its options: write @Entity({ table, partitionKey, rowKey }) (with parentheses)",
    );
  }
  return (target: unknown, context?: unknown) => defineEntity(options, target, context);
}

/**
 * Marks a field as a stored column. Give `type` unless the project compiles with
 * `experimentalDecorators` and `emitDecoratorMetadata` (then it is inferred from the field's type);
 * the compiler rejects a field whose type does not fit `type`.
 */
export function Column<const O extends ColumnOptions>(
  options?: O & LargeColumnCheck<O>,
): ColumnDecorator<ColumnValueOf<O>>;
export function Column(options: ColumnOptions = {}, ...misuse: unknown[]): ColumnDecorator<unknown> {
  if (misuse.length > 0 || typeof options !== "object" || options === null) {
    throw new SchemaError(
      "@Column takes an options object: write @Column() or @Column({ type }) (with parentheses)",
    );
  }
  const copy = { ...options };
  return ((target: unknown, key: unknown, descriptor?: unknown) =>
    isStandardContext(key)
      ? recordStandardField(copy, key)
      : recordLegacyField(copy, target, key, descriptor)) as ColumnDecorator<unknown>;
}

/** The decorator dialect an entity class was defined with (internal; for tests and diagnostics). */
export function decoratorDialectOf(ctor: Function): DecoratorDialect | undefined {
  return dialects.get(ctor);
}

interface StandardContext {
  kind: string;
  name: string | symbol;
  static?: boolean;
  private?: boolean;
  metadata?: object | undefined;
}

function isStandardContext(value: unknown): value is StandardContext {
  return (
    typeof value === "object" && value !== null && typeof (value as { kind?: unknown }).kind === "string"
  );
}

function recordStandardField(options: ColumnOptions, context: StandardContext): void {
  const member = typeof context.name === "symbol" ? context.name.toString() : context.name;
  if (context.kind !== "field") {
    const fix =
      context.kind === "accessor"
        ? "remove the `accessor` keyword"
        : context.kind === "class"
          ? "decorate the class with @Entity and its fields with @Column"
          : "store a plain field instead";
    throw new SchemaError(`@Column decorates fields, but '${member}' is a ${context.kind}: ${fix}`);
  }
  if (typeof context.name === "symbol") {
    throw new SchemaError(
      `@Column cannot decorate the symbol-named field ${member}: give the column a string name`,
    );
  }
  if (context.static) {
    throw new SchemaError(`@Column cannot decorate static field '${member}': columns are instance fields`);
  }
  if (context.private) {
    throw new SchemaError(
      `@Column cannot decorate private field '${member}': tablekit reads and writes columns as ordinary properties; drop the '#'`,
    );
  }
  const record: ColumnRecord = { field: context.name, options, designType: undefined, dialect: "standard" };
  if (context.metadata && typeof context.metadata === "object") ownColumns(context.metadata).push(record);
  else pending.push(record);
}

function recordLegacyField(options: ColumnOptions, target: unknown, key: unknown, descriptor: unknown): void {
  const isClass = typeof target === "function";
  const owner = isClass ? (target as Function).name : (target as object | null)?.constructor?.name;
  if (
    (typeof target !== "object" && !isClass) ||
    target === null ||
    (typeof key !== "string" && typeof key !== "symbol")
  ) {
    throw new SchemaError(
      "@Column was called in a way neither decorator dialect uses: apply it to a class field, compiled " +
        "either with standard decorators or with TypeScript's experimentalDecorators",
    );
  }
  const member = `${owner ?? "(anonymous class)"}.${String(key)}`;
  if (descriptor !== undefined) {
    throw new SchemaError(
      `@Column decorates fields, but ${member} is a method or accessor: store a plain field instead`,
    );
  }
  if (typeof key === "symbol") {
    throw new SchemaError(
      `@Column cannot decorate the symbol-named field ${member}: give the column a string name`,
    );
  }
  if (isClass) {
    throw new SchemaError(`@Column cannot decorate static field ${member}: columns are instance fields`);
  }
  ownColumns(target).push({
    field: key,
    options,
    designType: readDesignType(target, key),
    dialect: "legacy",
  });
}

/** `design:type` from `emitDecoratorMetadata`, when `reflect-metadata` is loaded (tablekit loads it). */
function readDesignType(prototype: object, key: string): unknown {
  const getMetadata = (Reflect as { getMetadata?: (name: string, target: object, key: string) => unknown })
    .getMetadata;
  return typeof getMetadata === "function" ? getMetadata("design:type", prototype, key) : undefined;
}

function ownColumns(owner: object): ColumnRecord[] {
  let records = columnsByOwner.get(owner);
  if (!records) {
    records = [];
    columnsByOwner.set(owner, records);
  }
  return records;
}

function defineEntity(options: EntityOptions, target: unknown, context: unknown): void {
  let dialect: DecoratorDialect;
  let owner: object;
  if (context === undefined) {
    dialect = "legacy";
    if (typeof target !== "function") {
      throw new SchemaError(
        "@Entity decorates classes; it was applied to a member: put it on the class and @Column on its fields",
      );
    }
    owner = (target as Function).prototype;
  } else if (isStandardContext(context)) {
    dialect = "standard";
    if (context.kind !== "class" || typeof target !== "function") {
      throw new SchemaError(
        `@Entity decorates classes, but '${String(context.name)}' is a ${context.kind}: put @Entity on the class and @Column on its fields`,
      );
    }
    if (context.metadata && typeof context.metadata === "object") {
      owner = context.metadata;
    } else {
      // No metadata (Symbol.metadata was missing when the class was defined): the class's own field
      // decorators ran just before this one. Keep them on the prototype so subclasses find them.
      owner = (target as Function).prototype as object;
      ownColumns(owner).push(...pending);
      pending = [];
    }
  } else if (typeof context === "string" || typeof context === "symbol") {
    throw new SchemaError(
      `@Entity decorates classes, but it was applied to member '${String(context)}': put @Entity on the class and @Column on its fields`,
    );
  } else {
    throw new SchemaError(
      "@Entity was called in a way neither decorator dialect uses: compile the class either with standard " +
        "decorators or with TypeScript's experimentalDecorators",
    );
  }
  const ctor = target as EntityClass<object>;
  const name = ctor.name || "(anonymous class)";
  if (hasEntityModel(ctor)) {
    throw new SchemaError(`${name} is decorated with @Entity twice: keep one @Entity({ … })`);
  }
  const records = readColumnRecords(name, owner);
  registerEntityModel(ctor, buildEntityModel(ctor, options, records));
  dialects.set(ctor, dialect);
}

/** Columns of a class including inherited ones, base class first; a subclass may redeclare a field. */
function readColumnRecords(entity: string, owner: object): ColumnRecord[] {
  const chain: object[] = [];
  for (let link = owner; link && link !== Object.prototype; link = Object.getPrototypeOf(link)) {
    chain.unshift(link);
  }
  const byField = new Map<string, ColumnRecord>();
  for (const link of chain) {
    const seen = new Set<string>();
    for (const record of columnsByOwner.get(link) ?? []) {
      if (seen.has(record.field)) {
        throw new SchemaError(
          `${entity}.${record.field} is decorated with @Column twice: keep one @Column({ … }) on the field`,
        );
      }
      seen.add(record.field);
      byField.set(record.field, record);
    }
  }
  return [...byField.values()];
}
