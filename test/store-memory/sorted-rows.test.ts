import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { PropertyShape } from "../../src/store/memory/property-shape.js";
import { compareToComposite, SortedRows } from "../../src/store/memory/sorted-rows.js";
import { StoredRecord } from "../../src/store/memory/typed-entity.js";

const key = fc.string({ unit: fc.constantFrom("a", "b", "é", "😀", "A", " ", "~"), maxLength: 3 });
const ordinal = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const row = (pk: string, rk: string, tag = 0) =>
  new StoredRecord(pk, rk, 0n, "", { shape: PropertyShape.EMPTY.with("tag", "Int32"), values: [tag] });

type Command =
  | { op: "set"; pk: string; rk: string; tag: number }
  | { op: "delete"; pk: string; rk: string }
  | { op: "get"; pk: string; rk: string }
  | { op: "from"; pk: string; rk: string; between: boolean };

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ op: fc.constant("set" as const), pk: key, rk: key, tag: fc.nat() }),
  fc.record({ op: fc.constant("set" as const), pk: fc.constant("b"), rk: key, tag: fc.nat() }),
  fc.record({ op: fc.constant("delete" as const), pk: key, rk: key }),
  fc.record({ op: fc.constant("get" as const), pk: key, rk: key }),
  fc.record({ op: fc.constant("from" as const), pk: key, rk: key, between: fc.boolean() }),
);

describe("SortedRows (the memory store's sorted chunks)", () => {
  test("agrees with a sorted model under any sequence of sets, deletes, gets and range starts", () => {
    fc.assert(
      fc.property(
        fc.array(command, { maxLength: 200 }),
        fc.integer({ min: 2, max: 6 }),
        (commands, chunk) => {
          const rows = new SortedRows(chunk);
          const model = new Map<string, { pk: string; rk: string; tag: number }>();
          const sorted = () => [...model.keys()].sort(ordinal);
          for (const c of commands) {
            const composite = `${c.pk}\u0000${c.rk}`;
            if (c.op === "set") {
              rows.set(row(c.pk, c.rk, c.tag));
              model.set(composite, c);
            } else if (c.op === "delete") {
              expect(rows.delete(c.pk, c.rk)).toBe(model.delete(composite));
            } else if (c.op === "get") {
              expect(rows.get(c.pk, c.rk)?.values[0]).toBe(model.get(composite)?.tag);
            } else {
              // A bound between partitions, as key-range.ts makes them (P + U+0001).
              const low = c.between ? `${c.pk}\u0001` : composite;
              const got = [...rows.from(low)].map((r) => `${r.partitionKey}\u0000${r.rowKey}`);
              expect(got).toEqual(sorted().filter((k) => k >= low));
            }
            expect(rows.size).toBe(model.size);
          }
          expect([...rows.from()].map((r) => `${r.partitionKey}\u0000${r.rowKey}`)).toEqual(sorted());
        },
      ),
      { numRuns: 300 },
    );
  });

  test("ascending appends (a bulk load) fill whole chunks and stay in order", () => {
    const rows = new SortedRows(4);
    for (let i = 0; i < 100; i++) rows.set(row("p", String(i).padStart(3, "0")));
    expect([...rows.from()].map((r) => r.rowKey)).toEqual(
      Array.from({ length: 100 }, (_, i) => String(i).padStart(3, "0")),
    );
    expect([...rows.from("p\u0000050")][0]?.rowKey).toBe("050");
  });

  test("compareToComposite orders like the built composite key", () => {
    fc.assert(
      fc.property(
        key,
        key,
        fc.string({ unit: fc.constantFrom("a", "b", "\u0000", "\u0001", "😀"), maxLength: 6 }),
        (pk, rk, k) => {
          expect(Math.sign(compareToComposite(pk, rk, k))).toBe(ordinal(`${pk}\u0000${rk}`, k));
        },
      ),
      { numRuns: 1000 },
    );
  });
});
