import "reflect-metadata";
import { describe, expect, it } from "vitest";
import { Column, Entity, type EntityOptions, SchemaError } from "../../src/index.js";
import { getEntityModel } from "../../src/schema/entity-model.js";

/** Defines a small entity with these summaries (options typed loosely: the run-time checks are under test). */
function define(summaries: unknown, extra: Partial<EntityOptions> = {}) {
  @Entity({
    table: "Staff",
    partitionKey: "{team}",
    rowKey: "id_{id}",
    ...extra,
    summaries: summaries as EntityOptions["summaries"],
  } as EntityOptions)
  class Staff {
    @Column({ type: "String" }) team!: string;
    @Column({ type: "String" }) id!: string;
    @Column({ type: "Int32" }) salary!: number;
    @Column({ type: "Int64" }) big!: bigint;
    @Column({ type: "Double" }) rate!: number;
    @Column({ type: "String" }) name!: string;
    @Column({ type: "String" }) email!: string;
    @Column({ type: "Int32", series: 4 }) hourly!: Array<number | undefined>;
  }
  return Staff;
}

function schemaError(summaries: unknown, extra: Partial<EntityOptions> = {}): string {
  try {
    define(summaries, extra);
  } catch (error) {
    expect(error).toBeInstanceOf(SchemaError);
    return (error as SchemaError).message;
  }
  throw new Error("expected a SchemaError");
}

describe("summaries in the entity model", () => {
  it("resolves count and sums with their columns", () => {
    const model = getEntityModel(
      define({
        perTeam: { rowKey: "summary", count: "n", sum: { salary: "payroll", big: "bigs", rate: "rates" } },
      }),
    );
    const summary = model.summaries.get("perTeam");
    expect(summary?.rowKey).toBe("summary");
    expect(summary?.count).toBe("n");
    expect(summary?.sums.map((s) => [s.column.field, s.column.type, s.target])).toEqual([
      ["salary", "Int32", "payroll"],
      ["big", "Int64", "bigs"],
      ["rate", "Double", "rates"],
    ]);
    expect(getEntityModel(define(undefined)).summaries.size).toBe(0);
  });

  it.each([
    [
      "a non-numeric column",
      { s: { rowKey: "summary", sum: { name: "names" } } },
      "only Int32, Int64 and Double",
    ],
    ["an unknown column", { s: { rowKey: "summary", sum: { nope: "x" } } }, "unknown field 'nope'"],
    [
      "two values under one name",
      { s: { rowKey: "summary", count: "n", sum: { salary: "n" } } },
      "names two values",
    ],
    ["a reserved name", { s: { rowKey: "summary", count: "RowKey" } }, "reserved"],
    ["a library name", { s: { rowKey: "summary", count: "_tkCount" } }, "reserved"],
    ["an invalid name", { s: { rowKey: "summary", count: "not valid" } }, "property name"],
    ["nothing to keep", { s: { rowKey: "summary" } }, "give count and/or sum"],
    ["no rowKey", { s: { count: "n" } }, "rowKey"],
    ["a template rowKey", { s: { rowKey: "sum_{team}", count: "n" } }, "literal"],
    ["a forbidden key character", { s: { rowKey: "a/b", count: "n" } }, "not a valid RowKey"],
    [
      "a rowKey in the entity's RowKey space",
      { s: { rowKey: "id_summary", count: "n" } },
      "could be an entity's RowKey",
    ],
    [
      "two summaries on one row",
      { a: { rowKey: "sum", count: "n" }, b: { rowKey: "sum", count: "m" } },
      "also the RowKey",
    ],
    [
      "a remote partitionKey with an unknown field",
      { s: { rowKey: "sum", partitionKey: "{nope}", count: "n" } },
      "unknown field 'nope'",
    ],
    [
      "a remote partitionKey with a field outside the entity's partitionKey",
      { s: { rowKey: "sum", partitionKey: "{name}", count: "n" } },
      "not a field of the entity's partitionKey",
    ],
    [
      "a remote partitionKey with a data series",
      { s: { rowKey: "sum", partitionKey: "{hourly}", count: "n" } },
      "data series",
    ],
    [
      "a remote partitionKey with a bad template",
      { s: { rowKey: "sum", partitionKey: "{team", count: "n" } },
      "partitionKey",
    ],
    [
      "a remote table without partitionKey",
      { s: { rowKey: "sum", table: "Totals", count: "n" } },
      "required",
    ],
    [
      "an invalid remote table",
      { s: { rowKey: "sum", partitionKey: "all", table: "no-good", count: "n" } },
      "not a valid table name",
    ],
    [
      "a remote rowKey with a forbidden character",
      { s: { rowKey: "a#b", partitionKey: "all", count: "n" } },
      "not a valid RowKey prefix",
    ],
    [
      "a remote summary whose rows could take a local summary's RowKey",
      { a: { rowKey: "sum", partitionKey: "all", count: "n" }, b: { rowKey: "sum~x", count: "m" } },
      "could take summary b's RowKey",
    ],
    [
      "a remote summary on a local summary's RowKey",
      { a: { rowKey: "sum", partitionKey: "all", count: "n" }, b: { rowKey: "sum", count: "m" } },
      "could take summary b's RowKey",
    ],
    ["a reserved rowKey", { s: { rowKey: "~tksum~x", count: "n" } }, "reserves"],
    ["a bad summary name", { "not-id": { rowKey: "sum", count: "n" } }, "identifiers"],
  ])("%s is a SchemaError", (_, summaries, message) => {
    expect(schemaError(summaries)).toContain(message);
  });

  it("resolves a summary in another partition: the template, the table (default the entity's) and a hidden local row", () => {
    const model = getEntityModel(
      define({
        all: { rowKey: "staff", partitionKey: "totals", table: "Totals", count: "n" },
        perTeam: { rowKey: "team", partitionKey: "t_{team}", count: "n", sum: { salary: "payroll" } },
        here: { rowKey: "summary", count: "n" },
      }),
    );
    const all = model.summaries.get("all");
    expect(all?.remote?.table).toBe("Totals");
    expect(all?.remote?.rowKey).toBe("staff");
    expect(all?.remote?.partitionKey.encode({}, "PartitionKey")).toBe("totals");
    expect(all?.rowKey).not.toBe("staff");
    const perTeam = model.summaries.get("perTeam");
    expect(perTeam?.remote?.table).toBe("Staff");
    expect(perTeam?.remote?.partitionKey.encode({ team: "a" }, "PartitionKey")).toBe("t_a");
    expect(model.summaries.get("here")?.remote).toBeUndefined();
  });

  it("refuses a summary in another partition with an encrypted or hashed field; on period entities it needs its own table", () => {
    expect(() => {
      @Entity({
        table: "Secret",
        partitionKey: "{team}",
        rowKey: "{id}",
        summaries: { s: { rowKey: "sum", partitionKey: "{code}", count: "n" } },
      })
      class Secret {
        @Column({ type: "String" }) team!: string;
        @Column({ type: "String" }) id!: string;
        @Column({ type: "String", encrypt: true }) code!: string;
      }
      return Secret;
    }).toThrow(/encrypted column 'code'/);
    expect(
      schemaError({ s: { rowKey: "sum", partitionKey: "{id}", count: "n" } }, {
        partitionKey: "{team}_{id:hash:4}",
      } as Partial<EntityOptions>),
    ).toContain("not a field of the entity's partitionKey");
    // With indexes it composes (issue 18): the summary's intent and mirror are steps of each write's plan.
    expect(() =>
      define(
        { s: { rowKey: "sum", partitionKey: "all", count: "n" } },
        { indexes: { byName: { table: "StaffByName", partitionKey: "{name}", rowKey: "{team}_{id}" } } },
      ),
    ).not.toThrow();
    // A table per period composes (issue 18): every period's partitions add up in the summary's own table.
    @Entity({
      table: "Logs{at:month}",
      partitionKey: "{device}",
      rowKey: "{id}",
      summaries: { s: { rowKey: "sum", partitionKey: "all", table: "LogTotals", count: "n" } },
    })
    class Log {
      @Column({ type: "String" }) device!: string;
      @Column({ type: "String" }) id!: string;
      @Column({ type: "DateTime" }) at!: Date;
    }
    expect(getEntityModel(Log).summaries.get("s")?.remote?.table).toBe("LogTotals");
    expect(() => {
      @Entity({
        table: "Logs{at:month}",
        partitionKey: "{device}",
        rowKey: "{id}",
        summaries: { s: { rowKey: "sum", partitionKey: "all", count: "n" } },
      })
      class LogWithoutTable {
        @Column({ type: "String" }) device!: string;
        @Column({ type: "String" }) id!: string;
        @Column({ type: "DateTime" }) at!: Date;
      }
      return LogWithoutTable;
    }).toThrow(/table per period .*adds up every period: give it a table of its own/);
  });

  it("refuses summing a data series (an array, not one number)", () => {
    expect(schemaError({ s: { rowKey: "sum", sum: { hourly: "total" } } })).toContain("data series");
  });

  it("is accepted on wide entities (summary rows ride in the entity's transaction)", () => {
    expect(() =>
      define({ s: { rowKey: "sum", count: "n" } }, { wide: true } as Partial<EntityOptions>),
    ).not.toThrow();
  });

  it("is accepted with indexes in the same partition and elsewhere", () => {
    const model = getEntityModel(
      define(
        { s: { rowKey: "summary", count: "n" } },
        {
          indexes: {
            byEmail: { rowKey: "email_{email}", unique: true },
            byName: { table: "StaffByName", partitionKey: "{name}", rowKey: "{team}_{id}" },
          },
        },
      ),
    );
    expect(model.summaries.get("s")?.rowKey).toBe("summary");
    expect(model.indexes.size).toBe(2);
  });

  it.each([
    ["a copy", { byName: { rowKey: "su{name}" } }],
    ["a list index entity", { byName: { list: true, rowKey: "su{name}" } }],
  ])("is refused where %s in the same partition could take the summary's RowKey", (_, indexes) => {
    expect(
      schemaError({ s: { rowKey: "summary", count: "n" } }, { indexes } as Partial<EntityOptions>),
    ).toContain("could be the RowKey of a row of index byName ('su{name}')");
  });
});
