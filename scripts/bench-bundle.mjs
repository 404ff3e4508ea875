// A bench script compiled as the published package is (esbuild, one ESM bundle beside its source,
// dependencies left external), so it runs under plain `node` without tsx's per-closure cost.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import esbuild from "esbuild";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Bundles `bench/<name>.ts` into `bench/.<name>.bundle.mjs` (not committed) and resolves its path. */
export async function bundleBench(name, options = {}) {
  // Beside its source, so the paths it resolves from import.meta.url stay the same.
  const outfile = join(root, "bench", `.${name}.bundle.mjs`);
  await esbuild.build({
    absWorkingDir: root,
    entryPoints: [`bench/${name}.ts`],
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    packages: "external",
    tsconfig: "tsconfig.json",
    logLevel: "warning",
    ...options,
  });
  return outfile;
}
