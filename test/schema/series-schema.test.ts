import { describe, expect, it } from "vitest";
import { Column, Entity, SchemaError } from "../../src/index.js";
import { getEntityModel } from "../../src/schema/entity-model.js";

function schemaError(define: () => unknown): SchemaError {
  try {
    define();
  } catch (error) {
    expect(error).toBeInstanceOf(SchemaError);
    return error as SchemaError;
  }
  throw new Error("expected a SchemaError");
}

describe("data series definitions", () => {
  it("names the slots prefix + slot number zero-padded to the width of N - 1", () => {
    @Entity({ table: "Series", partitionKey: "{id}", rowKey: "r" })
    class Series {
      @Column({ type: "String" }) id!: string;
      @Column({ type: "Int32", series: 1 }) one!: number[];
      @Column({ type: "Int32", series: 10 }) ten!: number[];
      @Column({ type: "Int32", series: 11, name: "E" }) eleven!: number[];
      @Column({ type: "Double", series: 101 }) many!: number[];
    }
    const model = getEntityModel(Series);
    const column = (field: string) => model.columnsByField.get(field)!;
    expect(column("one").properties).toEqual(["one0"]);
    expect(column("ten").properties).toEqual([
      "ten0",
      "ten1",
      "ten2",
      "ten3",
      "ten4",
      "ten5",
      "ten6",
      "ten7",
      "ten8",
      "ten9",
    ]);
    expect(column("eleven").properties.slice(0, 2)).toEqual(["E00", "E01"]);
    expect(column("eleven").properties.at(-1)).toBe("E10");
    expect(column("many").properties[7]).toBe("many007");
    expect(column("many").properties.at(-1)).toBe("many100");
    expect(column("many").series).toBe(101);
    expect(column("id").properties).toEqual(["id"]);
  });

  it.each([0, -1, 2.5, 252, Number.NaN, "24"])("rejects series: %s", (count) => {
    const error = schemaError(() => {
      @Entity({ table: "Series", partitionKey: "{id}", rowKey: "r" })
      class Bad {
        @Column({ type: "String" }) id!: string;
        @Column({ type: "Int32", series: count as number }) values!: number[];
      }
      return Bad;
    });
    expect(error.message).toMatch(/Bad\.values: series must be an integer from 1 to 251/);
  });

  it("accepts the largest series that fits beside the discriminator, and counts slots against the 252 limit", () => {
    @Entity({ table: "Series", partitionKey: "{id}", rowKey: "r" })
    class Largest {
      @Column({ type: "String" }) id!: string;
      @Column({ type: "Int32", series: 250 }) values!: number[];
    }
    expect(getEntityModel(Largest).columnsByField.get("values")?.properties).toHaveLength(250);
    const error = schemaError(() => {
      @Entity({ table: "Series", partitionKey: "{id}", rowKey: "r" })
      class TooMany {
        @Column({ type: "String" }) id!: string;
        @Column({ type: "Int32", series: 200 }) a!: number[];
        @Column({ type: "Int32", series: 51 }) b!: number[];
      }
      return TooMany;
    });
    expect(error.message).toMatch(/TooMany has 252 column properties .*at most 252/);
  });

  it("cannot be encrypted (a sealed value is bound to one property name)", () => {
    const error = schemaError(() => {
      @Entity({ table: "SecretSeries", partitionKey: "{id}", rowKey: "r" })
      class SecretSeries {
        @Column({ type: "String" }) id!: string;
        @Column({ type: "Int32", series: 4, encrypt: true }) hourly!: number[];
      }
      return SecretSeries;
    });
    expect(error.message).toContain("hourly");
    expect(error.message).toContain("encrypted");
  });

  it("needs an explicit type", () => {
    const error = schemaError(() => {
      @Entity({ table: "Series", partitionKey: "{id}", rowKey: "r" })
      class Untyped {
        @Column({ type: "String" }) id!: string;
        @Column({ series: 3 } as { type: "Int32"; series: number }) values!: number[];
      }
      return Untyped;
    });
    expect(error.message).toMatch(/Untyped\.values: a series needs its slots' type/);
  });

  it.each([
    [
      "partitionKey",
      { table: "Series", partitionKey: "{values}", rowKey: "r" },
      /Bad\.partitionKey: field 'values' is a data series/,
    ],
    [
      "rowKey",
      { table: "Series", partitionKey: "{id}", rowKey: "x_{values}" },
      /Bad\.rowKey: field 'values' is a data series/,
    ],
    [
      "a table template",
      { table: "Series{values:month}", partitionKey: "{id}", rowKey: "r" },
      /Bad: table: field 'values' is a data series/,
    ],
    [
      "an index key",
      { table: "Series", partitionKey: "{id}", rowKey: "r", indexes: { byValues: { rowKey: "v_{values}" } } },
      /Bad\.indexes\.byValues\.rowKey: field 'values' is a data series/,
    ],
    [
      "an index partition key",
      {
        table: "Series",
        partitionKey: "{id}",
        rowKey: "r",
        indexes: { byValues: { table: "ByValues", partitionKey: "{values}", rowKey: "{id}" } },
      },
      /Bad\.indexes\.byValues\.partitionKey: field 'values' is a data series/,
    ],
  ])("rejects a series in %s", (_where, options, message) => {
    const error = schemaError(() => {
      @Entity(options as { table: string; partitionKey: string; rowKey: string })
      class Bad {
        @Column({ type: "String" }) id!: string;
        @Column({ type: "DateTime", series: 3 }) values!: Date[];
      }
      return Bad;
    });
    expect(error.message).toMatch(message);
  });

  it("rejects slot names clashing with another column, and slot names too long", () => {
    const clash = schemaError(() => {
      @Entity({ table: "Series", partitionKey: "{id}", rowKey: "r" })
      class Clash {
        @Column({ type: "String" }) id!: string;
        @Column({ type: "Int32", series: 24 }) hourly!: number[];
        @Column({ type: "Int32" }) hourly07!: number;
      }
      return Clash;
    });
    expect(clash.message).toMatch(/'hourly' and 'hourly07' are both stored as property 'hourly07'/);
    const long = schemaError(() => {
      @Entity({ table: "Series", partitionKey: "{id}", rowKey: "r" })
      class Long {
        @Column({ type: "String" }) id!: string;
        @Column({ type: "Int32", series: 12, name: "x".repeat(254) }) values!: number[];
      }
      return Long;
    });
    expect(long.message).toMatch(/slot property 'x+11' is longer than 255 characters/);
  });
});
