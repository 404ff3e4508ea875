import { describe, expect, it } from "vitest";
import { Column, Entity, type EntityOptions, SchemaError } from "../../src/index.js";
import { getEntityModel } from "../../src/schema/entity-model.js";

/** Defines a small entity with this `expiresAt` (typed loosely: the run-time checks are under test). */
function define(expiresAt: unknown, extra: Partial<EntityOptions> = {}) {
  @Entity({
    table: "Grants",
    partitionKey: "{owner}",
    rowKey: "g_{id}",
    ...extra,
    expiresAt,
  } as EntityOptions)
  class Grant {
    @Column({ type: "String" }) owner!: string;
    @Column({ type: "String" }) id!: string;
    @Column({ type: "DateTime" }) until?: Date;
    @Column({ type: "DateTime", encrypt: true }) secretUntil?: Date;
    @Column({ type: "Int64" }) untilTicks?: bigint;
    @Column({ type: "String" }) note?: string;
  }
  return Grant;
}

function schemaError(expiresAt: unknown, extra: Partial<EntityOptions> = {}): string {
  try {
    define(expiresAt, extra);
  } catch (error) {
    expect(error).toBeInstanceOf(SchemaError);
    return (error as SchemaError).message;
  }
  throw new Error("expected a SchemaError");
}

describe("expiresAt in the entity model", () => {
  it("names a DateTime column and adds a sparse expiry index in a tablekit table", () => {
    const model = getEntityModel(define("until"));
    expect(model.expiry).toEqual({ field: "until", property: "until" });
    const index = model.indexes.get("~expiry");
    expect(index?.table).toBe("TablekitExpiry");
    expect(index?.intraPartition).toBe(false);
    expect(index?.partitionKey.source).toBe("Grant~{until:ticks}~{owner}");
    expect(index?.when?.({ owner: "a", id: "1" } as never)).toBe(false);
    expect(index?.when?.({ owner: "a", id: "1", until: new Date(0) } as never)).toBe(true);
  });

  it("makes index projections carry the expiry, so lookups can hide expired copies", () => {
    const model = getEntityModel(
      define("until", {
        indexes: {
          byNote: { table: "GrantsByNote", partitionKey: "{note}", rowKey: "{id}", project: ["note"] },
        },
      }),
    );
    expect(model.indexes.get("byNote")?.project).toEqual(["note", "until"]);
  });

  it("refuses what cannot expire, saying why", () => {
    expect(schemaError("missing")).toMatch(/'missing', which is not a column/);
    expect(schemaError("untilTicks")).toMatch(/Int64 column; expiry needs a DateTime column/);
    expect(schemaError("note")).toMatch(/String column/);
    expect(schemaError("secretUntil")).toMatch(/encrypted column 'secretUntil'.*cannot be encrypted/);
    expect(schemaError("until", { wide: true })).toMatch(/wide entity keeps no indexes/);
    expect(schemaError(42)).toMatch(/name a DateTime column/);
  });
});
