/** What the crash test's parent and its child writer (crash-writer.ts) agree on. */

/** The keys written: few enough that inserts, updates and deletes of the same keys interleave. */
export const CRASH_KEYS: ReadonlyArray<readonly [string, number]> = ["North", "South"].flatMap((department) =>
  [1, 2, 3, 4, 5].map((id) => [department, id] as const),
);

/** Versions written by run `seed` start above every version of earlier runs. */
export function firstVersion(seed: number): number {
  return seed * 100_000;
}

/** A small seeded PRNG (mulberry32), so a run can be replayed from its seed. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
