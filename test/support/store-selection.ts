/**
 * Which stores a test run covers: `TABLEKIT_STORES` (comma-separated, e.g. `memory` or `memory,azurite`);
 * unset means every store. Read by the global setup (to skip starting Azurite) and by the store list.
 */

/** The name of a store implementation tests can run against. */
export type StoreName = "memory" | "azurite" | "serve";

/** Every store implementation, in the order tests run them. */
export const ALL_STORE_NAMES: readonly StoreName[] = ["memory", "azurite", "serve"];

/** The stores selected by `TABLEKIT_STORES` (all when unset); an unknown name is an error, not a silent skip. */
export function selectedStoreNames(env: string | undefined = process.env.TABLEKIT_STORES): StoreName[] {
  if (env === undefined || env.trim() === "") return [...ALL_STORE_NAMES];
  const names = env
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== "");
  for (const name of names) {
    if (!(ALL_STORE_NAMES as readonly string[]).includes(name)) {
      throw new Error(`TABLEKIT_STORES: unknown store '${name}' (known: ${ALL_STORE_NAMES.join(", ")})`);
    }
  }
  return ALL_STORE_NAMES.filter((name) => names.includes(name));
}
