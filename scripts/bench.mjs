// `npm run bench`: runs bench/run.ts as the published package runs, compiled by esbuild into one
// bundle beside it (bench/.run.bundle.mjs, not committed), then `node --expose-gc` on that bundle.
// Under `--import tsx` every closure tablekit creates at run time also paid an Object.defineProperty
// (tsx compiles with esbuild's keepNames), which the published build (scripts/build.mjs) does not do
// and the precompiled SDK it is compared with does not pay either.
import { spawnSync } from "node:child_process";
import { bundleBench } from "./bench-bundle.mjs";

const outfile = await bundleBench("run", { logOverride: { "empty-import-meta": "silent" } });
const run = spawnSync(process.execPath, ["--expose-gc", outfile, ...process.argv.slice(2)], {
  stdio: "inherit",
});
process.exit(run.status ?? 1);
