import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { selectedStoreNames } from "./test/support/store-selection.js";

// TABLEKIT_STORES (e.g. `memory`) picks the stores a run covers; unset means all. Without Azurite the
// global setup starts nothing, and the AzureStore suites (all of test/store-azure/) are left out.
const withAzurite = selectedStoreNames().includes("azurite");
if (!withAzurite) {
  console.log(
    `TABLEKIT_STORES=${process.env.TABLEKIT_STORES}: Azurite not started, test/store-azure/** excluded`,
  );
}
// The wire-plan check records HTTP in front of a service (Azurite or serve): with neither there is no wire.
const withService = withAzurite || selectedStoreNames().includes("serve");
const needsService = ["test/planner/wire-plan.test.ts"];

export default defineConfig({
  // The examples import the package by its name (as tsconfig.json's paths say: src/ in the repository),
  // so tests that import them share one tablekit with the tests' own imports of src/.
  resolve: {
    alias: [
      { find: /^tablekit$/, replacement: fileURLToPath(new URL("./src/index.ts", import.meta.url)) },
      {
        find: /^tablekit\/(server|testing|nestjs)$/,
        replacement: fileURLToPath(new URL("./src/$1/index.ts", import.meta.url)),
      },
    ],
  },
  test: {
    include: ["test/**/*.test.ts"],
    exclude: [
      "**/node_modules/**",
      ...(withAzurite ? [] : ["test/store-azure/**"]),
      ...(withService ? [] : needsService),
    ],
    globalSetup: ["test/support/azurite-setup.ts"],
    // Hang guards, not performance limits: with a file per core (below), a heavy file (16 contending
    // writers, a crash sweep, a TypeScript program over every guide) takes 20-30 s on an idle 2-core
    // machine and up to three times that while the other core is busy too.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: "forks",
    // One test file per core, not vitest's default of one fewer: the files spend much of their time
    // waiting on Azurite and `tablekit serve` (processes of their own), so on a 2-core machine a second
    // worker overlaps those waits instead of leaving a core idle.
    maxWorkers: Math.max(2, availableParallelism()),
  },
});
