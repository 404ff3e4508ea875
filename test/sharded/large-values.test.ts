import { describe, expect, it } from "vitest";
import { ShardedStore, TableContext } from "../../src/index.js";
import type { BlobStore } from "../../src/store/blob-store.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { uniqueTableName } from "../support/table-names.js";
import { ShDoc } from "./models.js";
import { movingToD, nameWhere } from "./moving-table.js";

/** The blob names of one container on one shard. */
async function blobNames(blobs: BlobStore, container: string): Promise<string[]> {
  return (await blobs.list(container)).items.map((b) => b.name);
}

describe("ShardedStore with large values (MemoryStore shards, which keep blobs)", () => {
  it("keeps each large value's blob on its entity's shard, and moves it with its partition", async () => {
    const shards = { a: new MemoryStore(), b: new MemoryStore(), c: new MemoryStore() };
    const store = new ShardedStore({ shards, mapLeaseMs: 0 });
    // At least one document's partition moves when d is added (placement hashes the table's name).
    const prefix = nameWhere(
      () => uniqueTableName("lv"),
      (name) =>
        movingToD(
          `${name}ShDocs`,
          Array.from({ length: 24 }, (_, f) => `f${f}`),
        ) > 0,
    );
    const db = new TableContext({ store, tablePrefix: prefix, retry: false });
    await db.ensureTables(ShDoc);
    const docs = db.repository(ShDoc);
    const text = (f: number) => `text of folder ${f} `.repeat(4000);
    for (let f = 0; f < 24; f++)
      await docs.insert(Object.assign(new ShDoc(), { folder: `f${f}`, name: "doc", text: text(f) }));
    const container = `tablekit-${prefix.toLowerCase()}shdocs`;
    const table = `${prefix}ShDocs`;
    const blobsOn = async (all: Record<string, MemoryStore>) =>
      Object.fromEntries(
        await Promise.all(
          Object.entries(all).map(
            async ([n, s]) => [n, (await blobNames(s.blobs, container)).length] as const,
          ),
        ),
      );
    // One blob per document, each on the shard of its row's partition.
    for (let f = 0; f < 24; f++) {
      const home = shards[(await store.shardOf(table, `f${f}`)) as "a" | "b" | "c"];
      const owned = (await blobNames(home.blobs, container)).filter((n) =>
        n.startsWith(`k${Buffer.from(`f${f}`).toString("base64url")}/`),
      );
      expect(owned, `f${f}`).toHaveLength(1);
    }
    expect(Object.values(await blobsOn(shards)).reduce((x, y) => x + y, 0)).toBe(24);

    const d = new MemoryStore();
    const moved = await store.addShard("d", d);
    expect(moved.partitions).toBeGreaterThan(0);
    // The moved documents' blobs went with them: still one blob per document in all.
    const after = await blobsOn({ ...shards, d });
    expect(after.d).toBe(moved.partitions);
    expect(Object.values(after).reduce((x, y) => x + y, 0)).toBe(24);
    for (let f = 0; f < 24; f++)
      expect((await docs.get({ folder: `f${f}`, name: "doc" }))?.text).toBe(text(f));
  });
});
