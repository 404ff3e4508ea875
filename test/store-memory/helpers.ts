import { MemoryStore, type MemoryStoreOptions } from "../../src/store/memory/memory-store.js";

/** A store with one empty table named `table`. */
export async function storeWithTable(
  table = "Things",
  options: MemoryStoreOptions = {},
): Promise<MemoryStore> {
  const store = new MemoryStore(options);
  await store.createTable(table);
  return store;
}

export { expectStoreError, keysOf, readAll } from "../store-contract/contract.js";
