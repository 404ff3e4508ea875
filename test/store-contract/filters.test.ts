import { beforeAll, describe, expect, test } from "vitest";
import type { TableStore } from "../../src/store/table-store.js";
import { expectStoreError, readAll, skipAzuriteDeviations, storeKinds, storeWithTable } from "./contract.js";

describe.each(storeKinds)("store contract (filters) on $name", (kind) => {
  skipAzuriteDeviations(kind);

  const GUID = "3f2504e0-4f89-11d3-9a0c-0305e82c3301";
  let store: TableStore;

  /** RowKeys of the entities a filter selects. */
  async function match(filter: string): Promise<string[]> {
    return (await readAll(store, "Things", { filter })).items.map((e) => e.rowKey);
  }

  beforeAll(async () => {
    store = await storeWithTable(kind);
    const rows = [
      {
        rowKey: "r1",
        name: "O'Brien",
        age: 30,
        score: 1.5,
        big: 5_000_000_000n,
        active: true,
        born: new Date("2014-07-31T18:00:00Z"),
        id: { type: "Guid" as const, value: GUID },
        bytes: new Uint8Array([0x0a, 0x1b]),
      },
      {
        rowKey: "r2",
        name: "Smith",
        age: 40,
        score: 2,
        big: 7n,
        active: false,
        born: new Date("2000-01-01T00:00:00Z"),
      },
      { rowKey: "r3", name: "x' or 'a' eq 'a", age: 50, tag: "only here" },
      { rowKey: "r4", name: "smith", ageText: "30", age: { type: "Double" as const, value: 30 } },
      { rowKey: "r5" },
    ];
    for (const row of rows) await store.insert("Things", { partitionKey: "p", ...row });
  });

  describe("literals", () => {
    test("strings, with doubled quotes for a quote", async () => {
      expect(await match("name eq 'Smith'")).toEqual(["r2"]);
      expect(await match("name eq 'O''Brien'")).toEqual(["r1"]);
      expect(await match("name eq ''")).toEqual([]);
    });

    test("an injection attempt, quoted properly, matches only itself", async () => {
      const attack = "x' or 'a' eq 'a";
      const quoted = `'${attack.replaceAll("'", "''")}'`;
      expect(await match(`name eq ${quoted}`)).toEqual(["r3"]);
    });

    test("Int32, Int64 (L), Double (fraction, exponent, .0)", async () => {
      expect(await match("age eq 40")).toEqual(["r2"]);
      expect(await match("big eq 5000000000L")).toEqual(["r1"]);
      expect(await match("big eq 7L")).toEqual(["r2"]);
      expect(await match("score eq 1.5")).toEqual(["r1"]);
      expect(await match("score eq 2.0")).toEqual(["r2"]);
      expect(await match("score lt 1e1")).toEqual(["r1", "r2"]);
      expect(await match("score gt 15e-1")).toEqual(["r2"]);
      expect(await match("age gt -1")).toEqual(["r1", "r2", "r3", "r4"]);
    });

    test("booleans", async () => {
      expect(await match("active eq true")).toEqual(["r1"]);
      expect(await match("active eq false")).toEqual(["r2"]);
      expect(await match("active ne true")).toEqual(["r2"]);
    });

    test("datetime'…' with and without fraction", async () => {
      expect(await match("born eq datetime'2014-07-31T18:00:00Z'")).toEqual(["r1"]);
      expect(await match("born eq datetime'2014-07-31T18:00:00.000Z'")).toEqual(["r1"]);
      expect(await match("born lt datetime'2014-07-31T18:00:00.0000001Z'")).toEqual(["r1", "r2"]);
      expect(await match("born gt datetime'2000-01-01T00:00:00Z'")).toEqual(["r1"]);
    });

    test("guid'…' compares case-insensitively (as lower-case text)", async () => {
      expect(await match(`id eq guid'${GUID}'`)).toEqual(["r1"]);
      expect(await match(`id eq guid'${GUID.toUpperCase()}'`)).toEqual(["r1"]);
      expect(await match(`id ne guid'00000000-0000-0000-0000-000000000000'`)).toEqual(["r1"]);
    });

    test("X'…' and binary'…' compare bytewise", async () => {
      expect(await match("bytes eq X'0a1b'")).toEqual(["r1"]);
      expect(await match("bytes eq binary'0A1B'")).toEqual(["r1"]);
      expect(await match("bytes gt X'0a'")).toEqual(["r1"]);
      expect(await match("bytes lt X'0a1c'")).toEqual(["r1"]);
      expect(await match("bytes lt X'0a1b'")).toEqual([]);
    });

    test("literal on the left is flipped", async () => {
      expect(await match("35 lt age")).toEqual(["r2", "r3"]);
      expect(await match("'Smith' eq name")).toEqual(["r2"]);
    });

    test("system properties PartitionKey, RowKey and Timestamp", async () => {
      expect(await match("RowKey ge 'r4'")).toEqual(["r4", "r5"]);
      expect(await match("PartitionKey eq 'p' and RowKey eq 'r2'")).toEqual(["r2"]);
      expect(await match("Timestamp gt datetime'2020-01-01T00:00:00Z'")).toHaveLength(5);
      expect(await match("Timestamp lt datetime'2020-01-01T00:00:00Z'")).toEqual([]);
    });
  });

  describe("logic", () => {
    test("and, or, not, parentheses", async () => {
      expect(await match("age ge 30 and age le 40")).toEqual(["r1", "r2", "r4"]);
      expect(await match("name eq 'Smith' or name eq 'smith'")).toEqual(["r2", "r4"]);
      expect(await match("not (age eq 30)")).toEqual(["r2", "r3", "r5"]);
      expect(await match("not age eq 30")).toEqual(["r2", "r3", "r5"]);
      expect(await match("not not (age eq 30)")).toEqual(["r1", "r4"]);
      expect(await match("((age eq 30))")).toEqual(["r1", "r4"]);
    });

    test("bare true and false are expressions (as .NET predicate builders send them)", async () => {
      expect(await match("false")).toEqual([]);
      expect(await match("true")).toEqual(["r1", "r2", "r3", "r4", "r5"]);
      expect(await match("(true and RowKey eq 'r2') or (false or RowKey eq 'r4')")).toEqual(["r2", "r4"]);
      expect(await match("not false and age eq 30")).toEqual(["r1", "r4"]);
      // A Boolean property still needs a comparison: only the constants stand alone.
      expect(await match("active eq true")).toEqual(["r1"]);
    });

    test("Boolean literals in any case (Azurite #1947: as Azure accepts them)", async () => {
      expect(await match("active eq True")).toEqual(["r1"]);
      expect(await match("active eq tRUE")).toEqual(["r1"]);
      expect(await match("FALSE or RowKey eq 'r2'")).toEqual(["r2"]);
    });

    test("and binds tighter than or", async () => {
      // = RowKey eq 'r1' or (RowKey eq 'r2' and age eq 99)
      expect(await match("RowKey eq 'r1' or RowKey eq 'r2' and age eq 99")).toEqual(["r1"]);
      expect(await match("(RowKey eq 'r1' or RowKey eq 'r2') and age eq 99")).toEqual([]);
      // = (age eq 99 and RowKey eq 'r1') or RowKey eq 'r2'
      expect(await match("age eq 99 and RowKey eq 'r1' or RowKey eq 'r2'")).toEqual(["r2"]);
    });

    test("strings compare ordinally and case-sensitively", async () => {
      expect(await match("name eq 'smith'")).toEqual(["r4"]);
      expect(await match("name ge 'S' and name lt 'T'")).toEqual(["r2"]);
      expect(await match("name gt 'Z'")).toEqual(["r3", "r4"]); // lower case sorts after upper case
    });
  });

  describe("the service's comparison rules", () => {
    test("a comparison against a missing property is false, for eq and ne alike", async () => {
      expect(await match("tag eq 'only here'")).toEqual(["r3"]);
      expect(await match("tag ne 'only here'")).toEqual([]);
      expect(await match("tag ne 'something else'")).toEqual(["r3"]);
      expect(await match("nothing ne 1")).toEqual([]);
      // not() negates the outcome: entities without the property match the negated comparison.
      expect(await match("not (tag eq 'only here')")).toEqual(["r1", "r2", "r4", "r5"]);
    });

    test("a comparison whose constant has another type is false (also ne)", async () => {
      expect(await match("age eq '30'")).toEqual([]);
      expect(await match("age ne '30'")).toEqual([]);
      expect(await match("ageText eq 30")).toEqual([]);
      expect(await match("ageText eq '30'")).toEqual(["r4"]);
      expect(await match("active eq 1")).toEqual([]);
      expect(await match("born eq '2014-07-31T18:00:00Z'")).toEqual([]);
      expect(await match(`id eq '${GUID}'`)).toEqual([]);
      expect(await match("PartitionKey eq 1")).toEqual([]);
      expect(await match("PartitionKey ne 1")).toEqual([]);
    });

    test("Int32 and Double compare by value; Int64 only with Int64 literals (as Azurite also answers)", async () => {
      expect(await match("age eq 30")).toEqual(["r1", "r4"]); // Int32 30 and Double 30
      expect(await match("age eq 30.0")).toEqual(["r1", "r4"]);
      expect(await match("age eq 30L")).toEqual([]);
      expect(await match("big gt 4999999999L")).toEqual(["r1"]);
      expect(await match("big eq 7L")).toEqual(["r2"]);
      expect(await match("big eq 7")).toEqual([]);
      expect(await match("big lt 7.5")).toEqual([]);
      expect(await match("score lt 2L")).toEqual([]);
    });
  });

  describe("errors", () => {
    test.each([
      ["name eq", "expected a property name or a constant"],
      ["name 'x'", "expected a comparison operator"],
      ["name EQ 'x'", "operators are lower-case"],
      ["name eq 'x' AND age eq 1", "expected 'and', 'or'"],
      ["(name eq 'x'", "expected ')'"],
      ["name eq 'x')", "expected 'and', 'or'"],
      ["name eq 'unterminated", "unterminated"],
      ["name eq age", "one property and one constant"],
      ["1 eq 1", "one property and one constant"],
      ["active", "expected a comparison operator"],
      ["name eq null", "null"],
      ["born eq datetime'2014-13-01T00:00:00Z'", "not a valid date-time"],
      ["id eq guid'xyz'", "not a valid GUID"],
      ["bytes eq X'abc'", "not valid hex"],
      ["v eq time'10:00'", "unknown literal prefix"],
      ["age eq 12abc", "malformed number"],
      ["age eq 1.5L", "whole number"],
      ["big eq 9223372036854775808L", "out of range"],
      ["age eq $", "unexpected character"],
    ])("%j is 400 InvalidInput", async (filter, message) => {
      const error = await expectStoreError(store.queryPage("Things", { filter }), 400, "InvalidInput");
      expect(error.message).toContain(message);
    });

    // Not an error: a blank $filter is no filter, as an empty query option is no option (Storage
    // Explorer sends `$select=` with nothing selected, the request of Azurite #1428).
    test.each(["", "   "])("%j is no filter: every entity, like an absent $filter", async (filter) => {
      const all = (await readAll(store, "Things")).items.map((e) => e.rowKey);
      expect(all).toHaveLength(5);
      expect(await match(filter)).toEqual(all);
    });

    test("a filter that is not a string is 400 InvalidInput", async () => {
      await expectStoreError(
        store.queryPage("Things", { filter: 5 as unknown as string }),
        400,
        "InvalidInput",
      );
    });

    test("15 comparisons are allowed, 16 are rejected", async () => {
      const clauses = (n: number) => Array.from({ length: n }, (_, i) => `age ne ${i + 1000}`).join(" and ");
      expect(await match(clauses(15))).toEqual(["r1", "r2", "r3", "r4"]);
      const error = await expectStoreError(
        store.queryPage("Things", { filter: clauses(16) }),
        400,
        "InvalidInput",
      );
      expect(error.message).toContain("at most 15");
      const nested = `not (${clauses(8)}) or (${clauses(8)})`;
      await expectStoreError(store.queryPage("Things", { filter: nested }), 400, "InvalidInput");
    });
  });
});
