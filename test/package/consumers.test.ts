/**
 * The packed tarball in fresh consumer projects (issue 8, "How it is checked"): (a) an ES module
 * project with `tsc --init` defaults (standard decorators), (b) the same with legacy
 * `experimentalDecorators`, (c) a CommonJS project from `npm init -y`. Each compiles a typed usage
 * file (its `@ts-expect-error` lines must be errors, so `any` types fail) with TypeScript 5.9 and 7
 * and runs it against MemoryStore and Azurite; (a) and (b) also compile and run the README's first
 * example unchanged.
 */
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { azuriteSelected } from "../support/stores.js";
import {
  againstAzure,
  type Compilation,
  type CompilerName,
  compile,
  compilers,
  createProject,
  diagnosticsOf,
  exec,
  oldRequireFlags,
  type ProjectSpec,
  packAndInstall,
  readmeFirstTypeScriptBlock,
  runNode,
} from "./consumer-projects.js";
import { describeShippedGuides } from "./shipped-guides.js";

const fixtures = join(import.meta.dirname, "fixtures");

interface Consumer extends ProjectSpec {
  name: string;
  usage: string;
  readme: boolean;
}

const consumers: Consumer[] = [
  { name: "esm-standard", type: "module", dialect: "standard", usage: "esm-usage.ts.txt", readme: true },
  { name: "esm-legacy", type: "module", dialect: "legacy", usage: "esm-usage.ts.txt", readme: true },
  { name: "cjs-standard", type: "commonjs", dialect: "standard", usage: "cjs-usage.ts.txt", readme: false },
];
const compilerNames = Object.keys(compilers) as CompilerName[];

/** What the usage file must print: its inputs read back, and the codes API.md fixes. */
const expectedUsage = {
  total: 12.5,
  selected: 12.5,
  placedAt: "2026-01-02T03:04:05.678Z",
  isDate: true,
  pageSize: 1,
  missing: "ENTITY_NOT_FOUND",
};

/** Why the Azurite half of a consumer test is skipped (its MemoryStore half has run and passed by then). */
const NO_AZURITE =
  "TABLEKIT_STORES leaves Azurite out of this run: the MemoryStore half passed, the Azurite half is not run";

let root = "";
let manifest: Record<string, unknown> = {};
const azurite = inject("azuriteConnectionString");
/** One compilation per project and compiler, started together once the projects exist. */
const compilations = new Map<string, Promise<Compilation>>();

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "tablekit-consumers-"));
  manifest = await packAndInstall(root);
  await Promise.all(
    consumers.map(async (consumer) => {
      const dir = join(root, consumer.name);
      await createProject(dir, consumer);
      copyFileSync(join(fixtures, consumer.usage), join(dir, "src", "usage.ts"));
      copyFileSync(join(fixtures, "require-smoke.cjs"), join(dir, "require-smoke.cjs"));
      if (consumer.readme) {
        // The example as printed, and per compiler the same example on Azurite (own table prefix).
        const example = readmeFirstTypeScriptBlock();
        writeFileSync(join(dir, "src", "readme.ts"), example);
        // Without Azurite (TABLEKIT_STORES) its copies still compile; the tests skip running them.
        for (const tsc of compilerNames) {
          const azure = againstAzure(example, azurite, prefixFor(`${consumer.name}Readme`, tsc));
          writeFileSync(join(dir, "src", `readme-azure-${tsc}.ts`), azure);
        }
      }
    }),
  );
  for (const consumer of consumers) {
    for (const tsc of compilerNames) {
      const compilation = compile(join(root, consumer.name), tsc);
      compilation.catch(() => {}); // awaited by the tests; not an unhandled rejection meanwhile
      compilations.set(`${consumer.name}/${tsc}`, compilation);
    }
  }
}, 300_000);

afterAll(async () => {
  await Promise.allSettled(compilations.values());
  if (root) rmSync(root, { recursive: true, force: true });
});

describe("the packed package", () => {
  it("runs no scripts when installed", () => {
    const scripts = (manifest.scripts ?? {}) as Record<string, string>;
    for (const hook of ["preinstall", "install", "postinstall", "prepare"]) {
      expect(scripts, hook).not.toHaveProperty(hook);
    }
  });

  it("ships no source maps (the sources they would point at are not in the package)", async () => {
    const { stdout } = await exec("find", [join(root, "node_modules", "tablekit"), "-name", "*.map"], root);
    expect(stdout.trim()).toBe("");
  });

  it("strips @internal members from the declarations", () => {
    for (const flavour of ["esm", "cjs"]) {
      // Found by name: the file's folder inside src/repository follows its sub-layer.
      const dist = join(root, "node_modules", "tablekit", "dist", flavour);
      const declaration = readdirSync(dist, { recursive: true, encoding: "utf8" }).find(
        (path) => basename(path) === "table-context.d.ts",
      );
      expect(declaration, `table-context.d.ts in ${dist}`).toBeDefined();
      const dts = readFileSync(join(dist, declaration as string), "utf8");
      expect(dts).toContain("class TableContext");
      expect(dts).not.toMatch(/@internal/);
    }
  });

  it("loads with require() where Node cannot require an ES module (Node 20.0–20.18)", async () => {
    const stdout = await runNode(join(root, "cjs-standard", "require-smoke.cjs"), oldRequireFlags());
    expect(JSON.parse(stdout)).toEqual({ text: "hello", isNote: true, rejected: "VALIDATION" });
  });
});

describe.each(consumers)("consumer project $name", (consumer) => {
  it.for(compilerNames)(
    "compiles the typed usage with %s and runs it on MemoryStore and Azurite",
    async (tsc, { skip }) => {
      const compilation = await compilations.get(`${consumer.name}/${tsc}`)!;
      expect(diagnosticsOf(compilation, "usage.ts")).toEqual([]);
      const usage = join(compilation.outDir, "usage.js");
      const flags = consumer.type === "commonjs" ? oldRequireFlags() : [];
      expect(JSON.parse(await runNode(usage, flags))).toEqual(expectedUsage);
      // Without Azurite the usage file would fall back to MemoryStore and pass for the wrong reason.
      if (!azuriteSelected) skip(NO_AZURITE);
      const env = {
        TABLEKIT_CONNECTION_STRING: azurite,
        TABLEKIT_TABLE_PREFIX: prefixFor(consumer.name, tsc),
      };
      expect(JSON.parse(await runNode(usage, flags, env))).toEqual(expectedUsage);
    },
  );
});

describe.each(consumers.filter((consumer) => consumer.readme))("consumer project $name", (consumer) => {
  it.for(compilerNames)(
    "compiles the README's first example unchanged with %s and runs it on MemoryStore and Azurite",
    async (tsc, { skip }) => {
      const compilation = await compilations.get(`${consumer.name}/${tsc}`)!;
      expect(diagnosticsOf(compilation, "readme.ts")).toEqual([]);
      const onMemory = await runNode(join(compilation.outDir, "readme.js"));
      expect(onMemory.trim()).not.toBe("");
      if (!azuriteSelected) skip(NO_AZURITE);
      // The same example on Azurite prints the same lines.
      expect(diagnosticsOf(compilation, `readme-azure-${tsc}.ts`)).toEqual([]);
      expect(await runNode(join(compilation.outDir, `readme-azure-${tsc}.js`))).toBe(onMemory);
    },
  );
});

// The guides from the same tarball (one pack per run: `npm pack` rebuilds dist/).
describeShippedGuides(() => root);

/** A table prefix per project and compiler, so runs sharing one Azurite never meet. */
function prefixFor(project: string, compiler: CompilerName): string {
  return `${project}${compiler}`.replace(/[^A-Za-z0-9]/g, "");
}
