import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * The layer order of `src/` (CONTRIBUTING.md): each folder imports only the folders listed for it.
 * `wire` is the shared vocabulary at the bottom; `repository` orchestrates everything above the port.
 */
const ALLOWED: Record<string, readonly string[]> = {
  wire: [],
  errors: ["wire"],
  util: ["wire", "errors"],
  keys: ["util", "wire", "errors"],
  serialization: ["keys", "util", "wire", "errors"],
  schema: ["serialization", "keys", "util", "wire", "errors"],
  query: ["schema", "serialization", "keys", "util", "wire", "errors"],
  store: ["util", "wire", "errors"],
  // Spans around store requests and around calls; loads @opentelemetry/api only if installed.
  telemetry: ["query", "schema", "serialization", "keys", "store", "util", "wire", "errors"],
  repository: ["telemetry", "query", "schema", "serialization", "keys", "store", "util", "wire", "errors"],
  // The table server speaks the wire protocol over the served-store port (store/served-store.ts, which
  // MemoryStore implements through `served()`), never a store's internals: see "the server on a port" below.
  server: ["store", "util", "wire", "errors"],
  // tablekit/nestjs: its own subpath (Nest is an optional peer dependency) over the package entry only; nothing imports it.
  nestjs: ["index"],
  // Data movement (export, import, copy, verify) speaks the wire protocol through the SDK's pipeline.
  movement: ["store", "util", "wire", "errors"],
  // The command line sits on top: it may import everything.
  cli: [
    "movement",
    "server",
    "repository",
    "query",
    "schema",
    "serialization",
    "keys",
    "store",
    "util",
    "wire",
    "errors",
  ],
  // The test kit (tablekit/testing) uses the public entry only, so its CommonJS bundle shares the
  // root bundle's classes (one decorator registry, one TableContext).
  testing: ["index"],
  // tablekit/vitest: a Vite plugin for the user's test set-up; it imports nothing of tablekit's.
  vitest: [],
};

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "../../src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

/** The layer of a file: its top folder under src, or the file's own name for top-level files. */
function layerOf(file: string): string {
  const [first] = relative(SRC, file).split("/");
  return first!.replace(/\.ts$/, "");
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specifiers = [...text.matchAll(/(?:^|\n)\s*(?:import|export)[^"';]*?from\s+"([^"]+)"/g)].map(
    (m) => m[1]!,
  );
  const bare = [...text.matchAll(/(?:^|\n)\s*import\s+"([^"]+)"/g)].map((m) => m[1]!);
  return [...specifiers, ...bare]
    .filter((s) => s.startsWith("."))
    .map((s) => resolve(dirname(file), s.replace(/\.js$/, ".ts")));
}

const files = sourceFiles(SRC).filter((f) => layerOf(f) !== "index");
const graph = new Map(files.map((f) => [f, importsOf(f)]));

describe("source layers", () => {
  it("knows the layer of every source file", () => {
    const unknown = files.map(layerOf).filter((layer) => !(layer in ALLOWED));
    expect(unknown).toEqual([]);
  });

  it("imports only downward", () => {
    const violations: string[] = [];
    for (const [file, imports] of graph) {
      const from = layerOf(file);
      for (const target of imports) {
        const to = layerOf(target);
        if (to !== from && !ALLOWED[from]?.includes(to)) {
          violations.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
        }
      }
    }
    expect(violations).toEqual([]);
  });

  it("keeps the optional peers out of the package entry: Nest only in nestjs/, OpenTelemetry only as types", () => {
    const offenders = sourceFiles(SRC).filter((file) => {
      const text = readFileSync(file, "utf8");
      const nest = layerOf(file) !== "nestjs" && /from\s+"@nestjs\//.test(text);
      const otel = /^\s*import\s+(?!type\b)[^;]*from\s+"@opentelemetry\//m.test(text);
      const entry = layerOf(file) === "index" && /from\s+"\.\/nestjs\//.test(text);
      return nest || otel || entry;
    });
    expect(offenders.map((file) => relative(SRC, file))).toEqual([]);
  });

  it("has no import cycle", () => {
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const stack: string[] = [];
    const visit = (file: string): void => {
      state.set(file, "open");
      stack.push(file);
      for (const next of graph.get(file) ?? []) {
        if (state.get(next) === "open") {
          cycles.push(
            stack
              .slice(stack.indexOf(next))
              .concat(next)
              .map((f) => relative(SRC, f))
              .join(" -> "),
          );
        } else if (!state.has(next) && graph.has(next)) {
          visit(next);
        }
      }
      stack.pop();
      state.set(file, "done");
    };
    for (const file of graph.keys()) if (!state.has(file)) visit(file);
    expect(cycles).toEqual([]);
  });
});

describe("the server on a port", () => {
  // What src/server may import from src/store: the two ports. Only the composition roots, which make
  // the default store (`startTableServer` without `store`, `tablekit serve`), name MemoryStore.
  const PORTS = ["store/served-store.ts", "store/table-store.ts"];
  const ROOTS = ["server/table-server.ts"];

  it("imports from store only the ports (MemoryStore itself only where the default store is made)", () => {
    const violations: string[] = [];
    for (const [file, imports] of graph) {
      if (layerOf(file) !== "server") continue;
      for (const target of imports) {
        const to = relative(SRC, target);
        if (layerOf(target) !== "store" || PORTS.includes(to)) continue;
        if (ROOTS.includes(relative(SRC, file)) && to === "store/memory/memory-store.ts") continue;
        violations.push(`${relative(SRC, file)} -> ${to}`);
      }
    }
    expect(violations).toEqual([]);
  });
});

describe("the write path's sub-layers (src/repository)", () => {
  /**
   * `pipeline` is how one request reaches the store (limits, request slots, pacing, retry, encryption,
   * period tables); `core` is what every write shares (the runner, lost answers, intents, bulk
   * scheduling, reads of an entity's rows); each feature stage builds on those two and never on
   * another stage; the façade (context, repository, transaction, eventually, dynamic) composes them.
   */
  const STAGES = ["index", "summary", "large", "wide", "feed"];
  const BELOW: Record<string, readonly string[]> = {
    pipeline: [],
    core: ["pipeline"],
    ...Object.fromEntries(STAGES.map((stage) => [stage, ["core", "pipeline"]])),
    facade: ["core", "pipeline", ...STAGES],
  };
  const REPOSITORY = join(SRC, "repository");
  const sublayerOf = (file: string): string | undefined => {
    const path = relative(REPOSITORY, file);
    return path.startsWith("..") ? undefined : path.split("/")[0];
  };
  const inRepository = [...graph.keys()].filter((file) => sublayerOf(file) !== undefined);

  it("puts every file of src/repository in a known sub-layer folder", () => {
    const loose = inRepository.filter((file) => !((sublayerOf(file) as string) in BELOW));
    expect(loose.map((file) => relative(SRC, file))).toEqual([]);
  });

  it("imports only downward between sub-layers: stages never import each other or the façade", () => {
    const violations: string[] = [];
    for (const file of inRepository) {
      const from = sublayerOf(file) as string;
      for (const target of graph.get(file) ?? []) {
        const to = sublayerOf(target);
        if (to === undefined || to === from) continue;
        if (!BELOW[from]?.includes(to)) violations.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it("names the runner only where the store stack is composed: the rest takes the roles of core/requests.ts", () => {
    const runner = join(REPOSITORY, "core", "store-runner.ts");
    const importers = [...graph]
      .filter(([, imports]) => imports.includes(runner))
      .map(([file]) => relative(SRC, file));
    expect(importers).toEqual(["repository/facade/table-context.ts"]);
  });
});
