import { placeOf, withShard } from "../../src/store/sharded/shard-map.js";

/**
 * How many of `keys` move to shard d when it joins shards a, b and c, in `table`. Placement hashes the
 * table's name with the key (shard-map.ts), so under a random table name anywhere from none to all of
 * them move: a test whose steps need some moves picks its name with `nameWhere`.
 */
export function movingToD(table: string, keys: readonly string[]): number {
  const target = withShard({ version: 1, shards: ["a", "b", "c"] }, "d");
  return keys.filter((key) => placeOf(target, table, key, false) === "d").length;
}

/** The first name `make` gives that `accept`s (names are fresh each call, so the test's tables stay apart). */
export function nameWhere(make: () => string, accept: (name: string) => boolean): string {
  for (;;) {
    const name = make();
    if (accept(name)) return name;
  }
}

/** `p0` … `p{count-1}`, the partitions these tests write. */
export function partitionKeys(count: number): string[] {
  return Array.from({ length: count }, (_, p) => `p${p}`);
}
