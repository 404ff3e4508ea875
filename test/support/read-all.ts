import type { StoreContinuation, StoredEntity, TableStore } from "../../src/store/table-store.js";

/** Every entity of a table (optionally filtered), read page by page through the store port. */
export async function readAll(
  store: TableStore,
  table: string,
  query: { filter?: string; pageSize?: number } = {},
): Promise<StoredEntity[]> {
  const all: StoredEntity[] = [];
  let continuation: StoreContinuation | undefined;
  do {
    const page = await store.queryPage(table, {
      top: query.pageSize ?? 1000,
      ...(query.filter === undefined ? {} : { filter: query.filter }),
      ...(continuation ? { continuation } : {}),
    });
    all.push(...page.items);
    continuation = page.continuation;
  } while (continuation);
  return all;
}
