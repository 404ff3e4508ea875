import { MemoryStore } from "../../src/store/memory/memory-store.js";
import type { TableStore } from "../../src/store/table-store.js";

/** A store whose results come unsorted (`capabilities.sortedResults === false`), with the seed of its order. */
export interface UnsortedStoreKind {
  /** Names the seed, so a failing order can be replayed. */
  name: string;
  seed: number;
  create(): TableStore;
}

/** Seeds of the Cosmos-flavoured memory store's result order that order-dependent tests run with. */
export const COSMOS_ORDER_SEEDS = [1, 2, 3] as const;

/**
 * The Cosmos-flavoured reference store, once per seed: tests asserting key order run against these
 * besides `storeKinds`, and either compare as sets or assert the order tablekit promises on every store.
 */
export const unsortedStoreKinds: UnsortedStoreKind[] = COSMOS_ORDER_SEEDS.map((seed) => ({
  name: `memory-cosmos (seed ${seed})`,
  seed,
  create: () => new MemoryStore({ flavor: "cosmos", seed }),
}));
