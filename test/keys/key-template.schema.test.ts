import { describe, expect, it } from "vitest";
import { SchemaError } from "../../src/errors.js";
import { template } from "./fields.js";

/** Expects parsing to fail with a SchemaError naming the template label and the given parts. */
function expectSchemaError(source: string, ...mentions: string[]): void {
  let caught: unknown;
  try {
    template(source, "Employee.rowKey");
  } catch (error) {
    caught = error;
  }
  expect(caught, source).toBeInstanceOf(SchemaError);
  const message = (caught as SchemaError).message;
  expect(message).toContain("Employee.rowKey");
  for (const mention of mentions) expect(message).toContain(mention);
}

describe("KeyTemplate.parse: schema mistakes", () => {
  it("rejects unbalanced braces", () => {
    expectSchemaError("empid_{employeeId", "unbalanced '{'");
    expectSchemaError("empid_employeeId}", "unbalanced '}'");
    expectSchemaError("{a{b}}", "unbalanced '{'");
    expectSchemaError("{n}}", "unbalanced '}'");
  });

  it("rejects an empty field name", () => {
    expectSchemaError("x_{}", "{}", "empty");
    expectSchemaError("x_{:6}", "{:6}", "empty");
  });

  it("rejects unknown fields and fields whose type cannot be in a key", () => {
    expectSchemaError("{nope}", "{nope}", "unknown field 'nope'");
    expectSchemaError("{score:6}", "{score:6}", "score", "cannot be part of a key");
    expectSchemaError("{active}", "{active}", "active", "cannot be part of a key");
  });

  it("rejects unknown formats", () => {
    expectSchemaError("{n:wide}", "{n:wide}", "unknown format ':wide'");
    expectSchemaError("{n:desc:6}", "{n:desc:6}", "unknown format");
    expectSchemaError("{n:6:asc}", "{n:6:asc}", "unknown format");
    expectSchemaError("{n:-6}", "{n:-6}", "unknown format");
    expectSchemaError("{at:iso8601}", "{at:iso8601}", "unknown format");
    expectSchemaError("{n:}", "{n:}", "unknown format");
  });

  it("rejects formats that do not fit the field type", () => {
    expectSchemaError("{email:6}", "{email:6}", "does not fit a String field");
    expectSchemaError("{id:desc}", "{id:desc}", "does not fit a Guid field");
    expectSchemaError("{n:ticks}", "{n:ticks}", "does not fit a Int32 field");
    expectSchemaError("{at:6}", "{at:6}", "does not fit a DateTime field");
    expectSchemaError("{at:6:desc}", "{at:6:desc}", "does not fit a DateTime field");
  });

  it("rejects widths of 0 or over the type's digits", () => {
    expectSchemaError("{n:0}", "{n:0}", "width 0", "1..10");
    expectSchemaError("{n:11}", "{n:11}", "width 11", "1..10");
    expectSchemaError("{big:20}", "{big:20}", "width 20", "1..19");
    expectSchemaError("{big:0:desc}", "{big:0:desc}", "width 0");
    expect(template("{n:10}").fields).toEqual(["n"]);
    expect(template("{big:19:desc}").fields).toEqual(["big"]);
  });

  it("rejects a field used twice", () => {
    expectSchemaError("{n:4}_{n:6}", "{n:6}", "'n' appears twice");
  });

  it("rejects a variable-width placeholder directly followed by another", () => {
    expectSchemaError("{department}{employeeId:6}", "{department}", "{employeeId:6}", "literal");
    expectSchemaError("x{email}{department}_", "{email}", "{department}");
    // A fixed-width first placeholder can be followed directly: its width marks where it ends.
    expect(template("{employeeId:6}{department}").fields).toEqual(["employeeId", "department"]);
    expect(template("{at}{n}{email}").fields).toEqual(["at", "n", "email"]);
  });

  it("rejects forbidden key characters in literal text", () => {
    expectSchemaError("emp/{n}", "U+002f", "forbidden");
    expectSchemaError("{n}\\x", "U+005c");
    expectSchemaError("{n}#", "U+0023");
    expectSchemaError("?{n}", "U+003f");
    expectSchemaError("a\u0001{n}", "U+0001");
    expectSchemaError("a\u0085{n}", "U+0085");
  });

  it("rejects templates whose fixed text alone exceeds the key size limit", () => {
    expectSchemaError(`${"x".repeat(503)}{n}`, "513 characters", "512");
    expect(template(`${"x".repeat(502)}{n}`).literalPrefix).toHaveLength(502);
  });

  it("accepts a template without placeholders (a constant key)", () => {
    const t = template("SINGLETON");
    expect(t.fields).toEqual([]);
    expect(t.decode("SINGLETON")).toEqual({});
    expect(t.decode("SINGLETONX")).toBeUndefined();
  });
});
