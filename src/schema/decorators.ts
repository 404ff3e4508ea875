import "reflect-metadata";
import { buildEntityModel } from "./build-entity-model.js";
import type { ColumnRecord } from "./column-record.js";
import { type EntityClass, registerEntityModel } from "./entity-model.js";
import type { ColumnOptions, EntityOptions } from "./entity-options.js";

const COLUMNS = Symbol.for("tablekit:columns");

/**
 * Marks a class as a table entity and resolves its model at once, so definition mistakes
 * throw `SchemaError` when the class is declared, never at query time.
 * @example
 * @Entity({ table: "Employees", partitionKey: "{department}", rowKey: "empid_{employeeId:6}" })
 * class Employee { @Column() department!: string; @Column({ type: "Int32" }) employeeId!: number; }
 */
export function Entity(options: EntityOptions): ClassDecorator {
  return (target) => {
    const ctor = target as unknown as EntityClass<object>;
    registerEntityModel(ctor, buildEntityModel(ctor, options, readColumnRecords(ctor)));
  };
}

/** Marks a field as a stored column; give `type` unless tsc emits `design:type` metadata. */
export function Column(options: ColumnOptions = {}): PropertyDecorator {
  return (prototype, field) => {
    if (typeof field === "symbol") throw new TypeError("@Column cannot decorate a symbol-named field");
    const records = ownColumnRecords(prototype);
    records.push({
      field,
      options: { ...options },
      designType: Reflect.getMetadata("design:type", prototype, field),
    });
  };
}

function ownColumnRecords(prototype: object): ColumnRecord[] {
  if (!Reflect.hasOwnMetadata(COLUMNS, prototype)) Reflect.defineMetadata(COLUMNS, [], prototype);
  return Reflect.getOwnMetadata(COLUMNS, prototype) as ColumnRecord[];
}

/** Columns of a class including inherited ones, base class first; a subclass may redeclare a field. */
function readColumnRecords(ctor: Function): ColumnRecord[] {
  const chain: object[] = [];
  for (
    let proto = ctor.prototype;
    proto && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    chain.unshift(proto);
  }
  const byField = new Map<string, ColumnRecord>();
  for (const proto of chain) {
    for (const record of (Reflect.getOwnMetadata(COLUMNS, proto) as ColumnRecord[] | undefined) ?? []) {
      byField.set(record.field, record);
    }
  }
  return [...byField.values()];
}
