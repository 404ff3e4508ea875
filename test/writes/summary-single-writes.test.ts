/**
 * A summarized entity without indexes is written by the indexed writer, its summary rows the one
 * summary stage every write form shares (issue 30). What that must not change: its rows carry no copy
 * list (the property budget keeps no room for one), an upsert of an instance not tracked reads the row
 * first and costs the same stored or not, and with a summary kept elsewhere an update or delete of an
 * absent entity sends its read alone and leaves no intent.
 */
import { describe, expect, it } from "vitest";
import { Column, Entity, EntityNotFoundError, TableContext } from "../../src/index.js";
import { stores, uniquePrefix } from "../fixtures/context.js";
import { readAll } from "../support/read-all.js";
import { RecordingStore } from "../support/recording-store.js";

@Entity({
  table: "SswItems",
  partitionKey: "{group}",
  rowKey: "i_{id}",
  summaries: { perGroup: { rowKey: "summary", count: "items", sum: { n: "total" } } },
})
class SswItem {
  @Column({ type: "String" }) group!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Int32" }) n!: number;
}

@Entity({
  table: "SswRemote",
  partitionKey: "{group}",
  rowKey: "i_{id}",
  summaries: {
    all: { table: "SswTotals", partitionKey: "totals", rowKey: "all", count: "items", sum: { n: "total" } },
  },
})
class SswRemote {
  @Column({ type: "String" }) group!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Int32" }) n!: number;
}

const item = <T extends SswItem | SswRemote>(ctor: new () => T, id: string, n: number): T =>
  Object.assign(new ctor(), { group: "g", id, n });

describe.each(stores)("single writes of a summarized entity without indexes, on %s", (_name, kind) => {
  async function setup() {
    const store = new RecordingStore(kind.create());
    const prefix = uniquePrefix("ssw");
    const db = new TableContext({ store, tablePrefix: prefix });
    await db.ensureTables(SswItem, SswRemote);
    store.sent.length = 0;
    return { db, store, prefix };
  }

  it("stores rows without a copy list, and an untracked upsert costs a read and a transaction, stored or not", async () => {
    const { db, store, prefix } = await setup();
    const repo = db.repository(SswItem);
    await repo.insert(item(SswItem, "1", 5));
    const sent = async (write: () => Promise<unknown>) => {
      store.sent.length = 0;
      await write();
      return store.sent.map((request) => request.method);
    };
    // The summary row is cached after the first write: each upsert reads the row, then commits.
    expect(await sent(() => repo.upsert(item(SswItem, "2", 3)))).toEqual(["getEntity", "submitTransaction"]);
    expect(await sent(() => repo.upsert(item(SswItem, "1", 7)))).toEqual(["getEntity", "submitTransaction"]);
    const read = (await repo.get({ group: "g", id: "2" })) as SswItem;
    read.n = 4;
    await repo.update(read);
    await repo.patch({ group: "g", id: "1" }, { n: 8 });
    const rows = await readAll(store, `${prefix}SswItems`);
    expect(rows.map((row) => [row.rowKey, "_tkIndexKeys" in row])).toEqual([
      ["i_1", false],
      ["i_2", false],
      ["summary", false],
    ]);
    expect(await repo.summary("perGroup", { group: "g" })).toEqual({ items: 2, total: 12 });
  });

  it("with a summary kept elsewhere, an update or delete of an absent entity sends its read alone", async () => {
    const { db, store, prefix } = await setup();
    const repo = db.repository(SswRemote);
    await repo.insert(item(SswRemote, "1", 5));
    store.sent.length = 0;
    await expect(repo.update(item(SswRemote, "9", 1), { ifMatch: "*" })).rejects.toThrow(EntityNotFoundError);
    expect(await repo.delete({ group: "g", id: "9" })).toBe(false);
    expect(store.sent.map((request) => request.method)).toEqual(["getEntity", "getEntity"]);
    expect(await readAll(store, `${prefix}TablekitIntents`)).toEqual([]);
    expect(await repo.summary("all", {})).toEqual({ items: 1, total: 5 });
  });
});
