import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { parseResource } from "../../src/server/resource-path.js";
import { testSeed } from "../support/seeded-random.js";

const SEED = testSeed(20261126);

describe(`parseResource (seed ${SEED})`, () => {
  test("reads back any keys written as (PartitionKey='…',RowKey='…') with '' escapes, encoded or not", () => {
    const key = fc.string({
      unit: fc.constantFrom("'", "a", "b", " ", "é", ",", "=", ")", "("),
      maxLength: 8,
    });
    fc.assert(
      fc.property(key, key, fc.boolean(), (partitionKey, rowKey, encoded) => {
        const quote = (k: string) => {
          const doubled = k.replaceAll("'", "''");
          return encoded ? encodeURIComponent(doubled) : doubled;
        };
        expect(parseResource(`t1(PartitionKey='${quote(partitionKey)}',RowKey='${quote(rowKey)}')`)).toEqual({
          kind: "entity",
          table: "t1",
          partitionKey,
          rowKey,
        });
      }),
      { seed: SEED, numRuns: 1000 },
    );
  });

  test("an unclosed or stray quote is not an entity address", () => {
    for (const path of ["t1(PartitionKey='p,RowKey='r')", "t1(PartitionKey='p'x,RowKey='r')", "Tables('a)"]) {
      expect(() => parseResource(path)).toThrow();
    }
  });
});
