/** The Azure Table Storage adapter of the store port. */

export { type AzureErrorContext, type AzureOperation, translateAzureError } from "./azure-errors.js";
export { type AzureCredential, AzureStore } from "./azure-store.js";
export type { AzureStoreOptions } from "./azure-store-options.js";
