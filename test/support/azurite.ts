import { inject } from "vitest";
import { AzureStore, type AzureStoreOptions } from "../../src/store/azure/azure-store.js";

/** The connection string of the Azurite instance started by the global setup. */
export function azuriteConnectionString(): string {
  return inject("azuriteConnectionString");
}

/** An `AzureStore` connected to the test Azurite. */
export function createAzuriteStore(options?: AzureStoreOptions): AzureStore {
  return AzureStore.fromConnectionString(azuriteConnectionString(), options);
}
