import "reflect-metadata";
import { describe, expect, it } from "vitest";
import { Column, Entity, SchemaError } from "../../src/index.js";
import { getEntityModel } from "../../src/schema/entity-model.js";

function schemaError(define: () => unknown): SchemaError {
  try {
    define();
  } catch (error) {
    expect(error).toBeInstanceOf(SchemaError);
    expect((error as SchemaError).code).toBe("SCHEMA");
    return error as SchemaError;
  }
  throw new Error("expected a SchemaError");
}

describe("entity model", () => {
  it("resolves table, keys, columns and the discriminator", () => {
    @Entity({ table: "Employees", partitionKey: "{department}", rowKey: "empid_{employeeId:6}" })
    class Employee {
      @Column({ type: "String" }) department!: string;
      @Column({ type: "Int32" }) employeeId!: number;
      @Column({ type: "String", name: "FirstName" }) firstName!: string;
    }
    const model = getEntityModel(Employee);
    expect(model.table).toBe("Employees");
    expect(model.type).toBe("Employee");
    expect(model.version).toBe(1);
    expect(model.columns.map((c) => [c.field, c.property, c.type])).toEqual([
      ["department", "department", "String"],
      ["employeeId", "employeeId", "Int32"],
      ["firstName", "FirstName", "String"],
    ]);
    expect(model.rowKey.literalPrefix).toBe("empid_");
  });

  it("fails at definition time when a type cannot be inferred (no design:type, as under tsx/esbuild)", () => {
    const error = schemaError(() => {
      // Decorators applied by hand: exactly what runs when the compiler emitted no metadata.
      class Person {
        id!: string;
        nickname!: string;
      }
      Column({ type: "String" })(Person.prototype, "id");
      Column()(Person.prototype, "nickname");
      Entity({ table: "People", partitionKey: "{id}", rowKey: "p" })(Person);
    });
    expect(error.message).toContain("Person.nickname");
    expect(error.message).toContain("type");
  });

  it("infers the type from design:type metadata when tsc emitted it", () => {
    class Thing {
      id!: string;
      score!: number;
      at!: Date;
      big!: bigint;
      tags!: string[];
    }
    // What tsc's emitDecoratorMetadata would have recorded.
    Reflect.defineMetadata("design:type", String, Thing.prototype, "id");
    Reflect.defineMetadata("design:type", Number, Thing.prototype, "score");
    Reflect.defineMetadata("design:type", Date, Thing.prototype, "at");
    Reflect.defineMetadata("design:type", BigInt, Thing.prototype, "big");
    Reflect.defineMetadata("design:type", Array, Thing.prototype, "tags");
    for (const field of ["id", "score", "at", "big", "tags"]) Column()(Thing.prototype, field);
    Entity({ table: "Things", partitionKey: "{id}", rowKey: "thing" })(Thing);
    expect(getEntityModel(Thing).columns.map((c) => c.type)).toEqual([
      "String",
      "Double",
      "DateTime",
      "Int64",
      "Json",
    ]);
  });

  it("says a key's number was inferred as Double and how to key it (legacy decorators, issue 20)", () => {
    class Staff {
      department!: string;
      employeeId!: number;
    }
    // What tsc's emitDecoratorMetadata records for `@Column() employeeId!: number`.
    Reflect.defineMetadata("design:type", String, Staff.prototype, "department");
    Reflect.defineMetadata("design:type", Number, Staff.prototype, "employeeId");
    for (const field of ["department", "employeeId"]) Column()(Staff.prototype, field);
    const error = (() => {
      try {
        Entity({ table: "Staff", partitionKey: "{department}", rowKey: "empid_{employeeId:6}" })(Staff);
      } catch (e) {
        return e as Error;
      }
      throw new Error("expected a SchemaError");
    })();
    expect(error).toBeInstanceOf(SchemaError);
    expect(error.message).toContain("'employeeId' is a `number`");
    expect(error.message).toContain("infers as Double");
    expect(error.message).toContain('@Column({ type: "Int32" }) employeeId!: number');
  });

  it.each([
    ["an invalid table name", { table: "1bad", partitionKey: "{id}", rowKey: "r" }, "table name"],
    ["the reserved table name", { table: "tables", partitionKey: "{id}", rowKey: "r" }, "reserved"],
    ["an unknown template field", { table: "Things", partitionKey: "{nope}", rowKey: "r" }, "nope"],
    ["a bad format spec", { table: "Things", partitionKey: "{id}", rowKey: "{n:abc}" }, "n"],
    ["a non-key column type in a key", { table: "Things", partitionKey: "{id}", rowKey: "{ratio}" }, "ratio"],
    [
      "an index with an unknown field",
      { table: "Things", partitionKey: "{id}", rowKey: "r", indexes: { byX: { rowKey: "x_{nope}" } } },
      "nope",
    ],
    [
      "a same-partition index without a literal prefix",
      { table: "Things", partitionKey: "{id}", rowKey: "r", indexes: { byN: { rowKey: "{n:4}" } } },
      "prefix",
    ],
    [
      "an index projecting an unknown field",
      {
        table: "Things",
        partitionKey: "{id}",
        rowKey: "r",
        indexes: { byN: { rowKey: "n_{n:4}", project: ["zzz"] } },
      },
      "zzz",
    ],
    ["a bad version", { table: "Things", partitionKey: "{id}", rowKey: "r", version: 0 }, "version"],
  ])("rejects %s", (_label, options, mention) => {
    const error = schemaError(() => {
      class Thing {
        id!: string;
        n!: number;
        ratio!: number;
      }
      Column({ type: "String" })(Thing.prototype, "id");
      Column({ type: "Int32" })(Thing.prototype, "n");
      Column({ type: "Double" })(Thing.prototype, "ratio");
      Entity(options as never)(Thing);
    });
    expect(error.message).toContain(mention);
  });

  it("rejects duplicate stored property names and reserved names", () => {
    expect(
      schemaError(() => {
        class A {
          a!: string;
          b!: string;
        }
        Column({ type: "String", name: "Same" })(A.prototype, "a");
        Column({ type: "String", name: "Same" })(A.prototype, "b");
        Entity({ table: "Aaa", partitionKey: "{a}", rowKey: "r" })(A);
      }).message,
    ).toContain("Same");
    for (const reserved of ["PartitionKey", "Timestamp", "etag", "EntityType"]) {
      expect(
        schemaError(() => {
          class B {
            a!: string;
          }
          Column({ type: "String", name: reserved })(B.prototype, "a");
          Entity({ table: "Bbb", partitionKey: "p", rowKey: "r" })(B);
        }).message,
      ).toContain(reserved);
    }
  });

  it("rejects an unknown column type and an undecorated class", () => {
    expect(
      schemaError(() => {
        class C {
          a!: string;
        }
        Column({ type: "Float" as never })(C.prototype, "a");
        Entity({ table: "Ccc", partitionKey: "p", rowKey: "r" })(C);
      }).message,
    ).toContain("Float");
    class Plain {}
    expect(schemaError(() => getEntityModel(Plain)).message).toContain("Plain is not an entity");
  });

  it("inherits columns from a base class", () => {
    class Base {
      @Column({ type: "String" }) id!: string;
    }
    @Entity({ table: "Derived", partitionKey: "{id}", rowKey: "d" })
    class Derived extends Base {
      @Column({ type: "Int32" }) n!: number;
    }
    expect(getEntityModel(Derived).columns.map((c) => c.field)).toEqual(["id", "n"]);
  });
});
