import { Agent } from "node:http";
import { inject } from "vitest";
import { AzureStore, type AzureStoreOptions } from "../../src/store/azure/azure-store.js";

/** The connection string of the Azurite instance started by the global setup. */
export function azuriteConnectionString(): string {
  const connectionString = inject("azuriteConnectionString");
  if (!connectionString) {
    throw new Error(
      "Azurite is not part of this run (TABLEKIT_STORES leaves it out); guard the test with azuriteSelected",
    );
  }
  return connectionString;
}

/**
 * The keep-alive agent of the test stores. Azurite (its default keep-alive timeout) and `tablekit serve`
 * (table-server.ts) close a socket idle for 5 s; the SDK's own agent (`new http.Agent({ keepAlive: true })`) sets no timeout,
 * so it keeps an idle socket until the server closes it and ignores the server's `Keep-Alive: timeout=5`
 * hint (Node applies the hint only to shorten an agent timeout). A request that takes a socket in the
 * instant the server closes it fails with ECONNRESET; suites that run with `retry: false` (crash sweeps)
 * then fail by chance. This agent drops a socket after 2 s idle, well before the server does.
 */
const testAgent = new Agent({ keepAlive: true, timeout: 2_000 });

/** The options of a test store: the test agent unless the test brings its own agent or HTTP client. */
function withTestAgent(options: AzureStoreOptions | undefined): AzureStoreOptions | undefined {
  if (options?.agent !== undefined || options?.httpClient !== undefined) return options;
  return { ...options, agent: testAgent };
}

/** An `AzureStore` connected to the test Azurite. */
export function createAzuriteStore(options?: AzureStoreOptions): AzureStore {
  return AzureStore.fromConnectionString(azuriteConnectionString(), withTestAgent(options));
}

/** The connection string of the `tablekit serve` instance started by the global setup. */
export function serveConnectionString(): string {
  const connectionString = inject("serveConnectionString");
  if (!connectionString) {
    throw new Error("tablekit serve is not part of this run (TABLEKIT_STORES leaves it out)");
  }
  return connectionString;
}

/** An `AzureStore` connected to the test `tablekit serve`. */
export function createServeStore(options?: AzureStoreOptions): AzureStore {
  return AzureStore.fromConnectionString(serveConnectionString(), withTestAgent(options));
}
