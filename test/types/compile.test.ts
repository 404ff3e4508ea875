import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// The type tests are `.ts` files in this folder (and below) full of `expectTypeOf` and
// `@ts-expect-error` lines: they pass when `tsc -p` compiles them without errors. Each config is one
// kind of consumer project (strict, exactOptionalPropertyTypes) in one decorator dialect; every file
// compiles under both, except `*.standard.ts` / `*.legacy.ts`, which hold dialect-only syntax.
const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../..");
const compilers = {
  "TypeScript 5.9": join(root, "node_modules/typescript/bin/tsc"),
  "TypeScript 7": join(root, "node_modules/typescript7/bin/tsc"),
};
const configs = {
  "standard decorators (tsc --init defaults)": { file: "tsconfig.standard.json", skip: ".legacy.ts" },
  "experimentalDecorators + emitDecoratorMetadata": { file: "tsconfig.legacy.json", skip: ".standard.ts" },
};

function tsc(compiler: string, ...args: string[]): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, [compiler, ...args], { cwd: root, encoding: "utf8" });
  return { status: result.status, output: `${result.stdout}${result.stderr}${result.error ?? ""}` };
}

function typeTestFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return typeTestFiles(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [relative(root, path)] : [];
  });
}

describe("type tests", () => {
  for (const [configName, config] of Object.entries(configs)) {
    it(`${configName}: every type test file is in the program`, () => {
      const listed = tsc(compilers["TypeScript 7"], "-p", join(here, config.file), "--listFilesOnly");
      expect(listed.status, listed.output).toBe(0);
      const inProgram = new Set(listed.output.split(/\r?\n/).map((line) => relative(root, line.trim())));
      const expected = typeTestFiles(here).filter((file) => !file.endsWith(config.skip));
      expect(expected.length).toBeGreaterThan(0);
      expect(expected.filter((file) => !inProgram.has(file))).toEqual([]);
    });

    for (const [compilerName, compiler] of Object.entries(compilers)) {
      it(`${configName}: compiles with ${compilerName}`, () => {
        const result = tsc(compiler, "-p", join(here, config.file));
        expect(result.output).toBe("");
        expect(result.status).toBe(0);
      });
    }
  }
});
