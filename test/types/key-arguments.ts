import { expectTypeOf } from "vitest";
import { Column, Entity, KEY_FIELDS, type KeyValues, MemoryStore, TableContext } from "../../src/index.js";
import { Employee } from "./surface-fixtures.js";

// Key arguments of an entity that declares its key fields ([KEY_FIELDS]) must hold every one of them.

@Entity({ table: "Staff", partitionKey: "{department}", rowKey: "empid_{employeeId:6}" })
class Staff {
  declare readonly [KEY_FIELDS]?: "department" | "employeeId";
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "String" }) name!: string;
  @Column({ type: "Int32" }) age?: number;
}

const db = new TableContext({ store: new MemoryStore() });
const staff = db.repository(Staff);
const department = "Sales";
const key = { department, employeeId: 223 };

expectTypeOf(staff.get(key)).toEqualTypeOf<Promise<Staff | undefined>>();
staff.get({ department, employeeId: 223, name: "extra fields are fine" });
staff.get(new Staff()); // an entity is its own key
// @ts-expect-error the RowKey needs employeeId
staff.get({ department });
// @ts-expect-error the PartitionKey needs department
staff.getOrThrow({ employeeId: 223 });
// @ts-expect-error with select too
staff.get({ department }, { select: ["name"] });
// @ts-expect-error a key field cannot be undefined
staff.get({ department, employeeId: undefined });
// @ts-expect-error employeeId is a number
staff.get({ department, employeeId: "223" });
// @ts-expect-error every key of getMany
staff.getMany([key, { department }]);
// @ts-expect-error delete
staff.delete({ department });
// @ts-expect-error patch
staff.patch({ department }, { age: 31 });
staff.patch(key, { age: 31 });
// @ts-expect-error mutate
staff.mutate({ department }, (s) => s);
// @ts-expect-error bulkDelete
staff.bulkDelete([key, { employeeId: 1 }]);
staff.bulkDelete([key, key]);
db.transaction((tx) => {
  tx.delete(Staff, key);
  // @ts-expect-error a transaction's delete
  tx.delete(Staff, { department });
});
db.eventually((tx) => {
  // @ts-expect-error an eventual transaction's delete
  tx.delete(Staff, { department });
});

expectTypeOf<KeyValues<Staff>>().toMatchTypeOf<{ department: string; employeeId: number }>();

// An entity that declares no key fields (every entity before [KEY_FIELDS]) keeps Partial keys,
// checked at run time.
const employees = db.repository(Employee);
employees.get({ department });
employees.delete({ employeeId: 1 });
expectTypeOf<KeyValues<Employee>>().toEqualTypeOf<Partial<Employee>>();

// @Entity checks the declaration against the key templates: a field missing from it…
// @ts-expect-error [KEY_FIELDS] lacks employeeId
@Entity({ table: "Staff", partitionKey: "{department}", rowKey: "empid_{employeeId:6}" })
class MissingKeyField {
  declare readonly [KEY_FIELDS]?: "department";
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
}

// …or one the templates do not read.
// @ts-expect-error name is no key field
@Entity({ table: "Staff", partitionKey: "{department}", rowKey: "empid_{employeeId:6}" })
class ExtraKeyField {
  declare readonly [KEY_FIELDS]?: "department" | "employeeId" | "name";
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "String" }) name!: string;
}

// A table per period: the period field is a key field too (it names the table).
@Entity({ table: "Visits{at:month}", partitionKey: "{site}", rowKey: "{id}" })
class Visit {
  declare readonly [KEY_FIELDS]?: "site" | "id" | "at";
  @Column({ type: "String" }) site!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "DateTime" }) at!: Date;
}
const visits = db.repository(Visit);
visits.get({ site: "a", id: "1", at: new Date() });
// @ts-expect-error the table needs at
visits.get({ site: "a", id: "1" });

export { ExtraKeyField, MissingKeyField };
