/**
 * A wide entity's copy list (`_tkIndexKeys`) lies on whichever of its rows the split put it (the
 * last column: here its second row). `repairIndexes({ scan: true })` rewrites a wrong list there,
 * conditional on that row's ETag, leaving the entity's values, rows and write id as they were; a
 * concurrent write wins over the repair.
 */
import { describe, expect, it } from "vitest";
import { Column, Entity, TableContext, type TableStore } from "../../src/index.js";
import { encodeCopyRefs } from "../../src/repository/core/copy-ref.js";
import { partRowKey } from "../../src/serialization/wide-rows.js";
import type { StoredEntity } from "../../src/store/table-store.js";
import { stores, uniquePrefix } from "../fixtures/context.js";
import { type StoreRequest, StoreWrapper } from "../support/store-wrapper.js";
import { bare, putRaw, rowsOf } from "./helpers.js";

/** A wide entity of two rows (300 Int32 columns; a row holds at most 252 properties) with a same-partition index. */
class RxWide {
  group!: string;
  id!: string;
  color!: string;
  [column: string]: unknown;
}
Column({ type: "String" })(RxWide.prototype, "group");
Column({ type: "String" })(RxWide.prototype, "id");
Column({ type: "String" })(RxWide.prototype, "color");
for (let i = 0; i < 300; i++) Column({ type: "Int32" })(RxWide.prototype, `v${i}` as string);
Entity({
  table: "RxWides",
  partitionKey: "{group}",
  rowKey: "w_{id}",
  wide: true,
  indexes: { byColor: { rowKey: "color_{color}_{id}" } },
})(RxWide);

function rxWide(color: string, base: number): RxWide {
  const w = Object.assign(new RxWide(), { group: "Ops", id: "1", color });
  for (let i = 0; i < 300; i++) w[`v${i}`] = base + i;
  return w;
}

/** Runs `hook` once, just before the first `update` request (the repair's merge of the list row); counts updates. */
class BeforeUpdate extends StoreWrapper {
  hook: (() => Promise<unknown>) | undefined;
  updates = 0;
  protected async around<T>(request: StoreRequest, send: () => Promise<T>): Promise<T> {
    if (request.method === "update") this.updates++;
    const hook = this.hook;
    if (request.method === "update" && hook) {
      this.hook = undefined;
      await hook();
    }
    return send();
  }
}

const CLEAN = { missing: [], stale: [], orphans: [] };

describe.each(stores)("a wide entity's copy list, repaired on %s", (_name, kind) => {
  async function setup() {
    const inner: TableStore = kind.create();
    const store = new BeforeUpdate(inner);
    const prefix = uniquePrefix();
    const db = new TableContext({ store, tablePrefix: prefix });
    await db.ensureTables(RxWide);
    const table = `${prefix}RxWides`;
    const repo = db.repository(RxWide);
    await repo.insert(rxWide("red", 0));
    const parts = async () =>
      (await rowsOf(inner, table)).filter((row) => row.rowKey.startsWith("w_1 ")).sort(byRowKey);
    const stored = await parts();
    const holder = stored[1] as StoredEntity;
    // The list is the last column: on the second row, not the first.
    expect(stored.map((row) => [row.rowKey, row._tkIndexKeys !== undefined])).toEqual([
      [partRowKey("w_1", 0), false],
      [partRowKey("w_1", 1), true],
    ]);
    // A list naming no copy (as if written before the index existed, or tampered with).
    await putRaw(inner, table, { ...bare(holder), _tkIndexKeys: encodeCopyRefs([]) });
    return { store, inner, db, repo, prefix, stored, parts };
  }

  it("repair rewrites it on its row; the values, rows and write id stay; the next write drops the old copy", async () => {
    const { db, repo, stored, parts } = await setup();
    // The copies themselves are right: the wrong list shows only in the next write (below).
    expect(await db.verifyIndexes(RxWide)).toEqual(CLEAN);
    expect(await db.repairIndexes(RxWide, { scan: true })).toMatchObject({
      copiesWritten: 0,
      copiesDeleted: 0,
    });
    // Every row holds what the write stored (list and `_tkWide` write id included); only the list row was written.
    const repaired = await parts();
    expect(repaired.map(bare)).toEqual(stored.map(bare));
    expect(repaired[0]?.etag).toBe(stored[0]?.etag);
    expect(repaired[1]?.etag).not.toBe(stored[1]?.etag);
    const read = (await repo.get({ group: "Ops", id: "1" })) as RxWide;
    expect({ ...read }).toEqual({ ...rxWide("red", 0) });
    expect(await db.verifyIndexes(RxWide)).toEqual(CLEAN);
    // A write of the instance read back trusts the list: it deletes the red copy (left orphaned before).
    read.color = "blue";
    await repo.update(read);
    expect(await db.verifyIndexes(RxWide)).toEqual(CLEAN);
  });

  it("a write between the repair's read and its merge wins: the repair reads again and leaves it", async () => {
    const { store, inner, db, prefix, parts } = await setup();
    const other = new TableContext({ store: inner, tablePrefix: prefix });
    const green = rxWide("green", 1000);
    store.hook = () => other.repository(RxWide).upsert(green);
    await db.repairIndexes(RxWide, { scan: true });
    expect(store.hook, "the repair merged the list row").toBeUndefined();
    // One merge, refused (the row's ETag moved): the entity read again has the right list.
    expect(store.updates).toBe(1);
    const read = await other.repository(RxWide).get({ group: "Ops", id: "1" });
    expect({ ...read }).toEqual({ ...green });
    // The write's own list (its new copy) stands, and the red copy it replaced is gone.
    const list = (await parts())[1]?._tkIndexKeys;
    expect(list).toBe(
      encodeCopyRefs([
        { index: "byColor", table: `${prefix}RxWides`, partitionKey: "Ops", rowKey: "color_green_1" },
      ]),
    );
    expect(await db.verifyIndexes(RxWide)).toEqual(CLEAN);
  });
});

function byRowKey(a: StoredEntity, b: StoredEntity): number {
  return a.rowKey < b.rowKey ? -1 : a.rowKey > b.rowKey ? 1 : 0;
}
