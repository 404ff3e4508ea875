import { expect } from "vitest";
import { type CopyRef, TableContext } from "../../src/index.js";
import type { StoredEntity, TableStore, WireEntity } from "../../src/store/table-store.js";
import { uniquePrefix } from "../fixtures/context.js";
import type { StoreKind } from "../support/stores.js";
import { CrashStore } from "./crash-store.js";
import { RxEmployee } from "./models.js";

/** The physical tables of `RxEmployee` under a prefix. */
export function tablesOf(prefix: string) {
  return {
    entities: `${prefix}RxEmployees`,
    byName: `${prefix}RxEmployeesByName`,
    byAge: `${prefix}RxEmployeesByAge`,
    intents: `${prefix}TablekitIntents`,
  };
}

/** A context (retries off) over a crash-injecting store, on fresh tables. */
export async function crashContext(
  kind: StoreKind,
): Promise<{ db: TableContext; store: CrashStore; prefix: string; tables: ReturnType<typeof tablesOf> }> {
  const store = new CrashStore(kind.create());
  const prefix = uniquePrefix();
  const db = new TableContext({ store, tablePrefix: prefix, retry: false });
  await db.ensureTables(RxEmployee);
  store.reset();
  return { db, store, prefix, tables: tablesOf(prefix) };
}

/** Every row of a table (all pages). */
export async function rowsOf(store: TableStore, table: string, filter?: string): Promise<StoredEntity[]> {
  const rows: StoredEntity[] = [];
  let continuation: { nextPartitionKey: string; nextRowKey?: string } | undefined;
  do {
    const page = await store.queryPage(table, {
      ...(filter ? { filter } : {}),
      ...(continuation ? { continuation } : {}),
    });
    rows.push(...page.items);
    continuation = page.continuation;
  } while (continuation);
  return rows;
}

/** A ref, written the way the library writes them. */
export function ref(index: string, table: string, partitionKey: string, rowKey: string): CopyRef {
  return { index, table, partitionKey, rowKey };
}

/** Expects `verifyIndexes` to report no drift at all. */
export async function expectNoDrift(db: TableContext): Promise<void> {
  expect(await db.verifyIndexes(RxEmployee)).toEqual({ missing: [], stale: [], orphans: [] });
}

/** Writes a raw row through the store (bypassing the library), replacing what is there. */
export async function putRaw(store: TableStore, table: string, row: WireEntity): Promise<void> {
  await store.upsert(table, row, "replace");
}

/** A stored row without its service metadata (what `upsert` accepts back). */
export function bare(row: StoredEntity): WireEntity {
  const { etag: _etag, timestamp: _timestamp, ...rest } = row;
  return rest;
}
