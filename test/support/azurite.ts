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

/** An `AzureStore` connected to the test Azurite. */
export function createAzuriteStore(options?: AzureStoreOptions): AzureStore {
  return AzureStore.fromConnectionString(azuriteConnectionString(), options);
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
  return AzureStore.fromConnectionString(serveConnectionString(), options);
}
