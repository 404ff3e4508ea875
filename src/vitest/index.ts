/**
 * `tablekit/vitest`: a Vite plugin that lets a default vitest 4 project run standard-decorator code.
 *
 * Vitest 4 compiles TypeScript with Vite 8's Oxc transform, which compiles legacy decorators
 * (`experimentalDecorators`) but leaves standard ones as written, and Node 20 cannot parse them
 * (`SyntaxError: Invalid or unexpected token`). This plugin compiles each TypeScript file that has a
 * decorator with esbuild first (as tsx does), down to ES2022. In a project whose tsconfig.json sets
 * `experimentalDecorators`, it does nothing: Oxc then compiles the legacy decorators and their
 * `emitDecoratorMetadata` itself.
 * @example
 * // vitest.config.ts
 * import { standardDecorators } from "tablekit/vitest";
 * import { defineConfig } from "vitest/config";
 *
 * export default defineConfig({ plugins: [standardDecorators()] });
 * @packageDocumentation
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { transform } from "esbuild";

/** Options of {@link standardDecorators}. */
export interface StandardDecoratorsOptions {
  /**
   * Whether the project uses legacy decorators (then the plugin does nothing). Default: what the
   * tsconfig.json in vitest's root says (`compilerOptions.experimentalDecorators`, through `extends`).
   */
  legacy?: boolean;
}

/** The Vite plugin (structurally a Vite `Plugin`: tablekit does not depend on Vite's types). */
export interface StandardDecoratorsPlugin {
  readonly name: "tablekit:standard-decorators";
  readonly enforce: "pre";
  /** Reads the project's tsconfig.json once Vite knows the root: legacy decorators need no help. */
  configResolved(config: { readonly root: string }): void;
  /** Compiles one TypeScript file that has a decorator with esbuild (others are left as they are). */
  transform(code: string, id: string): Promise<{ code: string; map: string } | undefined>;
}

/** TypeScript sources, without Vite's query suffix (`?v=…`); never what is under node_modules. */
const TYPESCRIPT = /\.(?:[cm]?ts|tsx)$/;

/** Compiles the standard decorators of the project's TypeScript files (see the module's description). */
export function standardDecorators(options: StandardDecoratorsOptions = {}): StandardDecoratorsPlugin {
  let legacy = options.legacy ?? false;
  return {
    name: "tablekit:standard-decorators",
    enforce: "pre",
    configResolved(config) {
      legacy = options.legacy ?? usesLegacyDecorators(join(config.root, "tsconfig.json"));
    },
    async transform(code, id) {
      const file = id.split("?", 1)[0] ?? id;
      // A decorator needs an `@`; files without one are left to Vite as they are.
      if (legacy || !TYPESCRIPT.test(file) || file.includes("/node_modules/") || !code.includes("@")) {
        return undefined;
      }
      const result = await transform(code, {
        loader: file.endsWith(".tsx") ? "tsx" : "ts",
        // Node 20 runs ES2022; esbuild compiles standard decorators down to it.
        target: "es2022",
        format: "esm",
        sourcemap: "external",
        sourcefile: file,
      });
      return { code: result.code, map: result.map };
    },
  };
}

/** Whether a tsconfig.json (or one it extends by relative path) sets `experimentalDecorators`. */
function usesLegacyDecorators(path: string): boolean {
  return decoratorSetting(path, 0) ?? false;
}

/** `experimentalDecorators` as a tsconfig.json sets it or inherits it; `undefined` if nowhere. */
function decoratorSetting(path: string, depth: number): boolean | undefined {
  if (depth > 8 || !existsSync(path)) return undefined;
  const config = readJsonc(path) as {
    extends?: unknown;
    compilerOptions?: { experimentalDecorators?: unknown };
  };
  const own = config.compilerOptions?.experimentalDecorators;
  if (typeof own === "boolean") return own;
  const parents = (Array.isArray(config.extends) ? config.extends : [config.extends]).filter(
    (parent): parent is string => typeof parent === "string" && parent.startsWith("."),
  );
  // Later entries of an `extends` list override earlier ones.
  for (const parent of parents.reverse()) {
    const file = resolve(dirname(path), parent);
    const inherited = decoratorSetting(file.endsWith(".json") ? file : `${file}.json`, depth + 1);
    if (inherited !== undefined) return inherited;
  }
  return undefined;
}

/** JSON with comments and trailing commas, as `tsc --init` writes tsconfig.json. */
function readJsonc(path: string): unknown {
  // Strings are kept as they are (a `//` or `,}` inside one is text); comments and trailing commas go.
  const text = readFileSync(path, "utf8")
    .replace(/("(?:[^"\\]|\\.)*")|\/\/[^\n]*|\/\*[\s\S]*?\*\//g, (_, string) => string ?? "")
    .replace(/("(?:[^"\\]|\\.)*")|,(\s*[}\]])/g, (_, string, close) => string ?? close);
  return JSON.parse(text);
}
