/**
 * The blob part of the port (large entity values), through the `BlobStore` interface alone: whole
 * puts and gets, byte-exact; deletes and reads of absent blobs and containers; listings by prefix.
 */
import { describe, expect, test } from "vitest";
import { StoreError } from "../../src/errors.js";
import type { BlobStore } from "../../src/store/table-store.js";
import { blobStoreKinds, storeKinds } from "../support/stores.js";
import { uniqueTableName } from "../support/table-names.js";

const container = () => `tablekit-${uniqueTableName("c").toLowerCase()}`;

// tablekit serve has no Blob endpoint: the blob contract runs on the stores that have one.
// The stores left out really have no blob port (an entity with a large column is refused there). This
// also gives a run whose TABLEKIT_STORES selects only such stores (e.g. `serve`) something to check.
const withoutBlobs = storeKinds.filter((kind) => !blobStoreKinds.includes(kind));
describe.each(withoutBlobs)("store contract (blobs) on $name", (kind) => {
  test("has no Blob endpoint, so the blob contract does not apply", () => {
    expect(kind.create().blobs).toBeUndefined();
  });
});

describe.each(blobStoreKinds)("store contract (blobs) on $name", (kind) => {
  const blobs = (): BlobStore => {
    const store = kind.create();
    expect(store.blobs).toBeDefined();
    return store.blobs as BlobStore;
  };

  test("put creates the container; get returns the bytes exactly; put overwrites", async () => {
    const store = blobs();
    const c = container();
    const data = new Uint8Array([0, 1, 254, 255, 128]);
    await store.put(c, "a/b/c", data);
    data[0] = 9; // the store keeps what was put, not the caller's array
    expect([...((await store.get(c, "a/b/c")) as Uint8Array)]).toEqual([0, 1, 254, 255, 128]);
    await store.put(c, "empty", new Uint8Array(0));
    expect((await store.get(c, "empty"))?.byteLength).toBe(0);
    await store.put(c, "a/b/c", new Uint8Array([7]));
    expect([...((await store.get(c, "a/b/c")) as Uint8Array)]).toEqual([7]);
  });

  test("absent blobs and containers: get undefined, delete false, list empty", async () => {
    const store = blobs();
    const c = container();
    expect(await store.get(c, "nothing")).toBeUndefined();
    expect(await store.delete(c, "nothing")).toBe(false);
    expect(await store.list(c)).toEqual({ items: [] });
    await store.put(c, "x", new Uint8Array([1]));
    expect(await store.delete(c, "x")).toBe(true);
    expect(await store.delete(c, "x")).toBe(false);
    expect(await store.get(c, "x")).toBeUndefined();
  });

  test("list returns names in order with prefix, creation time and size", async () => {
    const store = blobs();
    const c = container();
    const before = Date.now();
    for (const name of ["p/2", "p/1", "q/1"]) await store.put(c, name, new Uint8Array(name.length + 1));
    const all = await store.list(c);
    expect(all.items.map((b) => b.name)).toEqual(["p/1", "p/2", "q/1"]);
    expect(all.continuation).toBeUndefined();
    const p = await store.list(c, { prefix: "p/" });
    expect(p.items.map((b) => [b.name, b.size])).toEqual([
      ["p/1", 4],
      ["p/2", 4],
    ]);
    // Creation times are the service's clock: within a generous second of ours.
    for (const blob of all.items) expect(blob.createdOn.getTime()).toBeGreaterThan(before - 1_000);
  });

  test("deleteContainer removes every blob; a missing container is fine", async () => {
    const store = blobs();
    const c = container();
    await store.deleteContainer(c);
    await store.put(c, "a", new Uint8Array([1]));
    await store.put(c, "b", new Uint8Array([2]));
    await store.deleteContainer(c);
    expect(await store.list(c)).toEqual({ items: [] });
    expect(await store.get(c, "a")).toBeUndefined();
  });

  test("a container name outside Blob Storage's rules is a StoreError", async () => {
    const store = blobs();
    await expect(store.put("Bad_Name", "x", new Uint8Array(1))).rejects.toBeInstanceOf(StoreError);
  });
});
