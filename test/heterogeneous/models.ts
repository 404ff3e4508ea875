import { Column, Entity } from "../../src/index.js";

/**
 * The design guide's heterogeneous partition: a department and its employees in one table and one
 * partition (so one transaction can span them), told apart by `EntityType`.
 */
@Entity({ table: "Staff", partitionKey: "{department}", rowKey: "dept", type: "Department" })
export class Department {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "String" }) name!: string;
  @Column({ type: "String" }) manager!: string;
  @Column({ type: "Double" }) budget!: number;
}

@Entity({ table: "Staff", partitionKey: "{department}", rowKey: "empid_{employeeId:6}", type: "Employee" })
export class StaffEmployee {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "String" }) name!: string;
  @Column({ type: "Int32" }) age!: number;
}

/** A third type whose RowKey space (no literal prefix) covers the whole partition: only EntityType tells it apart. */
@Entity({ table: "Staff", partitionKey: "{department}", rowKey: "{noteId}", type: "Note" })
export class Note {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "String" }) noteId!: string;
  @Column({ type: "String" }) text!: string;
}

export function department(name: string, values: Partial<Department> = {}): Department {
  return Object.assign(new Department(), {
    department: name,
    name: `${name} department`,
    manager: "Jones",
    budget: 1000.5,
    ...values,
  });
}

export function staff(
  departmentName: string,
  employeeId: number,
  values: Partial<StaffEmployee> = {},
): StaffEmployee {
  return Object.assign(new StaffEmployee(), {
    department: departmentName,
    employeeId,
    name: `Person ${employeeId}`,
    age: 20 + employeeId,
    ...values,
  });
}

export function note(departmentName: string, noteId: string, text = `note ${noteId}`): Note {
  return Object.assign(new Note(), { department: departmentName, noteId, text });
}

/** Version 1 of a person: one `name` column. */
@Entity({ table: "People", partitionKey: "{team}", rowKey: "p_{id}", type: "Person" })
export class PersonV1 {
  @Column({ type: "String" }) team!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "String" }) name!: string;
  @Column({ type: "Int32" }) age!: number;
}

/** Calls of PersonV2's upcaster, so tests can see which rows went through it. */
export const upcastCalls: Array<{ fromVersion: number; properties: Record<string, unknown> }> = [];

/** Version 2: `name` split into first and last name, `age` kept, `tags` added (Json). */
@Entity({
  table: "People",
  partitionKey: "{team}",
  rowKey: "p_{id}",
  type: "Person",
  version: 2,
  upcast: (properties, fromVersion) => {
    upcastCalls.push({ fromVersion, properties: { ...properties } });
    if (fromVersion >= 2) return properties;
    const { name, ...rest } = properties;
    const [firstName = "", ...last] = String(name ?? "").split(" ");
    return { ...rest, firstName, lastName: last.join(" "), tags: ["migrated"] };
  },
})
export class PersonV2 {
  @Column({ type: "String" }) team!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "String" }) firstName!: string;
  @Column({ type: "String" }) lastName!: string;
  @Column({ type: "Int32" }) age!: number;
  @Column({ type: "Json" }) tags?: string[];
}

/** Version 2 without an upcaster: older rows map as they are. */
@Entity({ table: "People", partitionKey: "{team}", rowKey: "p_{id}", type: "Person", version: 2 })
export class PersonV2Plain {
  @Column({ type: "String" }) team!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "String" }) firstName?: string;
  @Column({ type: "String" }) name?: string;
  @Column({ type: "Int32" }) age!: number;
}

/** Version 3, to write rows newer than PersonV2 knows. */
@Entity({ table: "People", partitionKey: "{team}", rowKey: "p_{id}", type: "Person", version: 3 })
export class PersonV3 {
  @Column({ type: "String" }) team!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "String" }) firstName!: string;
  @Column({ type: "String" }) lastName!: string;
  @Column({ type: "Int32" }) age!: number;
  @Column({ type: "String" }) nickname!: string;
}

/** A log tail with a tie-breaker: newest first, same-millisecond entities distinct by id. */
@Entity({ table: "Activity", partitionKey: "{user}", rowKey: "{at:desc}_{id}" })
export class Activity {
  @Column({ type: "String" }) user!: string;
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Int32" }) seq!: number;
}

/** A log tail without a tie-breaker: the RowKey ends at the descending placeholder. */
@Entity({ table: "Ticks", partitionKey: "{stream}", rowKey: "{at:desc}" })
export class Tick {
  @Column({ type: "String" }) stream!: string;
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "Int32" }) value!: number;
}

/** A log tail on a descending integer, behind a literal prefix. */
@Entity({ table: "Revisions", partitionKey: "{doc}", rowKey: "rev_{revision:10:desc}" })
export class Revision {
  @Column({ type: "String" }) doc!: string;
  @Column({ type: "Int32" }) revision!: number;
  @Column({ type: "String" }) text!: string;
}
