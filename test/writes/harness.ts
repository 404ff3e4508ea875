/**
 * Both stores behind a fault layer, with one API: `MemoryStore` behind `FaultyStore`, Azurite behind
 * the HTTP fault proxy (an `AzureStore` pointed at the proxy). `direct` reaches the same data without
 * faults (for foreign writers and for reading back); `plan` decides faults and counts requests.
 */
import { inject } from "vitest";
import { TableContext, type TableContextOptions } from "../../src/index.js";
import { AzureStore } from "../../src/store/azure/azure-store.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import type { TableStore } from "../../src/store/table-store.js";
import { CountingStore } from "../support/counting-store.js";
import { type FaultProxy, startFaultProxy } from "../support/fault-proxy.js";
import { FaultPlan, type FaultPlanOptions, FaultyStore } from "../support/faulty-store.js";
import { type StoreName, selectedStoreNames } from "../support/store-selection.js";
import { uniquePrefix } from "../support/table-names.js";

export { readAll as readTable } from "../support/read-all.js";
export { rejectionOf } from "../support/rejection.js";
export type { StoreName } from "../support/store-selection.js";

/**
 * Short backoff for tests: real but tiny delays, never used to wait for something. 8 retries is more
 * than a `FaultPlan` faults any one request (`maxFaultsPerRequest`, default 3), so retries never run out.
 */
export const FAST_RETRY = { retries: 8, minDelayMs: 1, maxDelayMs: 20 } as const;

/** Per-request timeout of the Azure store behind the proxy. */
export const REQUEST_TIMEOUT_MS = 15_000;

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

/** The stores this run covers (`TABLEKIT_STORES`, default both). */
export const storeNames: StoreName[] = selectedStoreNames();

/** Creates the fault-injected store of `name` with a fresh plan. */
export async function faultyStores(name: StoreName, options: FaultPlanOptions = {}): Promise<FaultyStores> {
  const plan = new FaultPlan(options);
  if (name === "memory") {
    const inner = new MemoryStore();
    return { name, store: new FaultyStore(inner, plan), direct: inner, plan, close: async () => {} };
  }
  const target = inject(name === "serve" ? "serveConnectionString" : "azuriteConnectionString");
  const proxy = await startFaultProxy(target, plan);
  const store = AzureStore.fromConnectionString(proxy.connectionString, {
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
  });
  const direct = AzureStore.fromConnectionString(target, { requestTimeoutMs: REQUEST_TIMEOUT_MS });
  return { name, store, direct, plan, proxy, close: () => proxy.close() };
}

/** A table prefix no other test (or process) uses. */
export function freshPrefix(): string {
  return uniquePrefix("w");
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
