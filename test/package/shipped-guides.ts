/**
 * The guides as shipped (issue 28, "Test the product as shipped"): from the tarball the consumer suite
 * packs once, fresh projects of the kinds users have run every runnable `ts` block of README.md and
 * docs/*.md (CONTRIBUTING.md, "Documentation"), the NestJS, OpenTelemetry and testing guides end to
 * end, and `examples/nest/` as it is in the package:
 *
 * - `esm`: `npm init -y`, `"type": "module"`, TypeScript 7's `tsc --init --target es2022 --types node`
 *   (the README's set-up): `tsc`, then `node` per block; the README example and the OpenTelemetry
 *   check also with `tsx`;
 * - `legacy`: the same plus `--experimentalDecorators --emitDecoratorMetadata` (docs/nestjs.md): the
 *   `ts legacy` blocks with `tsc && node`, its test file with `vitest run`, examples/nest with
 *   `tsc && node` and `tsx`;
 * - `vitest`: the `esm` set-up with docs/testing.md's `vitest.config.ts`: its test files, `vitest run`;
 * - `cjs`: `npm init -y` (CommonJS) and the same tsconfig: the OpenTelemetry check;
 * - `broken-otel`: a second install whose `@opentelemetry/api` throws when loaded: one `warning` event
 *   per context, from the ES module and the CommonJS bundle.
 *
 * Packages are linked from the repository's node_modules (the versions package-lock.json locks).
 */
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify, stripVTControlCharacters } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { blocksOf, type DocModule, docFiles, docModules } from "../../scripts/doc-blocks.js";
import { installTarball, linkPackages, repoRoot } from "./consumer-projects.js";

const run = promisify(execFile);

/** What the projects install besides tablekit (`npm install --save-dev …` in the guides). */
const PROJECT_PACKAGES = [
  "typescript=typescript7",
  "@types/node",
  "tsx",
  "vitest",
  "@nestjs/common",
  "@nestjs/core",
  "@nestjs/testing",
  "rxjs",
  "@opentelemetry/api",
  "@opentelemetry/context-async-hooks",
  "@opentelemetry/sdk-trace-base",
];

type ProjectName = "esm" | "legacy" | "vitest" | "cjs";

/** The flags each project's `tsc --init` gets: the README's, and docs/nestjs.md's for Nest. */
const INIT_FLAGS: Record<ProjectName, string[]> = {
  esm: ["--target", "es2022", "--types", "node"],
  legacy: ["--target", "es2022", "--types", "node", "--experimentalDecorators", "--emitDecoratorMetadata"],
  vitest: ["--target", "es2022", "--types", "node"],
  cjs: ["--target", "es2022", "--types", "node"],
};

/** One doc block placed in a project. */
export interface PlacedBlock {
  /** `docs/guide.md:12`. */
  where: string;
  project: ProjectName;
  /** Its file in the project (a path comment on its first line names it). */
  file: string;
  code: string;
  /** How it runs: `node` (after tsc), `vitest` (a test file), or not at all (`ts compile-only`, a config). */
  runner: "node" | "vitest" | "none";
}

/** Where each runnable and compile-only block of the docs goes (see the module's description). */
export function placeDocBlocks(): PlacedBlock[] {
  const modules = docModules(
    docFiles().flatMap((file) => blocksOf(file, readFileSync(join(repoRoot, file), "utf8"))),
  );
  return modules.map((module) => {
    const where = `${module.file}:${module.line}`;
    const named = /^\/\/ ([\w./-]+\.ts)$/.exec(module.code.split("\n")[0] ?? "")?.[1];
    const usesVitest = /from "vitest(?:\/config)?"/.test(module.code);
    const project: ProjectName = module.legacy ? "legacy" : usesVitest ? "vitest" : "esm";
    const file =
      named ?? `doc-${module.file.replace(/\.md$/, "").replace(/[^A-Za-z0-9]+/g, "-")}-${module.line}.ts`;
    const runner = module.compileOnly
      ? "none"
      : usesVitest
        ? file.endsWith(".test.ts")
          ? "vitest"
          : "none"
        : "node";
    return {
      where,
      project,
      file,
      code: runner === "none" ? module.code : withContext(module, where),
      runner,
    };
  });
}

/**
 * A runnable block as run: its `declare const db: TableContext;` becomes a context on a fresh
 * MemoryStore with the block's entity tables created. Any other `declare`d value cannot run: such a
 * block must say `ts compile-only`.
 */
function withContext(module: DocModule, where: string): string {
  const declared = [...module.code.matchAll(/^declare const (\w+)[^\n]*$/gm)];
  const others = declared.filter((match) => !/^declare const db: TableContext;/.test(match[0]));
  if (others.length > 0) {
    throw new Error(`${where} declares ${others.map((m) => m[1]).join(", ")}: mark it \`ts compile-only\``);
  }
  if (declared.length === 0) return module.code;
  // Each @Entity decorates the next class declared after it; only classes declared before the context
  // exist where it is made (a later block creates its own tables, as a continued guide block does).
  const before = module.code.slice(0, declared[0]?.index ?? module.code.length);
  const entities = [...before.matchAll(/@Entity\b/g)].flatMap((match) => {
    const name = /\bclass (\w+)/.exec(before.slice(match.index))?.[1];
    return name === undefined ? [] : [name];
  });
  const lines = module.code.split("\n");
  // On the first line, so the block's line numbers stay as in the Markdown.
  lines[0] = `import { MemoryStore as ShippedStore, TableContext as ShippedContext } from "tablekit"; ${lines[0]}`;
  return lines
    .join("\n")
    .replace(
      /^declare const db: TableContext;[^\n]*$/m,
      `const db: TableContext = new ShippedContext({ store: new ShippedStore() }); await db.ensureTables(${entities.join(", ")});`,
    );
}

/** A child process's output; a failure's message carries both streams. */
async function exec(file: string, args: string[], cwd: string): Promise<{ stdout: string; stderr: string }> {
  // The suite's own vitest variables would make a project's vitest think it runs inside this one.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(VITEST|TABLEKIT_|NODE_OPTIONS$)/.test(name)),
  );
  try {
    return await run(file, args, { cwd, env, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const e = error as Error & { stdout?: string; stderr?: string };
    throw new Error(
      `${file} ${args.join(" ")} failed in ${cwd}:\n${e.stdout ?? ""}\n${e.stderr ?? e.message}`,
    );
  }
}

/** The OpenTelemetry check: spans of an upsert, a get and a find, as JSON `{ name, kind, parent }`. */
function otelCheck(kind: "module" | "commonjs"): string {
  const imports =
    kind === "module"
      ? `import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { Column, Entity, MemoryStore, TableContext, type TableKitEvent } from "tablekit";`
      : `import api = require("@opentelemetry/api");
import hooks = require("@opentelemetry/context-async-hooks");
import sdk = require("@opentelemetry/sdk-trace-base");
import tablekit = require("tablekit");
const { context, trace } = api;
const { AsyncLocalStorageContextManager } = hooks;
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = sdk;
const { Column, Entity, MemoryStore, TableContext } = tablekit;
type TableKitEvent = tablekit.TableKitEvent;`;
  return `${imports}

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const exporter = new InMemorySpanExporter();
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));

@Entity({ table: "Notes", partitionKey: "{owner}", rowKey: "{id}" })
class Note {
  @Column({ type: "String" }) owner!: string;
  @Column({ type: "String" }) id!: string;
}

async function main(): Promise<void> {
  const events: TableKitEvent[] = [];
  const db = new TableContext({ store: new MemoryStore(), onEvent: (event) => events.push(event) });
  await db.ensureTables(Note);
  const notes = db.repository(Note);
  await notes.upsert(notes.create({ owner: "ann", id: "n1" }));
  await notes.get({ owner: "ann", id: "n1" });
  await notes.find({ owner: "ann" }).toArray();
  const spans = exporter.getFinishedSpans();
  const names = new Map(spans.map((span) => [span.spanContext().spanId, span.name]));
  const parentOf = (span: object) => (span as { parentSpanContext?: { spanId: string } }).parentSpanContext?.spanId;
  console.log(JSON.stringify({
    spans: spans.map((span) => ({ name: span.name, kind: span.kind, parent: names.get(parentOf(span) ?? "") })),
    warnings: events.filter((event) => event.type === "warning"),
  }));
}
main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
`;
}

/** An `@opentelemetry/api` that is installed but throws when loaded. */
function installBrokenOpenTelemetry(root: string): void {
  const dir = join(root, "node_modules", "@opentelemetry", "api");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: "@opentelemetry/api", version: "1.9.0", main: "index.js" }),
  );
  writeFileSync(join(dir, "index.js"), 'throw new Error("a broken build of the API");\n');
}

/** Two contexts on the broken install: the warnings each reported. */
function warningCheck(kind: "module" | "commonjs"): string {
  const load =
    kind === "module"
      ? 'import { MemoryStore, TableContext } from "tablekit";'
      : 'const { MemoryStore, TableContext } = require("tablekit");';
  return `${load}
const reported = [0, 1].map(() => {
  const events = [];
  const db = new TableContext({ store: new MemoryStore(), onEvent: (event) => events.push(event) });
  return { events, db };
});
await Promise.all(reported.map(({ db }) => db.store.createTable("Probe")));
console.log(JSON.stringify(reported.map(({ events }) => events.filter((event) => event.type === "warning"))));
`.replace("await Promise.all", kind === "module" ? "await Promise.all" : "void Promise.all");
}

/** Registers the suite; `rootOf()` is the folder the consumer suite packed and installed the tarball in. */
export function describeShippedGuides(rootOf: () => string): void {
  const placed = placeDocBlocks();
  const dirs = {} as Record<ProjectName, string>;
  let compiled: Record<"esm" | "legacy" | "cjs", Promise<unknown>>;
  const tsc = () => join(rootOf(), "node_modules", "typescript", "bin", "tsc");
  const tsx = () => join(rootOf(), "node_modules", "tsx", "dist", "cli.mjs");
  const vitest = () => join(rootOf(), "node_modules", "vitest", "vitest.mjs");
  let brokenRoot = "";

  beforeAll(async () => {
    const root = rootOf();
    linkPackages(root, PROJECT_PACKAGES);
    await Promise.all(
      (Object.keys(INIT_FLAGS) as ProjectName[]).map(async (name) => {
        const dir = join(root, `guides-${name}`);
        dirs[name] = dir;
        mkdirSync(dir, { recursive: true });
        await exec("npm", ["init", "-y"], dir);
        if (name !== "cjs") await exec("npm", ["pkg", "set", "type=module"], dir);
        await exec(process.execPath, [tsc(), "--init", ...INIT_FLAGS[name]], dir);
      }),
    );
    for (const block of placed) {
      const path = join(dirs[block.project], block.file);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, `${block.code}\n`);
    }
    writeFileSync(join(dirs.esm, "otel-check.ts"), otelCheck("module"));
    writeFileSync(join(dirs.cjs, "otel-check.ts"), otelCheck("commonjs"));
    // examples/nest as the package ships it, in the project set up as docs/nestjs.md says.
    cpSync(join(root, "node_modules", "tablekit", "examples", "nest"), join(dirs.legacy, "examples-nest"), {
      recursive: true,
      filter: (source) => !source.endsWith("tsconfig.json"),
    });
    const tsc7 = (dir: string) => exec(process.execPath, [tsc()], dir);
    compiled = { esm: tsc7(dirs.esm), legacy: tsc7(dirs.legacy), cjs: tsc7(dirs.cjs) };
    for (const compilation of Object.values(compiled)) compilation.catch(() => {}); // awaited by the tests
    // A second install of the same tarball, with an @opentelemetry/api that throws when loaded.
    const tarball = readdirSync(root).find((name) => name.endsWith(".tgz"));
    if (tarball === undefined) throw new Error(`no packed tarball in ${root}`);
    brokenRoot = join(root, "broken-otel");
    mkdirSync(brokenRoot);
    await installTarball(brokenRoot, join(root, tarball));
    installBrokenOpenTelemetry(brokenRoot);
    writeFileSync(join(brokenRoot, "check.mjs"), warningCheck("module"));
    writeFileSync(join(brokenRoot, "check.cjs"), warningCheck("commonjs"));
  }, 300_000);

  describe("the guides as shipped", () => {
    it("carries docs/*.md and examples/, not the generated API reference, and every README link resolves in it", () => {
      const installed = join(rootOf(), "node_modules", "tablekit");
      const guides = readdirSync(join(repoRoot, "docs")).filter((name) => name.endsWith(".md"));
      expect(guides.length).toBeGreaterThan(10);
      expect(readdirSync(join(installed, "docs")).filter((name) => name.endsWith(".md"))).toEqual(guides);
      expect(readdirSync(join(installed, "docs"))).not.toContain("api");
      const readme = readFileSync(join(installed, "README.md"), "utf8");
      const links = [...readme.matchAll(/\]\(((?:docs|examples)\/[^)#\s]+)/g)].map((match) => match[1]!);
      expect(links.length).toBeGreaterThan(5);
      const missing = links.filter((link) => !existsSync(join(installed, link)));
      expect(missing).toEqual([]);
    });

    it("has no require() shim in the ES module bundle (esbuild's `__require` throws in ES modules)", () => {
      const esm = join(rootOf(), "node_modules", "tablekit", "dist", "esm");
      const files = readdirSync(esm, { recursive: true, encoding: "utf8" }).filter((file) =>
        file.endsWith(".js"),
      );
      expect(files.length).toBeGreaterThan(3);
      expect(files.filter((file) => readFileSync(join(esm, file), "utf8").includes("__require"))).toEqual([]);
    });

    it("compiles every doc block and check with TypeScript 7 in each project (tsc --init plus the guides' settings)", async () => {
      await Promise.all(Object.values(compiled));
      // The vitest project is type-checked only: vitest runs its TypeScript itself.
      await exec(process.execPath, [tsc(), "--noEmit"], dirs.vitest);
    });

    it.for(placed.filter((block) => block.runner === "node"))(
      "runs $where with tsc && node",
      async (block) => {
        await compiled[block.project as "esm" | "legacy"];
        await exec(process.execPath, [block.file.replace(/\.ts$/, ".js")], dirs[block.project]);
      },
    );

    it("runs docs/opentelemetry.md's set-up: the console exporter prints the call spans and their request spans", async () => {
      const guide = placed.find((block) => block.where.startsWith("docs/opentelemetry.md:"));
      await compiled.esm;
      const { stdout } = await exec(process.execPath, [guide!.file.replace(/\.ts$/, ".js")], dirs.esm);
      for (const name of [
        "tablekit.upsert Orders",
        "upsertEntity Orders",
        "tablekit.get Orders",
        "tablekit.find Orders",
      ]) {
        expect(stdout).toContain(`name: '${name}'`);
      }
    });

    it("runs the README's Getting started example with tsx, printing what tsc && node prints", async () => {
      const readme = placed.find((block) => block.where.startsWith("README.md:"));
      expect(readme?.project).toBe("esm");
      const file = readme!.file;
      await compiled.esm;
      const { stdout: withTsc } = await exec(process.execPath, [file.replace(/\.ts$/, ".js")], dirs.esm);
      const { stdout: withTsx } = await exec(process.execPath, [tsx(), file], dirs.esm);
      expect(withTsx).toBe(withTsc);
      expect(withTsc).toContain("Jones");
    });

    it("runs docs/testing.md's tests verbatim under vitest 4 with its vitest.config.ts", async () => {
      const tests = placed.filter((block) => block.project === "vitest" && block.runner === "vitest");
      expect(tests.map((block) => block.file)).toEqual(expect.arrayContaining(["test/orders.test.ts"]));
      expect(placed.some((block) => block.project === "vitest" && block.file === "vitest.config.ts")).toBe(
        true,
      );
      const { stdout } = await exec(process.execPath, [vitest(), "run"], dirs.vitest);
      expect(stripVTControlCharacters(stdout)).toMatch(
        new RegExp(`Test Files\\s+\\S*${tests.length} passed`),
      );
    });

    it("runs docs/nestjs.md's test under vitest 4 and examples/nest with tsc && node and with tsx", async () => {
      const nestTests = placed.filter((block) => block.project === "legacy" && block.runner === "vitest");
      expect(nestTests.length).toBe(1);
      // `.test.ts`: the test file itself, not what tsc emits beside it.
      const { stdout } = await exec(process.execPath, [vitest(), "run", ".test.ts"], dirs.legacy);
      expect(stripVTControlCharacters(stdout)).toMatch(/Tests\s+\S*1 passed/);
      await compiled.legacy;
      const { stdout: withTsc } = await exec(
        process.execPath,
        [join("examples-nest", "main.js")],
        dirs.legacy,
      );
      expect(withTsc).toContain("ada@example.com");
      const { stdout: withTsx } = await exec(
        process.execPath,
        [tsx(), join("examples-nest", "main.ts")],
        dirs.legacy,
      );
      expect(withTsx).toBe(withTsc);
    });

    it("runs the project `tablekit init` writes: its test under vitest 4 (its vitest.config.ts) and its start script", async () => {
      const root = rootOf();
      const cli = join(root, "node_modules", "tablekit", "dist", "esm", "cli", "main.js");
      await exec(process.execPath, [cli, "init", "init-app"], root);
      const app = join(root, "init-app");
      const { stdout } = await exec(process.execPath, [vitest(), "run"], app);
      expect(stripVTControlCharacters(stdout)).toMatch(/Tests\s+\S*1 passed/);
      const { stdout: started } = await exec(process.execPath, [tsx(), join("src", "main.ts")], app);
      expect(started).toContain("open task(s)");
    });

    it.for([
      ["esm", "tsc && node"],
      ["esm", "tsx"],
      ["cjs", "tsc && node"],
    ] as const)(
      "traces an upsert, a get and a find in the %s project (%s): call spans with CLIENT children",
      async ([project, runner]) => {
        await compiled[project];
        const args = runner === "tsx" ? [tsx(), "otel-check.ts"] : ["otel-check.js"];
        const { stdout } = await exec(process.execPath, args, dirs[project]);
        const { spans, warnings } = JSON.parse(stdout) as {
          spans: Array<{ name: string; kind: number; parent?: string }>;
          warnings: unknown[];
        };
        for (const call of ["tablekit.upsert Notes", "tablekit.get Notes", "tablekit.find Notes"]) {
          expect(spans.find((span) => span.name === call)?.kind, call).toBe(0); // INTERNAL
          // SpanKind.CLIENT is 2.
          expect(
            spans.filter((span) => span.parent === call && span.kind === 2).length,
            call,
          ).toBeGreaterThan(0);
        }
        expect(warnings).toEqual([]);
      },
    );

    it.for(["check.mjs", "check.cjs"])(
      "reports an installed @opentelemetry/api that cannot be loaded once per context (%s)",
      async (file) => {
        const { stdout } = await exec(process.execPath, [file], brokenRoot);
        const perContext = JSON.parse(stdout) as Array<Array<{ code: string; message: string }>>;
        expect(perContext).toHaveLength(2);
        for (const warnings of perContext) {
          expect(warnings).toHaveLength(1);
          expect(warnings[0]).toMatchObject({ type: "warning", code: "opentelemetry-unloadable" });
          expect(warnings[0]?.message).toContain("a broken build of the API");
        }
      },
    );
  });
}
