// Builds the published package: ESM with declarations from TypeScript 5.9 (dist/esm/), and a
// CommonJS bundle beside it (dist/cjs/) for Node 20.0–20.18, which cannot require() an ES module.
// Source maps are not shipped: they would point at sources the package does not contain.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "dist");
const esm = join(dist, "esm");
const cjs = join(dist, "cjs");
const require = createRequire(join(root, "package.json"));

rmSync(dist, { recursive: true, force: true });

// TypeScript 5.9 by path: `.bin/tsc` may be TypeScript 7 (installed as typescript7).
execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], {
  cwd: root,
  stdio: "inherit",
});

// The CommonJS build keeps every dependency a require() away, except the ones that publish only
// ES modules (p-retry): those are bundled, or the require() would fail on Node < 20.19.
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const dependencies = Object.keys(pkg.dependencies ?? {});
const bundled = dependencies.filter(isEsmOnly);
const esbuild = require("esbuild");
const result = esbuild.buildSync({
  absWorkingDir: root,
  entryPoints: ["src/index.ts"],
  outfile: join(cjs, "index.js"),
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  tsconfig: "tsconfig.build.json",
  // Optional peer dependencies (@opentelemetry/api, Nest) stay outside too: loaded only if installed.
  external: [
    ...dependencies.filter((name) => !bundled.includes(name)),
    ...Object.keys(pkg.peerDependencies ?? {}),
  ],
  legalComments: "inline",
  logLevel: "warning",
  metafile: true,
  write: false,
});
// The bundled packages' licences (MIT) ask for their notice to travel with the copy.
const vendored = [...new Set(Object.keys(result.metafile.inputs).flatMap(packageOf))].sort();
const notice = vendored.map((name) => {
  const m = JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8"));
  const author = typeof m.author === "string" ? m.author : (m.author?.name ?? "its authors");
  return ` * ${name}@${m.version} (${m.license}) © ${author}`;
});
const banner = vendored.length ? `/*!\n * Bundled in this file:\n${notice.join("\n")}\n */\n` : "";
mkdirSync(cjs, { recursive: true });
writeFileSync(join(cjs, "index.js"), banner + result.outputFiles[0].text);
// dist/cjs is CommonJS whatever the root package says; its declarations are the ESM ones read as
// CommonJS, so `require` consumers get types resolved in their own module mode.
writeFileSync(join(cjs, "package.json"), `${JSON.stringify({ type: "commonjs" }, null, 2)}\n`);
for (const file of readdirSync(esm, { recursive: true, encoding: "utf8" })) {
  if (file.endsWith(".d.ts")) cpSync(join(esm, file), join(cjs, file));
}
console.log(`built dist/esm/ (ESM) and dist/cjs/ (CommonJS; bundled: ${bundled.join(", ") || "none"})`);

/** A dependency that a CommonJS require() cannot load on Node 20.0–20.18: ESM and no `require` export. */
function isEsmOnly(name) {
  // Read the manifest directly: packages with an export map need not export ./package.json.
  const manifest = JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8"));
  if (manifest.type !== "module") return false;
  return !JSON.stringify(manifest.exports ?? {}).includes('"require"');
}

/** The package a bundled input file came from (`node_modules/<name>/…`), if any. */
function packageOf(input) {
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
  return match ? [match[1]] : [];
}
