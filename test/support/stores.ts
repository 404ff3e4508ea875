import { MemoryStore } from "../../src/store/memory/memory-store.js";
import type { TableStore } from "../../src/store/table-store.js";
import { createAzuriteStore, createServeStore } from "./azurite.js";
import { type StoreName, selectedStoreNames } from "./store-selection.js";

export { type StoreName, selectedStoreNames } from "./store-selection.js";
export { uniqueTableName } from "./table-names.js";

/** A way to create a store under test; contract tests run once per entry. */
export interface StoreKind {
  name: StoreName;
  create(): TableStore;
}

/** Every store implementation, whether selected or not. */
export const allStoreKinds: readonly StoreKind[] = [
  { name: "memory", create: () => new MemoryStore() },
  { name: "azurite", create: () => createAzuriteStore() },
  // AzureStore through the SDK against `tablekit serve`: the wire protocol checked by every suite.
  { name: "serve", create: () => createServeStore() },
];

/** The store implementations this run covers (`TABLEKIT_STORES`, default all): tests that must hold on every store. */
export const storeKinds: StoreKind[] = allStoreKinds.filter((kind) =>
  selectedStoreNames().includes(kind.name),
);

/**
 * Whether Azurite is part of this run. Azurite-only suites use `describe.skipIf(!azuriteSelected)`,
 * so `TABLEKIT_STORES=memory` reports them as skipped instead of failing to connect.
 */
export const azuriteSelected: boolean = selectedStoreNames().includes("azurite");

/**
 * The selected kinds whose store has a blob part (large values): `tablekit serve` speaks the Table
 * protocol only, so its AzureStore has no Blob endpoint.
 */
export const blobStoreKinds: StoreKind[] = storeKinds.filter((kind) => kind.name !== "serve");

/** Whether the `tablekit serve` store is part of this run (its server is started by the global setup). */
export const serveSelected: boolean = selectedStoreNames().includes("serve");
