/**
 * The store-port contract suite's fixture: a `TableStore` of each selected kind (MemoryStore, Azurite)
 * whose table names get a per-store suffix, so tests can say "Things" and still never share a table
 * with another test or run on the shared Azurite. Names the suffix would make invalid pass unchanged.
 */
import { beforeEach, expect } from "vitest";
import { StoreError } from "../../src/errors.js";
import type { StoredEntity, StorePage, StoreQuery, TableStore } from "../../src/store/table-store.js";
import { STORE_METHODS } from "../support/store-wrapper.js";
import type { StoreKind } from "../support/stores.js";
import { uniqueTableName } from "../support/table-names.js";

export { type StoreKind, storeKinds } from "../support/stores.js";

/** A store of `kind` whose tables are private to it (see the module comment). */
export function contractStore(kind: StoreKind): TableStore {
  const inner = kind.create();
  const suffix = uniqueTableName("x").slice(1);
  const physical = (table: string) =>
    /^[A-Za-z][A-Za-z0-9]{2,62}$/.test(table) &&
    table.toLowerCase() !== "tables" &&
    table.length + suffix.length <= 63
      ? `${table}${suffix}`
      : table;
  const methods = new Set<string | symbol>(STORE_METHODS);
  return new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (!methods.has(property) || typeof value !== "function") return value;
      return async (table: string, ...rest: unknown[]) => {
        const name = physical(table);
        try {
          return await (value as (...args: unknown[]) => Promise<unknown>).call(target, name, ...rest);
        } catch (error) {
          // Errors name the table the test used, not its private copy.
          if (error instanceof Error && (error as { table?: unknown }).table === name) {
            Object.assign(error, { table });
          }
          throw error;
        }
      };
    },
  });
}

/** A store of `kind` with one empty table named `table`. */
export async function storeWithTable(kind: StoreKind, table = "Things"): Promise<TableStore> {
  const store = contractStore(kind);
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

/**
 * Where Azurite 3.35 answers otherwise than Azure (test/store-azure/AZURITE-NOTES.md), or where AzureStore
 * passes a detail through that the port leaves open (continuation tokens are opaque): matched against
 * "<describe> > <test>", these tests are skipped on Azurite with the reason as the skip note. MemoryStore
 * follows Azure here, so they keep running on it.
 */
const AZURITE_DEVIATIONS: ReadonlyArray<[RegExp, string]> = [
  [
    /^tables > table names are case-insensitive/,
    "Azurite: entity requests match table names case-sensitively (Azure: case-insensitive)",
  ],
  [
    /^tables > rejects the table name/,
    "Azurite: an invalid table name is 400 with an empty error code (AZURITE-NOTES)",
  ],
  [/^entity CRUD > an empty If-Match is 400/, "Azurite: an empty If-Match is a 412 mismatch, not 400"],
  [
    /^literals > Int32, Int64 \(L\), Double/,
    "Azurite: numeric literal comparisons across Int32/Double differ from Azure (AZURITE-NOTES)",
  ],
  [
    /^literals > datetime'…' with and without fraction/,
    "Azurite: a datetime literal without fraction does not match stored sub-second values",
  ],
  [/^literals > guid'…' compares case-insensitively/, "Azurite: guid literals compare case-sensitively"],
  [
    /^logic > and, or, not, parentheses/,
    "Azurite: rejects 'not' applied to a parenthesised expression (400 InvalidInput)",
  ],
  [
    /^the service's comparison rules > /,
    "Azurite: compares across types (Azure: a comparison with a constant of another type is false); Int32 eq 5L is a bare 500 (AZURITE-NOTES)",
  ],
  [
    /^errors > /,
    "Azurite: accepts many malformed filters and words its 400s differently; the messages checked are MemoryStore's",
  ],
  [
    /^paging > 2,500 entities over 3 partitions/,
    "Azurite: pages break by size only, never at partition boundaries (MemoryStore option pageBreaks: 'size-only')",
  ],
  [
    /^paging > (default top is 1,000|a page that reaches top exactly|top and filter together)/,
    "continuation tokens are opaque: AzureStore carries Azurite's base64 keys",
  ],
  [
    /^paging > a filtered scan over partitions without matches/,
    "Azurite: a filtered scan returns no empty intermediate pages",
  ],
  [
    /^paging > a continuation (carried into a deleted partition|without nextRowKey)/,
    "continuation tokens are opaque: hand-made tokens are MemoryStore's format",
  ],
  [
    /^paging > top (1001|1\.5|-1|NaN) is 400/,
    "Azurite: does not check $top (1001, 1.5 accepted; others answered with another code)",
  ],

  [
    /^entity group transactions > 100 operations are allowed, 101/,
    "Azurite: charges batch-level rules to operation 0 (AZURITE-NOTES)",
  ],
  [
    /^entity group transactions > a payload of 4 MiB/,
    "Azurite: answers an oversized batch with a top-level 413 without index (AZURITE-NOTES)",
  ],
  [
    /^entity group transactions > (invalid entities fail|a merge over the property limit)/,
    "Azurite: does not enforce property names/count/values (AZURITE-NOTES)",
  ],
  [/^EDM type round trips > Guids are normalized to lower case/, "Azurite: keeps a Guid's case"],
  [
    /^EDM type round trips > DateTime keeps 100-ns precision/,
    "Azurite: stores DateTime at millisecond precision",
  ],
];

/** Where AzureStore (the SDK path) passes a detail through that MemoryStore answers otherwise: every SDK-backed kind. */
const AZURE_STORE_DEVIATIONS: ReadonlyArray<[RegExp, string]> = [
  [
    /^entity CRUD > an unknown write mode/,
    "AzureStore: the write mode is typed input and not re-checked at the port",
  ],
  [
    /^paging > a malformed continuation/,
    "AzureStore: a malformed token fails in the SDK before any request, with another code",
  ],
  [
    /^EDM type round trips > special Double values survive/,
    "AzureStore: NaN/Infinity come back as strings; the schema layer converts them (AZURITE-NOTES)",
  ],
  [
    /^errors > a filter that is not a string/,
    "AzureStore: the filter is typed input and not re-checked at the port",
  ],
];

/**
 * Registers a hook that skips the tests listed for the kind (Azurite's deviations, AzureStore's, and
 * `tablekit serve`'s), with the reason as the skip note.
 */
export function skipAzuriteDeviations(kind: StoreKind): void {
  const list =
    kind.name === "azurite"
      ? [...AZURITE_DEVIATIONS, ...AZURE_STORE_DEVIATIONS]
      : kind.name === "serve"
        ? // The server itself has no deviations: any other difference from MemoryStore is a server bug.
          AZURE_STORE_DEVIATIONS
        : [];
  if (list.length === 0) return;
  beforeEach((context) => {
    const name = `${context.task.suite?.name ?? ""} > ${context.task.name}`;
    const deviation = list.find(([pattern]) => pattern.test(name));
    if (deviation) context.skip(deviation[1]);
  });
}
