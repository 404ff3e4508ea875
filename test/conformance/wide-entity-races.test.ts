/**
 * Wide entities with concurrent writers and readers: writes of different row counts racing on one
 * entity always leave one whole write stored, and a `find` whose pages straddle a concurrent write
 * still returns each entity once, whole, in RowKey order.
 */
import { describe, expect, it } from "vitest";
import { Column, Entity, TableContext } from "../../src/index.js";
import { assembleWide } from "../../src/serialization/wide-rows.js";
import type { StorePage, StoreQuery, TableStore } from "../../src/store/table-store.js";
import { stores, uniquePrefix } from "../fixtures/context.js";
import { readAll } from "../support/read-all.js";
import { ShortPageStore } from "../support/short-page-store.js";

class Row {
  p!: string;
  id!: string;
  [column: string]: unknown;
}
Column({ type: "String" })(Row.prototype, "p");
Column({ type: "String" })(Row.prototype, "id");
for (let i = 0; i < 40; i++) Column({ type: "String" })(Row.prototype, `t${i}` as string);
Entity({ table: "WideRaces", partitionKey: "{p}", rowKey: "{id}", wide: true })(Row);

/** An entity of `parts` rows: each value takes about a third of a row's 1 MiB ... 30,000 chars ≈ 60 KB. */
function row(id: string, mark: string, parts: number): Row {
  const r = new Row();
  r.p = "p";
  r.id = id;
  // 17 values of ~60 KB fill one row (1 MiB): 17 × (parts - 1) + 1 values make `parts` rows.
  const values = Math.min(40, 17 * (parts - 1) + 1);
  for (let i = 0; i < values; i++) r[`t${i}`] = `${mark}${"x".repeat(29_990)}`;
  return r;
}

/** Runs `hook` once, after the first page that holds the row `trigger`. */
class HookedPages extends ShortPageStore {
  hook: (() => Promise<void>) | undefined;
  readonly #trigger: string;

  constructor(inner: TableStore, rowsPerPage: number, trigger: string) {
    super(inner, rowsPerPage);
    this.#trigger = trigger;
  }

  override async queryPage(table: string, query: StoreQuery): Promise<StorePage> {
    const page = await super.queryPage(table, query);
    const hook = this.hook;
    if (hook !== undefined && page.items.some((item) => item.rowKey === this.#trigger)) {
      this.hook = undefined;
      await hook();
    }
    return page;
  }
}

describe.each(stores)("wide entities racing on %s", (_name, kind) => {
  it("concurrent replaces of different row counts always leave exactly one whole write", async () => {
    const store = kind.create();
    const prefix = uniquePrefix();
    const writers = [0, 1, 2].map(() => new TableContext({ store, tablePrefix: prefix }));
    await writers[0]?.ensureTables(Row);
    const table = `${prefix}WideRaces`;
    for (let round = 0; round < 3; round++) {
      await Promise.all(
        writers.map((db, w) => db.repository(Row).upsert(row("a", `${round}${w}`, ((round + w) % 3) + 1))),
      );
      const rows = await readAll(store, table);
      const entity = assembleWide(rows);
      expect(entity, `round ${round}: the stored rows are one whole write`).toBeDefined();
    }
  });

  it.each([
    ["shrinks", 3, 1],
    ["grows", 2, 3],
  ])(
    "a find whose pages straddle a write that %s the entity returns it once, whole",
    async (_what, before, after) => {
      const base = kind.create();
      const store = new HookedPages(base, 1, "e1 00");
      const prefix = uniquePrefix();
      const db = new TableContext({ store, tablePrefix: prefix });
      await db.ensureTables(Row);
      const rows = db.repository(Row);
      await rows.insert(row("e0", "a", 2));
      await rows.insert(row("e1", "old", before));
      await rows.insert(row("e2", "a", 2));
      const other = new TableContext({ store: base, tablePrefix: prefix }).repository(Row);
      store.hook = async () => {
        await other.upsert(row("e1", "new", after));
      };
      const found = await rows.find({ p: "p" }).toArray();
      expect(store.hook).toBeUndefined();
      expect(found.map((r) => r.id)).toEqual(["e0", "e1", "e2"]);
      const e1 = found[1] as Row;
      const columns = Object.keys(e1).filter((k) => k.startsWith("t"));
      // Whole: every value from one write (the new one: it was read again), none from the other.
      expect(columns.length).toBe(Math.min(40, 17 * (after - 1) + 1));
      for (const column of columns) expect(String(e1[column]).startsWith("new")).toBe(true);
    },
  );
});
