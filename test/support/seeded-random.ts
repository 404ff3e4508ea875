/**
 * The one seeded PRNG of the tests, a string hash for per-request decisions, and the run's seed.
 * Every random choice in a test comes from here, so a failure can be replayed from its printed seed.
 */

/** mulberry32: a small, fast, seeded PRNG with values in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A number in [0, 1) fixed by `seed` and `parts` alone (FNV-1a, then one mulberry32 step to spread the bits). */
export function hashToUnit(seed: number, ...parts: ReadonlyArray<string | number>): number {
  // The seed is hashed as a part of its own, so it cannot cancel against the first character.
  let hash = 0x811c9dc5;
  for (const part of [seed >>> 0, ...parts]) {
    const text = `${String(part)}\u0000`;
    for (let i = 0; i < text.length; i++) {
      hash ^= text.charCodeAt(i);
      hash = Math.imul(hash, 0x01000193);
    }
  }
  return seededRandom(hash)();
}

/** A seeded Fisher–Yates shuffle (a copy). */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const random = seededRandom(seed);
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

/**
 * The seed of a seeded test: `fallback` unless `TABLEKIT_TEST_SEED` is set (then mixed with `fallback`,
 * so each test still gets its own stream). Put the result in the test's name so a failure prints it;
 * `npm run test:repeat` sets a new `TABLEKIT_TEST_SEED` per run.
 */
export function testSeed(fallback: number): number {
  const run = process.env.TABLEKIT_TEST_SEED;
  if (run === undefined || run === "") return fallback;
  const value = Number(run);
  if (!Number.isSafeInteger(value)) throw new Error(`TABLEKIT_TEST_SEED must be an integer, got '${run}'`);
  return Math.floor(hashToUnit(value, fallback) * 2 ** 31);
}
