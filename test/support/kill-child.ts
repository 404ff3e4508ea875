import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** A started child, waiting for `go` (it has loaded its modules meanwhile). */
export interface StartedChild {
  /** Lets the child run; resolves the lines it printed once it was killed (or, with `stopAt` 0, exited 0). */
  go(): Promise<string[]>;
  /** Kills a child that was never let go. */
  discard(): void;
}

/** A child process script bundled once, started as often as a test needs it. */
export interface ChildScript {
  /**
   * Starts the child (`<script> ...args <stopAt>`). Once its modules are loaded it waits for a line on
   * stdin (`go`); then it prints progress lines and freezes after line `stopAt` (its own doing: it
   * blocks its event loop there), and is killed with SIGKILL once that line has arrived, so the kill
   * lands at exactly that step. With `stopAt` 0 it must run to its end and exit 0. Starting the next
   * child while the current one runs hides most of a process's start-up time.
   */
  start(args: readonly string[], stopAt: number): StartedChild;
  /** Starts a child and lets it go at once. */
  run(args: readonly string[], stopAt: number): Promise<string[]>;
  /** Removes the bundle. */
  dispose(): void;
}

/**
 * Bundles a TypeScript child script (relative to the repository root) and the sources it imports
 * into one ES module with esbuild, the compiler tsx uses too: a crash test starts dozens of children,
 * and a bundle starts several times faster than `node --import tsx`, which compiles and resolves every
 * module in every process. Packages stay imports, resolved from the repository's node_modules (the
 * bundle is written inside the repository, under the git-ignored `.test-children/`).
 */
export async function bundleChild(script: string): Promise<ChildScript> {
  mkdirSync(join(ROOT, ".test-children"), { recursive: true });
  const dir = mkdtempSync(join(ROOT, ".test-children", "child-"));
  const bundle = join(dir, `${basename(script, ".ts")}.mjs`);
  await build({
    entryPoints: [join(ROOT, script)],
    outfile: bundle,
    bundle: true,
    packages: "external",
    platform: "node",
    format: "esm",
    target: "node20",
    tsconfig: join(ROOT, "tsconfig.json"),
    logLevel: "error",
  });
  const start = (args: readonly string[], stopAt: number) =>
    startChild(script, [bundle, ...args, String(stopAt)], stopAt);
  return {
    start,
    run: (args, stopAt) => start(args, stopAt).go(),
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

function startChild(script: string, argv: readonly string[], stopAt: number): StartedChild {
  const child = spawn(process.execPath, argv, { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"] });
  const lines: string[] = [];
  let stderr = "";
  let killed = false;
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  // A child killed before it read its stdin must not fail the parent with EPIPE.
  child.stdin.on("error", () => undefined);
  createInterface({ input: child.stdout }).on("line", (line) => {
    lines.push(line);
    if (stopAt > 0 && !killed && lines.length >= stopAt) {
      killed = true;
      child.kill("SIGKILL");
    }
  });
  const ended = new Promise<string[]>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (stopAt > 0 ? signal === "SIGKILL" && killed : code === 0) resolve(lines);
      else
        reject(
          new Error(
            `${script} ended by itself (code ${code}, signal ${signal}) after ${lines.length} lines: ${stderr}`,
          ),
        );
    });
  });
  return {
    go: () => {
      child.stdin.end("go\n");
      return ended;
    },
    discard: () => {
      ended.catch(() => undefined);
      killed = true;
      child.kill("SIGKILL");
    },
  };
}

/** A MemoryStore journal file in the temp folder, and a clean-up that removes it and any compaction temp file. */
export function tempStoreFile(name: string): { file: string; cleanup(): void } {
  const file = join(tmpdir(), `tablekit-${name}-${process.pid}-${randomBytes(4).toString("hex")}.jsonl`);
  return {
    file,
    cleanup: () => {
      for (const entry of readdirSync(dirname(file)))
        if (entry.startsWith(basename(file))) rmSync(join(dirname(file), entry), { force: true });
    },
  };
}
