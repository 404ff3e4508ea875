import { expect } from "vitest";
import { StoreError } from "../../src/errors.js";
import { MemoryStore, type MemoryStoreOptions } from "../../src/store/memory/memory-store.js";
import type { StoredEntity, StorePage, StoreQuery, TableStore } from "../../src/store/table-store.js";

/** A store with one empty table named `table`. */
export async function storeWithTable(
  table = "Things",
  options: MemoryStoreOptions = {},
): Promise<MemoryStore> {
  const store = new MemoryStore(options);
  await store.createTable(table);
  return store;
}

/** Follows continuations to the end; fails if it takes more than `maxPages` pages. */
export async function readAll(
  store: TableStore,
  table: string,
  query: Omit<StoreQuery, "continuation"> = {},
  maxPages = 10_000,
): Promise<{ items: StoredEntity[]; pages: StorePage[] }> {
  const pages: StorePage[] = [];
  let continuation: StoreQuery["continuation"];
  do {
    const page = await store.queryPage(table, { ...query, continuation });
    pages.push(page);
    continuation = page.continuation;
    if (pages.length > maxPages) throw new Error(`query did not terminate within ${maxPages} pages`);
  } while (continuation !== undefined);
  return { items: pages.flatMap((p) => p.items), pages };
}

/** Asserts that `promise` rejects with a StoreError of this status and service code. */
export async function expectStoreError(
  promise: Promise<unknown>,
  statusCode: number,
  serviceCode: string,
): Promise<StoreError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StoreError);
  expect(error).toMatchObject({ code: "STORE", statusCode, serviceCode });
  return error as StoreError;
}

/** Keys of entities, for compact assertions. */
export function keysOf(items: readonly StoredEntity[]): string[] {
  return items.map((e) => `${e.partitionKey}/${e.rowKey}`);
}
