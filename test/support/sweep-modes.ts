import { testSeed } from "./seeded-random.js";

/** `npm run test:repeat` sets it: every crash sweep in every mode on every store. */
const FULL = process.env.TABLEKIT_CRASH_SWEEPS === "full";

/**
 * The modes a crash-point sweep runs on a store (each mode interrupts a write at every one of its
 * requests). The interruption is a store wrapper's, the same on every store, and a sweep takes under a
 * second on the reference store but 5-10 s on each service: so the default run sweeps every mode on
 * MemoryStore and one on Azurite and on `tablekit serve`, picked by the run's seed (another seed, another
 * mode: `npm run test:repeat` runs several), and `TABLEKIT_CRASH_SWEEPS=full` (test:repeat) every mode
 * everywhere. This keeps `npm test` within its budget on 2 cores.
 */
export function sweepModes<M extends string>(store: string, modes: readonly M[]): M[] {
  if (FULL || store === "memory") return [...modes];
  const salt = store === "azurite" ? 0x5eed : 0x5e7e;
  return [modes[testSeed(salt) % modes.length] as M];
}
