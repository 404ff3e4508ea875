/**
 * Every `ts` block of README.md and docs/*.md compiles against the package (CONTRIBUTING.md,
 * "Documentation"), so the docs cannot drift from the API; and the block markers mean what they say.
 */
import { describe, expect, it } from "vitest";
import { blocksOf, checkDocBlocks, docModules } from "../../scripts/doc-blocks.js";

describe("documentation code blocks", () => {
  it("reads plain, continued, fragment, legacy and compile-only blocks as CONTRIBUTING.md says", () => {
    const text = [
      "# Guide",
      "```ts",
      "const a = 1;",
      "```",
      "```sh",
      "npm test",
      "```",
      "```ts continued",
      "const b = a + 1;",
      "```",
      "```ts fragment",
      "options: { a?: number }",
      "```",
      "```ts",
      "const c = 3;",
      "```",
      "```ts legacy",
      "const d = 4;",
      "```",
      "```ts legacy compile-only",
      "const e = 5;",
      "```",
    ].join("\n");
    const blocks = blocksOf("guide.md", text);
    expect(blocks.map((b) => [b.line, b.kind])).toEqual([
      [2, "module"],
      [8, "continued"],
      [11, "fragment"],
      [14, "module"],
      [17, "module"],
      [20, "module"],
    ]);
    expect(blocks.map((b) => b.legacy)).toEqual([false, false, false, false, true, true]);
    expect(blocks.map((b) => b.compileOnly)).toEqual([false, false, false, false, false, true]);
    const modules = docModules(blocks);
    expect(modules.map((m) => [m.line, m.code])).toEqual([
      [2, "const a = 1;\nconst b = a + 1;"],
      [14, "const c = 3;"],
      [17, "const d = 4;"],
      [20, "const e = 5;"],
    ]);
    expect(() => blocksOf("guide.md", "```ts partial\nx\n```")).toThrow(/unknown block marker 'partial'/);
    expect(() => docModules(blocksOf("guide.md", "```ts continued\nx\n```"))).toThrow(/no block before it/);
  });

  it("compiles every block of README.md and docs/*.md", () => {
    const { modules, diagnostics } = checkDocBlocks();
    expect(diagnostics).toEqual([]);
    // The README's Getting started and the guides' examples at least.
    expect(modules).toBeGreaterThanOrEqual(10);
  });
});
