import { MemoryStore } from "../../src/store/memory/memory-store.js";
import type { TableStore } from "../../src/store/table-store.js";
import { createAzuriteStore } from "./azurite.js";

export { uniqueTableName } from "./table-names.js";

/** A way to create a store under test; contract tests run once per entry. */
export interface StoreKind {
  name: "memory" | "azurite";
  create(): TableStore;
}

/** Every store implementation, for tests that must hold on all of them. */
export const storeKinds: StoreKind[] = [
  { name: "memory", create: () => new MemoryStore() },
  { name: "azurite", create: () => createAzuriteStore() },
];
