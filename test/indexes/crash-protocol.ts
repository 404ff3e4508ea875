/** What the crash test's parent and its child writer (crash-writer.ts) agree on. */

/** The keys written: few enough that inserts, updates and deletes of the same keys interleave. */
export const CRASH_KEYS: ReadonlyArray<readonly [string, number]> = ["North", "South"].flatMap((department) =>
  [1, 2, 3, 4, 5].map((id) => [department, id] as const),
);

/** Versions written by run `seed` start above every version of earlier runs. */
export function firstVersion(seed: number): number {
  return seed * 100_000;
}
