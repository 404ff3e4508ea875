import { randomBytes } from "node:crypto";
import {
  AzureStore,
  type EntityClass,
  MemoryStore,
  TableContext,
  type TableContextOptions,
  type TableStore,
} from "../index.js";

/** The environment variable that points `createTestContext` at a real account (or Azurite). */
export const TEST_CONNECTION_STRING_VARIABLE = "TABLEKIT_TEST_CONNECTION_STRING";

/** Options of `createTestContext`: those of `TableContext`, without the store, which it picks. */
export interface TestContextOptions extends Omit<TableContextOptions, "store" | "tablePrefix"> {
  /**
   * The account to test against (default `process.env.TABLEKIT_TEST_CONNECTION_STRING`); without one,
   * a fresh `MemoryStore`.
   */
  connectionString?: string | undefined;
  /** Entity classes whose tables are created before `createTestContext` resolves. */
  entities?: readonly EntityClass[] | undefined;
  /** Wraps the store before the context uses it, e.g. `(store) => faultyStore(store, { seed: 1, rate: 0.1 })`. */
  wrapStore?: ((store: TableStore) => TableStore) | undefined;
}

/** What `createTestContext` gives a test. */
export interface TestContext {
  /** A context on the test's own store (or its own table prefix), its entities' tables created. */
  readonly db: TableContext;
  /** The store under `db` (after `wrapStore`). */
  readonly store: TableStore;
  /** The context's table prefix: empty on a `MemoryStore`, unique per context on an account. */
  readonly tablePrefix: string;
  /** On an account, deletes every table under the prefix and their blob containers (nothing to do on memory); idempotent. */
  close(): Promise<void>;
}

/**
 * A `TableContext` for one test: on a fresh `MemoryStore`, or, when `TABLEKIT_TEST_CONNECTION_STRING`
 * is set (or `connectionString` given), on that account under a unique `tablePrefix` whose tables
 * `close()` deletes. The tables of `options.entities` are created before it resolves.
 *
 * @example
 * ```ts
 * const { db, close } = await createTestContext({ entities: [Order] });
 * await db.repository(Order).insert(order);
 * await close();
 * ```
 */
export async function createTestContext(options: TestContextOptions = {}): Promise<TestContext> {
  const { connectionString: given, wrapStore, entities = [], ...contextOptions } = options;
  const connectionString = given ?? process.env[TEST_CONNECTION_STRING_VARIABLE];
  const onAccount = connectionString !== undefined && connectionString !== "";
  const base: TableStore = onAccount ? AzureStore.fromConnectionString(connectionString) : new MemoryStore();
  const store = wrapStore ? wrapStore(base) : base;
  // Letters and digits, starting with a letter (a table name's rule): 12 random hex digits after "t".
  const tablePrefix = onAccount ? `t${randomBytes(6).toString("hex")}` : "";
  const db = new TableContext({ ...contextOptions, store, tablePrefix });
  if (entities.length > 0) await db.ensureTables(...entities);
  let closed: Promise<void> | undefined;
  return {
    db,
    store,
    tablePrefix,
    close: () => {
      closed ??= onAccount ? deleteUnder(base, tablePrefix) : Promise.resolve();
      return closed;
    },
  };
}

/** Deletes every table whose name starts with `prefix`, and the blob container each may have. */
async function deleteUnder(store: TableStore, prefix: string): Promise<void> {
  const tables = await store.listTables(prefix);
  await Promise.all(
    tables.map(async (table) => {
      await store.deleteTable(table);
      // Large values live in `tablekit-<physical table name, lowercased>` (see the large-values guide).
      await store.blobs?.deleteContainer(`tablekit-${table.toLowerCase()}`);
    }),
  );
}
