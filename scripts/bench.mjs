// `npm run bench`: runs bench/run.ts as the published package runs, compiled by esbuild into one
// bundle beside it (bench/.run.bundle.mjs, not committed), then `node --expose-gc` on that bundle.
// Under `--import tsx` every closure tablekit creates at run time also paid an Object.defineProperty
// (tsx compiles with esbuild's keepNames), which the published build (scripts/build.mjs) does not do
// and the precompiled SDK it is compared with does not pay either.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import esbuild from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
// Beside bench/run.ts, so the paths it resolves from import.meta.url stay the same.
const outfile = join(root, "bench", ".run.bundle.mjs");
await esbuild.build({
  absWorkingDir: root,
  entryPoints: ["bench/run.ts"],
  outfile,
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  tsconfig: "tsconfig.json",
  logLevel: "warning",
  logOverride: { "empty-import-meta": "silent" },
});
const run = spawnSync(process.execPath, ["--expose-gc", outfile, ...process.argv.slice(2)], {
  stdio: "inherit",
});
process.exit(run.status ?? 1);
