/**
 * What `import "tablekit"` loads (API.md, "Packages and first contact"): the static import graph of the
 * root entry, as the published ES build splits it (esbuild, code-split like scripts/build.mjs), holds no
 * server module and not the Blob SDK; both are reachable only through a dynamic import (the first
 * `startTableServer` call, the first large value).
 */
import { join } from "node:path";
import { build, type Metafile } from "esbuild";
import { beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "./consumer-projects.js";

interface Closure {
  /** Source files (relative to the repository) in the chunks the entry loads. */
  files: Set<string>;
  /** Packages and Node built-ins those chunks import. */
  packages: Set<string>;
}

/** The chunks reachable from `entry` through import statements (and, with `dynamic`, dynamic imports too). */
function closureOf(metafile: Metafile, entry: string, dynamic: boolean): Closure {
  const files = new Set<string>();
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = (output: string): void => {
    if (seen.has(output)) return;
    seen.add(output);
    const chunk = metafile.outputs[output];
    if (chunk === undefined) throw new Error(`no output ${output}`);
    for (const input of Object.keys(chunk.inputs)) files.add(input);
    for (const edge of chunk.imports) {
      if (edge.kind === "dynamic-import" && !dynamic) continue;
      if (edge.external) packages.add(edge.path);
      else visit(edge.path);
    }
  };
  visit(entry);
  return { files, packages };
}

describe("the root entry's module graph", () => {
  let metafile: Metafile;
  const entry = "out/index.js";

  beforeAll(async () => {
    const result = await build({
      absWorkingDir: repoRoot,
      entryPoints: { index: "src/index.ts" },
      outdir: "out",
      bundle: true,
      splitting: true,
      format: "esm",
      platform: "node",
      packages: "external",
      tsconfig: join(repoRoot, "tsconfig.build.json"),
      logLevel: "silent",
      metafile: true,
      write: false,
    });
    metafile = result.metafile;
  });

  it("statically loads no server module and not the Blob SDK", () => {
    const loaded = closureOf(metafile, entry, false);
    expect([...loaded.files].filter((file) => file.startsWith("src/server/"))).toEqual([]);
    expect([...loaded.packages].filter((name) => name.startsWith("@azure/storage-blob"))).toEqual([]);
    // node:http's server side and TLS come with the server only (AzureStore uses node:http's Agent).
    expect(loaded.packages.has("node:tls")).toBe(false);
    // What it does load: the client (the check above is not vacuous).
    expect(loaded.files.has("src/repository/facade/table-context.ts")).toBe(true);
    expect(loaded.packages.has("@azure/data-tables")).toBe(true);
  });

  it("reaches the server and the Blob SDK only through dynamic imports", () => {
    const all = closureOf(metafile, entry, true);
    expect(all.files.has("src/server/table-server.ts")).toBe(true);
    expect(all.packages.has("@azure/storage-blob")).toBe(true);
  });
});
