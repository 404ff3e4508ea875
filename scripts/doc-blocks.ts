/**
 * The `ts` blocks of README.md and docs/*.md, compiled against the package (CONTRIBUTING.md,
 * "Documentation"): each block is a module of its own; a block fenced ```` ```ts continued ```` is
 * compiled together with the blocks before it in its file (back to the last plain one); a block fenced
 * ```` ```ts fragment ```` is not compiled; a block fenced ```` ```ts legacy ```` (and the blocks continuing it) is
 * compiled with legacy decorators (`experimentalDecorators`, `emitDecoratorMetadata`: NestJS's parameter
 * decorators need them), every other with standard decorators; ```` ```ts compile-only ```` marks a block
 * that is compiled here and in the packed package's projects but never run there (test/package/). `tablekit`, `tablekit/server` and `tablekit/testing` resolve to
 * src/, so no build is needed. Run alone: `node --import tsx scripts/doc-blocks.ts` (exit 1 on errors).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The words a `ts` fence may carry after the language (CONTRIBUTING.md, "Documentation"). */
const MARKERS = ["continued", "fragment", "legacy", "compile-only"];

/** One fenced `ts` block. */
export interface DocBlock {
  /** The Markdown file, relative to the repository. */
  file: string;
  /** The line of its opening fence (1-based). */
  line: number;
  kind: "module" | "continued" | "fragment";
  /** Compiled with legacy decorators (`ts legacy`). */
  legacy: boolean;
  /** Compiled but never run (`ts compile-only`): it needs a live service, a key vault or values it only declares. */
  compileOnly: boolean;
  code: string;
}

/** A compiled unit: a block and the `continued` blocks after it. */
export interface DocModule {
  file: string;
  line: number;
  legacy: boolean;
  compileOnly: boolean;
  code: string;
  /** Where each block starts in `code` (line offset) and in its Markdown file. */
  parts: Array<{ offset: number; line: number }>;
}

/** The Markdown files whose blocks are compiled: README.md and docs/*.md (not the generated docs/api). */
export function docFiles(): string[] {
  const guides = readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`);
  return ["README.md", ...guides];
}

/** The `ts` blocks of one Markdown file, in order. */
export function blocksOf(file: string, text: string): DocBlock[] {
  const blocks: DocBlock[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*(.*)$/.exec(lines[i] ?? "");
    if (!open) continue;
    const end = lines.findIndex((line, j) => j > i && line.startsWith("```"));
    if (end < 0) throw new Error(`${file}:${i + 1}: a fence that is never closed`);
    if (open[1] === "ts" || open[1] === "typescript") {
      const markers = (open[2]?.trim() ?? "").split(/\s+/).filter((word) => word !== "");
      for (const marker of markers) {
        if (!MARKERS.includes(marker)) {
          throw new Error(`${file}:${i + 1}: unknown block marker '${marker}' (${MARKERS.join(", ")})`);
        }
      }
      const kind = markers.includes("continued")
        ? "continued"
        : markers.includes("fragment")
          ? "fragment"
          : "module";
      blocks.push({
        file,
        line: i + 1,
        kind,
        legacy: markers.includes("legacy"),
        compileOnly: markers.includes("compile-only"),
        code: lines.slice(i + 1, end).join("\n"),
      });
    }
    i = end;
  }
  return blocks;
}

/** The units to compile: every module block with the `continued` blocks that follow it. */
export function docModules(blocks: readonly DocBlock[]): DocModule[] {
  const modules: DocModule[] = [];
  for (const block of blocks) {
    if (block.kind === "fragment") continue;
    const last = modules.at(-1);
    if (block.kind === "continued") {
      if (last === undefined || last.file !== block.file) {
        throw new Error(`${block.file}:${block.line}: a continued block with no block before it`);
      }
      const offset = last.code.split("\n").length;
      last.code += `\n${block.code}`;
      last.parts.push({ offset, line: block.line });
      continue;
    }
    modules.push({
      file: block.file,
      line: block.line,
      legacy: block.legacy,
      compileOnly: block.compileOnly,
      code: block.code,
      parts: [{ offset: 0, line: block.line }],
    });
  }
  return modules;
}

/** Compiles every doc module; returns the diagnostics as `file:line: message`, pointing into the Markdown. */
export function checkDocBlocks(): { modules: number; diagnostics: string[] } {
  const modules = docModules(
    docFiles().flatMap((file) => blocksOf(file, readFileSync(join(root, file), "utf8"))),
  );
  // Under node_modules so that imports of installed packages (vitest, @azure/data-tables) resolve.
  // A folder of its own per run: runs in parallel (other checkouts sharing node_modules) must not meet.
  const cache = join(root, "node_modules", ".cache");
  mkdirSync(cache, { recursive: true });
  const dir = mkdtempSync(join(cache, "doc-blocks-"));
  const byPath = new Map<string, DocModule>();
  for (const [i, module] of modules.entries()) {
    const path = join(dir, `${module.file.replace(/[^A-Za-z0-9]+/g, "-")}-${module.line}-${i}.ts`);
    writeFileSync(path, `${module.code}\n`);
    byPath.set(path, module);
  }
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    moduleDetection: ts.ModuleDetectionKind.Force,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ["node"],
    paths: {
      tablekit: [join(root, "src", "index.ts")],
      "tablekit/*": [join(root, "src", "*", "index.ts")],
    },
  };
  const paths = [...byPath.keys()];
  // What a newcomer's project has: standard decorators; `ts legacy` blocks get tsc's legacy ones.
  const programs = [
    ts.createProgram(
      paths.filter((path) => !byPath.get(path)?.legacy),
      options,
    ),
  ];
  const legacy = paths.filter((path) => byPath.get(path)?.legacy);
  if (legacy.length > 0) {
    programs.push(
      ts.createProgram(legacy, { ...options, experimentalDecorators: true, emitDecoratorMetadata: true }),
    );
  }
  const diagnostics: string[] = [];
  const found = programs.flatMap((program) => ts.getPreEmitDiagnostics(program));
  rmSync(dir, { recursive: true, force: true });
  for (const diagnostic of found) {
    const file = diagnostic.file?.fileName;
    const module = file === undefined ? undefined : byPath.get(file);
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
    if (module === undefined || diagnostic.file === undefined || diagnostic.start === undefined) {
      // Errors outside the blocks (the package's own sources under these options) count too.
      diagnostics.push(`${file ? relative(root, file) : "(program)"}: ${message}`);
      continue;
    }
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    const part = module.parts.filter((p) => p.offset <= line).at(-1) ?? module.parts[0]!;
    // The Markdown line: the block's fence, plus one, plus the line within the block.
    diagnostics.push(`${module.file}:${part.line + 1 + line - part.offset}: ${message}`);
  }
  return { modules: modules.length, diagnostics };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { modules, diagnostics } = checkDocBlocks();
  for (const line of diagnostics) console.error(line);
  console.log(`doc blocks: ${modules} modules compiled, ${diagnostics.length} errors`);
  process.exitCode = diagnostics.length === 0 ? 0 : 1;
}
