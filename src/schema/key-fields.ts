/**
 * Names, for the compiler, the fields an entity's key templates read, so that a key argument lacking
 * one is a compile error (`repository.get({ department })` when the RowKey needs `employeeId`). A
 * decorator cannot change the type of the class it decorates, so the class declares them itself, as a
 * type-only field (`declare` emits nothing); `@Entity` checks that it names exactly the fields of the
 * key templates (and of a table-per-period template). Without it a key argument is `Partial<T>`,
 * checked at run time (`ValidationError` `key-field-missing`).
 * @example
 * @Entity({ table: "Employees", partitionKey: "{department}", rowKey: "empid_{employeeId:6}" })
 * class Employee {
 *   declare readonly [KEY_FIELDS]?: "department" | "employeeId";
 *   @Column({ type: "String" }) department!: string;
 *   @Column({ type: "Int32" }) employeeId!: number;
 * }
 */
export const KEY_FIELDS: unique symbol = Symbol("tablekit.keyFields");

/** The key fields an entity type declares with `[KEY_FIELDS]` (`never` when it declares none). */
export type DeclaredKeyFields<T> = typeof KEY_FIELDS extends keyof T
  ? Extract<NonNullable<T[typeof KEY_FIELDS]>, keyof T>
  : never;

/**
 * The key argument of an entity's reads and writes by key (`get`, `getOrThrow`, `getMany`, `delete`,
 * `patch`, `mutate`, `bulkDelete`, `tx.delete`): any of its fields, and every field it declares with
 * `[KEY_FIELDS]` required. An entity instance is one.
 */
export type KeyValues<T> = [DeclaredKeyFields<T>] extends [never]
  ? Partial<T>
  : Partial<T> & { [P in DeclaredKeyFields<T>]-?: Exclude<T[P], undefined> };
