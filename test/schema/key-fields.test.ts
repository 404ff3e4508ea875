import { describe, expect, it } from "vitest";
import { Column, Entity, KEY_FIELDS, MemoryStore, TableContext, ValidationError } from "../../src/index.js";

// [KEY_FIELDS] is for the compiler only (test/types/key-arguments.ts): at run time the class, its rows
// and the checks are as without it, and a key that lacks a field is still refused before any request.

@Entity({ table: "KfStaff", partitionKey: "{department}", rowKey: "empid_{employeeId:6}" })
class Staff {
  declare readonly [KEY_FIELDS]?: "department" | "employeeId";
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "String" }) name!: string;
}

describe("[KEY_FIELDS]", () => {
  it("declares nothing at run time: the row and the entity hold the columns only", async () => {
    const store = new MemoryStore();
    const db = new TableContext({ store });
    await db.ensureTables(Staff);
    const staff = db.repository(Staff);
    await staff.insert(staff.create({ department: "Sales", employeeId: 7, name: "Jo" }));
    const row = await store.getEntity("KfStaff", "Sales", "empid_000007");
    const properties = Object.keys(row ?? {}).filter((k) => !["etag", "timestamp"].includes(k));
    expect(properties.sort()).toEqual(
      ["EntityType", "department", "employeeId", "name", "partitionKey", "rowKey"].sort(),
    );
    const read = await staff.getOrThrow({ department: "Sales", employeeId: 7 });
    expect(KEY_FIELDS in read).toBe(false);
    expect(read.name).toBe("Jo");
    // What the compiler refuses is refused at run time too.
    const missing = await staff.get({ department: "Sales" } as never).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ValidationError);
    expect((missing as ValidationError).rule).toBe("key-field-missing");
  });
});
