import { describe, expect, it } from "vitest";
import { odata, ValidationError } from "../../src/index.js";
import { countComparisons } from "../../src/query/filter-comparisons.js";

describe("odata template", () => {
  it("renders each JS type as its typed OData literal", () => {
    expect(odata`a eq ${"x"}`).toBe("a eq 'x'");
    expect(odata`a eq ${5}`).toBe("a eq 5");
    expect(odata`a eq ${1.5}`).toBe("a eq 1.5");
    expect(odata`a eq ${5n}`).toBe("a eq 5L");
    expect(odata`a eq ${true}`).toBe("a eq true");
    expect(odata`a eq ${new Date(Date.UTC(2014, 6, 31, 18))}`).toBe(
      "a eq datetime'2014-07-31T18:00:00.000Z'",
    );
    expect(odata`a eq ${new Uint8Array([10, 27])}`).toBe("a eq X'0a1b'");
    expect(odata`a eq ${{ type: "Guid", value: "0f8fad5b-d9cb-469f-a165-70867728950e" }}`).toBe(
      "a eq guid'0f8fad5b-d9cb-469f-a165-70867728950e'",
    );
    expect(odata`a eq ${{ type: "Double", value: 5 }}`).toBe("a eq 5.0");
  });

  it("doubles quotes so user text stays inside its literal", () => {
    expect(odata`name eq ${"O'Brien"}`).toBe("name eq 'O''Brien'");
    expect(odata`name eq ${"x' or 'a' eq 'a"}`).toBe("name eq 'x'' or ''a'' eq ''a'");
    expect(countComparisons(odata`name eq ${"x' or 'a' eq 'a"}`)).toBe(1);
  });

  it("refuses values that cannot be literals", () => {
    expect(() => odata`a eq ${null as never}`).toThrow(ValidationError);
    expect(() => odata`a eq ${Number.NaN}`).toThrow(ValidationError);
    expect(() => odata`a eq ${{ type: "Guid", value: "x' or true or 'a" }}`).toThrow(ValidationError);
  });

  it("counts comparisons outside quoted text only", () => {
    expect(countComparisons("a eq 1 and (b gt 2 or c le 'eq ne')")).toBe(3);
    expect(countComparisons("not (Name eq 'it''s eq')")).toBe(1);
  });
});
