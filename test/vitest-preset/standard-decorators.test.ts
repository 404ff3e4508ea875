/**
 * `tablekit/vitest`'s `standardDecorators()` (API.md, "As shipped"): it compiles standard decorators
 * and stays out of the way in a legacy-decorator project, as its tsconfig.json says (comments, trailing
 * commas and `extends` included, as `tsc --init` and real projects write them). That it makes a
 * default vitest 4 project run docs/testing.md is checked from the packed package (test/package/).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { standardDecorators } from "../../src/vitest/index.js";

const DECORATED = `function mark(value: unknown, context: ClassDecoratorContext): void {
  (globalThis as { marked?: string }).marked = String(context.name);
}
@mark class Order { total: number = 1; }
export { Order };
`;

/** A project folder with these files. */
function project(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "tablekit-preset-"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(root, name, ".."), { recursive: true });
    writeFileSync(join(root, name), text);
  }
  return root;
}

const TSC_INIT = `{
  // Visit https://aka.ms/tsconfig to read more about this file
  "compilerOptions": {
    "module": "nodenext", // "http://not-a-comment" stays a string
    "target": "es2022",
    /* "experimentalDecorators": true, */
    "strict": true,
  },
}
`;

describe("standardDecorators()", () => {
  it("compiles a standard decorator down to code Node 20 runs, with a source map", async () => {
    const plugin = standardDecorators();
    plugin.configResolved({ root: project({ "tsconfig.json": TSC_INIT }) });
    const result = await plugin.transform(DECORATED, "/app/src/order.ts?v=1");
    expect(result).toBeDefined();
    expect(result!.code).not.toMatch(/^@mark/m);
    expect(JSON.parse(result!.map).sources).toEqual(["/app/src/order.ts"]);
    const module = await import(`data:text/javascript,${encodeURIComponent(result!.code)}`);
    expect(new module.Order().total).toBe(1);
    expect((globalThis as { marked?: string }).marked).toBe("Order");
  });

  it("leaves files without a decorator, other languages and node_modules to Vite", async () => {
    const plugin = standardDecorators();
    plugin.configResolved({ root: project({ "tsconfig.json": TSC_INIT }) });
    expect(await plugin.transform("export const a: number = 1;\n", "/app/src/a.ts")).toBeUndefined();
    expect(await plugin.transform(DECORATED, "/app/src/a.js")).toBeUndefined();
    expect(await plugin.transform(DECORATED, "/app/node_modules/lib/a.ts")).toBeUndefined();
  });

  it("does nothing where tsconfig.json sets experimentalDecorators, itself or through extends", async () => {
    const legacy = project({
      "tsconfig.base.json": '{ "compilerOptions": { "experimentalDecorators": true, } }',
      "tsconfig.json":
        '{\n  // Nest\n  "extends": "./tsconfig.base.json",\n  "compilerOptions": { "strict": true }\n}',
    });
    const plugin = standardDecorators();
    plugin.configResolved({ root: legacy });
    expect(await plugin.transform(DECORATED, "/app/src/order.ts")).toBeUndefined();
    // Said outright, the option wins over the file.
    const forced = standardDecorators({ legacy: false });
    forced.configResolved({ root: legacy });
    expect(await forced.transform(DECORATED, "/app/src/order.ts")).toBeDefined();
  });
});
