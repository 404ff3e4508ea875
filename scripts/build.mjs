// Builds the published package: declarations from TypeScript 5.9, and the JavaScript bundled by esbuild
// twice: ES modules (dist/esm/, code-split: the entries share chunks, and what loads lazily, the table
// server and the Blob SDK's adapter, is its own chunk) and CommonJS (dist/cjs/) for Node 20.0–20.18,
// which cannot require() an ES module.
// Bundled because a cold `import "tablekit"` of ~180 separate ES module files costs Node twice the
// CPU of the same code in a few files (bench: `npm run bench -- --only cold-start`).
// Source maps are not shipped: they would point at sources the package does not contain.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "dist");
const esm = join(dist, "esm");
const cjs = join(dist, "cjs");
const require = createRequire(join(root, "package.json"));
const esbuild = require("esbuild");

rmSync(dist, { recursive: true, force: true });

// Declarations only; TypeScript 5.9 by path: `.bin/tsc` may be TypeScript 7 (installed as typescript7).
execFileSync(
  process.execPath,
  [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json", "--emitDeclarationOnly"],
  { cwd: root, stdio: "inherit" },
);

const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const packages = Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies, ...pkg.optionalDependencies });
// The subpath entries that exist (`tablekit/nestjs` comes with its integration).
const subpaths = ["server", "testing", "nestjs", "vitest"].filter((entry) =>
  existsSync(join(root, "src", entry, "index.ts")),
);
// The bin scripts (`./dist/esm/<path>.js` is built from `src/<path>.ts`).
const bins = Object.values(typeof pkg.bin === "string" ? { [pkg.name]: pkg.bin } : (pkg.bin ?? {})).map(
  (file) => relative("dist/esm", file).replace(/\.js$/, ""),
);
const common = {
  absWorkingDir: root,
  bundle: true,
  platform: "node",
  target: "node20",
  tsconfig: "tsconfig.build.json",
  legalComments: "inline",
  logLevel: "warning",
  // `typeof __filename === "string" ? __filename : import.meta.url` (a require() beside the file) is
  // only evaluated where import.meta exists.
  logOverride: { "empty-import-meta": "silent" },
  metafile: true,
};

// ES modules: every package stays an import (ESM loads ESM-only packages).
await esbuild.build({
  ...common,
  format: "esm",
  splitting: true,
  packages: "external",
  outdir: esm,
  entryPoints: Object.fromEntries(
    ["index", ...subpaths.map((entry) => `${entry}/index`), ...bins].map((name) => [name, `src/${name}.ts`]),
  ),
  chunkNames: "chunks/[name]-[hash]",
});

// CommonJS keeps every package a require() away, except those that publish only ES modules (none today):
// those are bundled, or the require() would fail on Node < 20.19. Peer dependencies (Nest,
// OpenTelemetry) are the user's own copies and never bundled, whatever their module format.
const bundled = Object.keys(pkg.dependencies ?? {}).filter(isEsmOnly);
const cjsOptions = {
  ...common,
  format: "cjs",
  external: packages.filter((name) => !bundled.includes(name)),
  write: false,
};
// The root bundle holds the server too, behind `startTableServer`'s dynamic import: esbuild wraps
// dynamically imported modules in a lazy initialiser, so requiring the root runs none of it.
writeCjs("index.js", await esbuild.build({ ...cjsOptions, entryPoints: ["src/index.ts"] }));
// `tablekit/server` in CommonJS is the root's (lazy) startTableServer: one copy of the server and of
// MemoryStore, which it serves.
mkdirSync(join(cjs, "server"), { recursive: true });
writeFileSync(
  join(cjs, "server", "index.js"),
  '"use strict";\n// The table server lives in the root bundle, loaded on the first call.\nexports.startTableServer = require("../index.js").startTableServer;\n',
);
// Other subpath entries (testing, nestjs; vitest imports none of it) import tablekit through the public entry (src/index.ts);
// their bundles require the root bundle for it instead of holding a second copy of its classes (a
// second decorator registry would not know the user's entities).
for (const entry of subpaths.filter((name) => name !== "server")) {
  const result = await esbuild.build({
    ...cjsOptions,
    entryPoints: [`src/${entry}/index.ts`],
    plugins: [publicEntryExternal()],
  });
  writeCjs(`${entry}/index.js`, result);
}
// dist/cjs is CommonJS whatever the root package says; its declarations are the ESM ones read as
// CommonJS, so `require` consumers get types resolved in their own module mode.
writeFileSync(join(cjs, "package.json"), `${JSON.stringify({ type: "commonjs" }, null, 2)}\n`);
for (const file of readdirSync(esm, { recursive: true, encoding: "utf8" })) {
  if (file.endsWith(".d.ts")) {
    mkdirSync(dirname(join(cjs, file)), { recursive: true });
    cpSync(join(esm, file), join(cjs, file));
  }
}
console.log(`built dist/esm/ (ESM) and dist/cjs/ (CommonJS; bundled: ${bundled.join(", ") || "none"})`);

/** Writes one CommonJS bundle under dist/cjs, with the licence notice of what it bundled. */
function writeCjs(file, result) {
  // The bundled packages' licences (MIT) ask for their notice to travel with the copy.
  const vendored = [...new Set(Object.keys(result.metafile.inputs).flatMap(packageOf))].sort();
  const notice = vendored.map((name) => {
    const m = JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8"));
    const author = typeof m.author === "string" ? m.author : (m.author?.name ?? "its authors");
    return ` * ${name}@${m.version} (${m.license}) © ${author}`;
  });
  const banner = vendored.length ? `/*!\n * Bundled in this file:\n${notice.join("\n")}\n */\n` : "";
  mkdirSync(dirname(join(cjs, file)), { recursive: true });
  writeFileSync(join(cjs, file), banner + result.outputFiles[0].text);
}

/** Resolves imports of src/index.ts to a require() of the root bundle (dist/cjs/index.js). */
function publicEntryExternal() {
  return {
    name: "public-entry-external",
    setup(build) {
      build.onResolve({ filter: /^\.\.?\// }, (args) => {
        const target = resolve(args.resolveDir, args.path).replace(/\.js$/, ".ts");
        if (target !== join(root, "src", "index.ts")) return undefined;
        // Each subpath bundle sits one folder below dist/cjs.
        return { path: "../index.js", external: true };
      });
    },
  };
}

/** A dependency that a CommonJS require() cannot load on Node 20.0–20.18: ESM and no `require` export. */
function isEsmOnly(name) {
  // Read the manifest directly: packages with an export map need not export ./package.json.
  const path = join(root, "node_modules", name, "package.json");
  // An optional peer that is not installed is not bundled either.
  if (!existsSync(path)) return false;
  const manifest = JSON.parse(readFileSync(path, "utf8"));
  if (manifest.type !== "module") return false;
  return !JSON.stringify(manifest.exports ?? {}).includes('"require"');
}

/** The package a bundled input file came from (`node_modules/<name>/…`), if any. */
function packageOf(input) {
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
  return match ? [match[1]] : [];
}
