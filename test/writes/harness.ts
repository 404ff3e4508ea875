/**
 * Both stores behind a fault layer, with one API: `MemoryStore` behind `FaultyStore`, Azurite behind
 * the HTTP fault proxy (an `AzureStore` pointed at the proxy). `direct` reaches the same data without
 * faults (for foreign writers and for reading back); `plan` decides faults and counts requests.
 */
import { inject } from "vitest";
import { TableContext, type TableContextOptions } from "../../src/index.js";
import { AzureStore } from "../../src/store/azure/azure-store.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import type { StoreContinuation, StoredEntity, TableStore } from "../../src/store/table-store.js";
import { CountingStore } from "../support/counting-store.js";
import { type FaultProxy, startFaultProxy } from "../support/fault-proxy.js";
import { FaultPlan, type FaultPlanOptions, FaultyStore } from "../support/faulty-store.js";

/** Short backoff for tests: real but tiny delays, never used to wait for something. */
export const FAST_RETRY = { retries: 8, minDelayMs: 1, maxDelayMs: 20 } as const;

/** Per-request timeout of the Azure store behind the proxy. */
export const REQUEST_TIMEOUT_MS = 15_000;

export type StoreName = "memory" | "azurite";

export interface FaultyStores {
  name: StoreName;
  /** The store under test: every request passes the fault layer. */
  store: TableStore;
  /** The same data without faults (another writer, or a check of what is stored). */
  direct: TableStore;
  plan: FaultPlan;
  /** The proxy, on Azurite. */
  proxy?: FaultProxy;
  close(): Promise<void>;
}

export const storeNames: StoreName[] = ["memory", "azurite"];

/** Creates the fault-injected store of `name` with a fresh plan. */
export async function faultyStores(name: StoreName, options: FaultPlanOptions = {}): Promise<FaultyStores> {
  const plan = new FaultPlan(options);
  if (name === "memory") {
    const inner = new MemoryStore();
    return { name, store: new FaultyStore(inner, plan), direct: inner, plan, close: async () => {} };
  }
  const target = inject("azuriteConnectionString");
  const proxy = await startFaultProxy(target, plan);
  const store = AzureStore.fromConnectionString(proxy.connectionString, {
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
  });
  const direct = AzureStore.fromConnectionString(target, { requestTimeoutMs: REQUEST_TIMEOUT_MS });
  return { name, store, direct, plan, proxy, close: () => proxy.close() };
}

let counter = 0;

/** A table prefix no other test (or process) uses. */
export function freshPrefix(): string {
  counter += 1;
  return `w${process.pid.toString(36)}${Date.now().toString(36).slice(-5)}${counter}`;
}

/**
 * A context over the faulty store, with a `CountingStore` in front (it counts attempts as the
 * retry layer makes them, faulted or not). Tables are created before counting starts.
 */
export async function faultyContext(
  stores: FaultyStores,
  entities: Parameters<TableContext["ensureTables"]>,
  options: Partial<TableContextOptions> = {},
): Promise<{ db: TableContext; counter: CountingStore; prefix: string }> {
  const counter = new CountingStore(stores.store);
  const prefix = freshPrefix();
  const db = new TableContext({ store: counter, tablePrefix: prefix, retry: FAST_RETRY, ...options });
  const rate = stores.plan.rate;
  stores.plan.setRate(0);
  await db.ensureTables(...entities);
  stores.plan.setRate(rate);
  counter.reset();
  stores.plan.resetCounts();
  return { db, counter, prefix };
}

/** Every entity of a table, read page by page without faults. */
export async function readTable(store: TableStore, table: string): Promise<StoredEntity[]> {
  const all: StoredEntity[] = [];
  let continuation: StoreContinuation | undefined;
  do {
    const page = await store.queryPage(table, { top: 1000, ...(continuation ? { continuation } : {}) });
    all.push(...page.items);
    continuation = page.continuation;
  } while (continuation);
  return all;
}

/** Resolves to the error `promise` rejects with; fails when it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(
        `expected a rejection, got ${JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? String(v) : v))}`,
      );
    },
    (error: unknown) => error,
  );
}
