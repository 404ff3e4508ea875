import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/** The most lines a source file may have: past it, a file does more than one job (STYLE.md). */
const MAX_LINES = 400;

/**
 * Files still over `MAX_LINES`, each with its reason. Shrink this list: once a file is split (or
 * moved), the test below says to remove its entry, so nothing is left here by accident.
 */
const OVERSIZED: Record<string, string> = {};

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "../../src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

/** Lines as `wc -l` counts them (a last line without its newline still counts). */
function lineCount(file: string): number {
  const text = readFileSync(file, "utf8");
  if (text === "") return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

const lines = new Map(sourceFiles(SRC).map((file) => [relative(SRC, file), lineCount(file)]));

describe("source file size", () => {
  it(`keeps every file under src/ at ${MAX_LINES} lines or fewer (but the listed ones)`, () => {
    const over = [...lines]
      .filter(([file, count]) => count > MAX_LINES && !(file in OVERSIZED))
      .map(([file, count]) => `${file}: ${count} lines`);
    expect(over).toEqual([]);
  });

  it("lists only files that are still over the limit", () => {
    const stale = Object.keys(OVERSIZED)
      .filter((file) => (lines.get(file) ?? 0) <= MAX_LINES)
      .map((file) => `${file}: ${lines.get(file) ?? "missing"} (remove it from OVERSIZED)`);
    expect(stale).toEqual([]);
  });
});
