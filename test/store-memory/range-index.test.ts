import fc from "fast-check";
import { beforeAll, describe, expect, test } from "vitest";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import type { TransactionAction } from "../../src/store/table-store.js";
import { keysOf, readAll, storeWithTable } from "./helpers.js";

const PARTITIONS = 100;
const ROWS = 1000;
const pk = (i: number) => `p${String(i).padStart(3, "0")}`;
const rk = (i: number) => String(i).padStart(5, "0");

/** Entities read from the index while running `work` (the memory store's cheap scan counter). */
async function scanned(store: MemoryStore, work: () => Promise<unknown>): Promise<number> {
  const before = store.stats.entitiesScanned;
  await work();
  return store.stats.entitiesScanned - before;
}

describe("queries use the (PartitionKey, RowKey) index on a 100k-entity table", () => {
  let store: MemoryStore;

  beforeAll(async () => {
    store = await storeWithTable();
    for (let p = 0; p < PARTITIONS; p++) {
      for (let start = 0; start < ROWS; start += 100) {
        const actions: TransactionAction[] = Array.from({ length: 100 }, (_, i) => ({
          kind: "insert",
          entity: { partitionKey: pk(p), rowKey: rk(start + i), n: start + i },
        }));
        await store.submitTransaction("Things", pk(p), actions);
      }
    }
  });

  test("point query reads one entity", async () => {
    let items: unknown[] = [];
    const cost = await scanned(store, async () => {
      items = (await readAll(store, "Things", { filter: "PartitionKey eq 'p042' and RowKey eq '00123'" }))
        .items;
    });
    expect(items).toHaveLength(1);
    expect(cost).toBe(1);
  });

  test("range query reads only its range", async () => {
    const filter = "PartitionKey eq 'p042' and RowKey ge '00100' and RowKey lt '00200'";
    let keys: string[] = [];
    const cost = await scanned(store, async () => {
      keys = keysOf((await readAll(store, "Things", { filter })).items);
    });
    expect(keys).toHaveLength(100);
    expect(keys[0]).toBe("p042/00100");
    expect(keys.at(-1)).toBe("p042/00199");
    expect(cost).toBe(100);
  });

  test("exclusive and inclusive bounds, in either operand order", async () => {
    const filter = "'00100' lt RowKey and RowKey le '00105' and 'p042' eq PartitionKey";
    let keys: string[] = [];
    const cost = await scanned(store, async () => {
      keys = keysOf((await readAll(store, "Things", { filter })).items);
    });
    expect(keys).toEqual(["00101", "00102", "00103", "00104", "00105"].map((r) => `p042/${r}`));
    expect(cost).toBe(5);
  });

  test("a key range nested in parentheses still bounds the scan", async () => {
    const filter = "(PartitionKey eq 'p007' and (RowKey ge '00990')) and n ge 0";
    const cost = await scanned(store, () => readAll(store, "Things", { filter }));
    expect(cost).toBe(10);
  });

  test("a partition scan reads one partition", async () => {
    let items: unknown[] = [];
    const cost = await scanned(store, async () => {
      items = (await readAll(store, "Things", { filter: "PartitionKey eq 'p013' and n ge 500" })).items;
    });
    expect(items).toHaveLength(500);
    expect(cost).toBe(ROWS);
  });

  test("`or` over RowKeys is a partition scan, not a range", async () => {
    const filter = "PartitionKey eq 'p013' and (RowKey eq '00001' or RowKey eq '00999')";
    const cost = await scanned(store, () => readAll(store, "Things", { filter }));
    expect(cost).toBe(ROWS);
  });

  test("PartitionKey ranges bound table scans", async () => {
    let items: unknown[] = [];
    const cost = await scanned(store, async () => {
      items = (
        await readAll(store, "Things", { filter: "PartitionKey gt 'p010' and PartitionKey le 'p012'" })
      ).items;
    });
    expect(items).toHaveLength(2 * ROWS);
    expect(cost).toBe(2 * ROWS);
  });

  test("contradictory key conditions read nothing", async () => {
    const filter = "PartitionKey eq 'p001' and PartitionKey eq 'p002'";
    const cost = await scanned(store, () => readAll(store, "Things", { filter }));
    expect(cost).toBe(0);
  });

  test("a RowKey range without a PartitionKey is a table scan", async () => {
    const filter = "RowKey eq '00005'";
    let items: unknown[] = [];
    const cost = await scanned(store, async () => {
      items = (await readAll(store, "Things", { filter })).items;
    });
    expect(items).toHaveLength(PARTITIONS);
    expect(cost).toBe(PARTITIONS * ROWS);
  });

  test("getEntity does not scan", async () => {
    const cost = await scanned(store, () => store.getEntity("Things", "p099", "00999"));
    expect(cost).toBe(0);
  });

  test("each filter text is parsed once", async () => {
    const filter = "PartitionKey eq 'p001' and n eq 7";
    const before = store.stats.filterCompilations;
    for (let i = 0; i < 20; i++) await store.queryPage("Things", { filter });
    expect(store.stats.filterCompilations - before).toBe(1);
  });
});

describe("key ranges agree with a brute-force model (property-based)", () => {
  const key = fc.string({ unit: fc.constantFrom("a", "b", "c", "é", "😀", "A", " "), maxLength: 3 });
  const op = fc.constantFrom("eq", "ne", "gt", "ge", "lt", "le");
  const quote = (s: string) => `'${s.replaceAll("'", "''")}'`;
  const holds = (a: string, o: string, b: string) =>
    o === "eq"
      ? a === b
      : o === "ne"
        ? a !== b
        : o === "gt"
          ? a > b
          : o === "ge"
            ? a >= b
            : o === "lt"
              ? a < b
              : a <= b;

  test("PartitionKey/RowKey comparisons, any page size and page-break mode", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.tuple(key, key), { selector: ([p, r]) => `${p}\u0000${r}`, maxLength: 40 }),
        fc.array(fc.tuple(fc.constantFrom("PartitionKey", "RowKey"), op, key), {
          minLength: 1,
          maxLength: 4,
        }),
        fc.integer({ min: 1, max: 7 }),
        fc.constantFrom("partition" as const, "size-only" as const),
        async (rows, conditions, top, pageBreaks) => {
          const store = new MemoryStore({ pageBreaks });
          await store.createTable("Things");
          for (const [partitionKey, rowKey] of rows) await store.insert("Things", { partitionKey, rowKey });
          const filter = conditions.map(([prop, o, v]) => `${prop} ${o} ${quote(v)}`).join(" and ");
          const { items, pages } = await readAll(store, "Things", { filter, top });
          const expected = rows
            .filter(([p, r]) =>
              conditions.every(([prop, o, v]) => holds(prop === "PartitionKey" ? p : r, o, v)),
            )
            .sort(([p1, r1], [p2, r2]) => (p1 !== p2 ? (p1 < p2 ? -1 : 1) : r1 < r2 ? -1 : r1 > r2 ? 1 : 0))
            .map(([p, r]) => `${p}/${r}`);
          expect(keysOf(items)).toEqual(expected);
          for (const page of pages) expect(page.items.length).toBeLessThanOrEqual(top);
        },
      ),
      { numRuns: 300 },
    );
  });
});
