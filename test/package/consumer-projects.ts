/**
 * Fresh consumer projects around the packed tarball, as a new user would have them: `npm pack` once,
 * the tarball unpacked into a `node_modules`, projects with `npm init -y` / `tsc --init` configs,
 * compiled with TypeScript 5.9 and 7 and run with Node.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import ts from "typescript";

const run = promisify(execFile);

/** The repository root (where package.json and node_modules are). */
export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The two compilers a consumer may have: TypeScript 5.9 and TypeScript 7 (`npm i -D typescript` today). */
export const compilers = {
  ts59: join(repoRoot, "node_modules", "typescript", "bin", "tsc"),
  ts7: join(repoRoot, "node_modules", "typescript7", "bin", "tsc"),
} as const;

/** A compiler's key in {@link compilers}. */
export type CompilerName = keyof typeof compilers;

/** Output of a finished child process. */
export interface ProcessOutput {
  stdout: string;
  stderr: string;
}

/** Runs a command; a failure's error message carries its stdout and stderr (compiler diagnostics). */
export async function exec(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  try {
    return await run(file, args, { cwd, env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const e = error as Error & Partial<ProcessOutput>;
    throw new Error(
      `${file} ${args.join(" ")} failed in ${cwd}:\n${e.stdout ?? ""}\n${e.stderr ?? e.message}`,
    );
  }
}

/**
 * Packs the repository (`npm pack` runs `prepack`, i.e. the build) and installs the tarball into
 * `dir/node_modules/tablekit` ({@link installTarball}). Returns the packed package.json.
 */
export async function packAndInstall(dir: string): Promise<Record<string, unknown>> {
  await exec("npm", ["pack", "--pack-destination", dir], repoRoot);
  const tarball = readdirSync(dir).find((name) => name.endsWith(".tgz"));
  if (!tarball) throw new Error(`npm pack left no tarball in ${dir}`);
  return installTarball(dir, join(dir, tarball));
}

/**
 * Unpacks a packed tarball into `dir/node_modules/tablekit`. Its dependencies are linked from the
 * repository's node_modules, which holds the same versions (those package-lock.json locks): offline,
 * and a second instead of a registry install. Returns the packed package.json.
 */
export async function installTarball(dir: string, tarball: string): Promise<Record<string, unknown>> {
  const installed = join(dir, "node_modules", "tablekit");
  mkdirSync(installed, { recursive: true });
  await exec("tar", ["-xzf", tarball, "-C", installed, "--strip-components=1"], dir);
  const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8"));
  linkPackages(dir, Object.keys(manifest.dependencies ?? {}));
  return manifest;
}

/**
 * Links packages into `dir/node_modules` from the repository's node_modules; `name=source` links
 * `source` under another name (`typescript=typescript7`: the TypeScript `npm install typescript` gives today).
 */
export function linkPackages(dir: string, names: readonly string[]): void {
  for (const entry of names) {
    const [name, source = name] = entry.split("=") as [string, string?];
    const link = join(dir, "node_modules", name);
    if (existsSync(link)) continue;
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(join(repoRoot, "node_modules", source), link, "dir");
  }
}

/** The decorator dialect of a consumer project. */
export type Dialect = "standard" | "legacy";

/** How to set up one consumer project. */
export interface ProjectSpec {
  /** `module` (package.json `"type": "module"`) or `commonjs` (what `npm init -y` writes). */
  type: "module" | "commonjs";
  dialect: Dialect;
}

/**
 * Creates a consumer project in `dir` (below the directory holding node_modules): package.json as
 * `npm init -y` writes it, tsconfig.json as `tsc --init` (TypeScript 7) writes it, with the one
 * change a Node 20 project needs (`target: es2022`) and, for the legacy dialect, the two decorator
 * options. Sources go in `src/`.
 */
export async function createProject(dir: string, spec: ProjectSpec): Promise<void> {
  mkdirSync(join(dir, "src"), { recursive: true });
  await exec("npm", ["init", "-y"], dir);
  const pkgPath = join(dir, "package.json");
  const pkg = JSON.parse(readFileSync(pkgPath, "utf8"));
  writeFileSync(pkgPath, JSON.stringify({ ...pkg, type: spec.type }, null, 2));
  await exec(process.execPath, [compilers.ts7, "--init"], dir);
  const read = ts.readConfigFile(join(dir, "tsconfig.json"), ts.sys.readFile);
  if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, "\n"));
  const config = read.config as { compilerOptions: Record<string, unknown> };
  config.compilerOptions.target = "es2022";
  if (spec.dialect === "legacy") {
    config.compilerOptions.experimentalDecorators = true;
    config.compilerOptions.emitDecoratorMetadata = true;
  }
  // Sources in src/ (TypeScript 7 wants rootDir spelled out once outDir is given).
  config.compilerOptions.rootDir = "src";
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ ...config, include: ["src"] }, null, 2));
}

/** A compiler's diagnostics (one line each) and where its JavaScript went. */
export interface Compilation {
  outDir: string;
  diagnostics: string[];
}

/**
 * Compiles a project's `src/` with one compiler into `out-<compiler>/`. Emits even with errors
 * (tsc's default), so each file's diagnostics can be judged on their own.
 */
export async function compile(dir: string, compiler: CompilerName): Promise<Compilation> {
  const outDir = join(dir, `out-${compiler}`);
  const args = [compilers[compiler], "-p", "tsconfig.json", "--outDir", outDir, "--pretty", "false"];
  try {
    await run(process.execPath, args, { cwd: dir, maxBuffer: 16 * 1024 * 1024 });
    return { outDir, diagnostics: [] };
  } catch (error) {
    const { stdout = "", stderr = "" } = error as Partial<ProcessOutput>;
    const diagnostics = `${stdout}\n${stderr}`.split("\n").filter((line) => line.trim() !== "");
    return { outDir, diagnostics };
  }
}

/** The diagnostics of one source file (`src/<name>`), continuation lines included. */
export function diagnosticsOf(compilation: Compilation, name: string): string[] {
  const mine: string[] = [];
  let current = false;
  for (const line of compilation.diagnostics) {
    if (!line.startsWith(" ")) current = line.startsWith(`src/${name}(`) || !line.startsWith("src/");
    if (current) mine.push(line);
  }
  return mine;
}

/** Runs a JavaScript file with this Node; resolves to its stdout. */
export async function runNode(file: string, nodeArgs: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const { stdout } = await exec(process.execPath, [...nodeArgs, file], dirname(file), env);
  return stdout;
}

/**
 * Node flags that make `require()` behave as on Node 20.0–20.18, which cannot load an ES module
 * (later Nodes can, which would hide a CommonJS build that still needs an ESM-only dependency).
 */
export function oldRequireFlags(): string[] {
  const flag = "--no-experimental-require-module";
  return process.allowedNodeEnvironmentFlags.has(flag) ? [flag] : [];
}

/** The README's first ```ts block: the getting-started example, complete on its own. */
export function readmeFirstTypeScriptBlock(): string {
  const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
  const match = /^```ts\n([\s\S]*?)^```$/m.exec(readme);
  if (!match?.[1]) throw new Error("README.md has no ```ts block");
  return match[1];
}

/**
 * The README example pointed at another store: `new MemoryStore()` becomes the Azure store of
 * `connectionString`, with a table prefix so runs sharing one Azurite do not meet.
 */
export function againstAzure(example: string, connectionString: string, tablePrefix: string): string {
  const memory = "new TableContext({ store: new MemoryStore() })";
  if (!example.includes(memory)) throw new Error(`the README example no longer contains ${memory}`);
  const azure = `new TableContext({ store: AzureStore.fromConnectionString(${JSON.stringify(connectionString)}), tablePrefix: ${JSON.stringify(tablePrefix)} })`;
  return `import { AzureStore } from "tablekit";\n${example.replace(memory, azure)}`;
}
