import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { transform } from "esbuild";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SchemaError } from "../../src/index.js";
import { decoratorDialectOf } from "../../src/schema/decorators.js";
import { getEntityModel } from "../../src/schema/entity-model.js";

// Each case is real source, compiled as a project of that dialect would compile it, then loaded:
// a mistake must surface as a SchemaError that says what to change, never a TypeError.
const srcIndex = resolve(dirname(fileURLToPath(import.meta.url)), "../../src/index.ts");
const header = `import { Column, Entity } from ${JSON.stringify(srcIndex)};\n`;

type Compiler = (code: string) => Promise<string>;
const compilers: Record<string, Compiler> = {
  "legacy (tsc)": async (code) =>
    ts.transpileModule(code, {
      compilerOptions: {
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ESNext,
        experimentalDecorators: true,
        emitDecoratorMetadata: true,
      },
    }).outputText,
  "legacy without emitDecoratorMetadata (tsc)": async (code) =>
    ts.transpileModule(code, {
      compilerOptions: {
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ESNext,
        experimentalDecorators: true,
      },
    }).outputText,
  "standard (tsc)": async (code) =>
    ts.transpileModule(code, {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
    }).outputText,
  "standard (esbuild)": async (code) =>
    (
      await transform(code, {
        loader: "ts",
        format: "esm",
        target: "es2022",
        tsconfigRaw: { compilerOptions: { experimentalDecorators: false } },
      })
    ).code,
};
const standard = ["standard (tsc)", "standard (esbuild)"];

let dir: string;
let count = 0;
async function run(compiler: string, body: string): Promise<Record<string, unknown>> {
  const code = await compilers[compiler]!(header + body);
  count += 1;
  const file = join(dir, `case-${count}.mjs`);
  writeFileSync(file, code);
  return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
}

async function schemaError(compiler: string, body: string): Promise<string> {
  const error = await run(compiler, body).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `${compiler} should reject:\n${body}`).toBeInstanceOf(SchemaError);
  return (error as SchemaError).message;
}

const entity = `@Entity({ table: "Things", partitionKey: "{id}", rowKey: "r" })`;

describe("decorator misuse gives a SchemaError saying what to change", () => {
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "tablekit-misuse-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const all = Object.keys(compilers);
  const cases: Array<[string, string[], string, RegExp[]]> = [
    [
      "a class decorated twice",
      all,
      `${entity} ${entity} export class Twice { @Column({ type: "String" }) id!: string; }`,
      [/Twice is decorated with @Entity twice/, /keep one/],
    ],
    [
      "a field decorated twice",
      all,
      `${entity} export class Twice { @Column({ type: "String" }) @Column({ type: "String" }) id!: string; }`,
      [/Twice\.id is decorated with @Column twice/],
    ],
    [
      "a static field",
      all,
      `${entity} export class S { @Column({ type: "String" }) id!: string; @Column({ type: "String" }) static shared = ""; }`,
      [/static field/, /shared/],
    ],
    [
      "a method",
      all,
      `${entity} export class M { @Column({ type: "String" }) id!: string; @Column() name() { return ""; } }`,
      [/decorates fields/, /name/, /method/],
    ],
    [
      "a getter",
      all,
      `${entity} export class G { @Column({ type: "String" }) id!: string; @Column() get name() { return ""; } }`,
      [/decorates fields/, /name/],
    ],
    [
      "a symbol-named field",
      all,
      `const k = Symbol("k"); ${entity} export class Y { @Column({ type: "String" }) id!: string; @Column({ type: "String" }) [k] = ""; }`,
      [/symbol-named field/, /Symbol\(k\)/],
    ],
    [
      "an auto-accessor",
      standard,
      `${entity} export class A { @Column({ type: "String" }) id!: string; @Column({ type: "String" }) accessor name = ""; }`,
      [/'name' is a accessor/, /remove the `accessor` keyword/],
    ],
    [
      "an ES-private field",
      standard,
      `${entity} export class P { @Column({ type: "String" }) id!: string; @Column({ type: "String" }) #secret = ""; }`,
      [/private field '#secret'/, /drop the '#'/],
    ],
    [
      "@Column without parentheses",
      all,
      `${entity} export class N { @(Column as any) id!: string; }`,
      [/write @Column\(\) or @Column\(\{ type \}\)/],
    ],
    [
      "@Entity without parentheses",
      all,
      `@(Entity as any) export class N { @Column({ type: "String" }) id!: string; }`,
      [/write @Entity\(\{ table, partitionKey, rowKey \}\)/],
    ],
    [
      "@Entity on a field",
      all,
      `export class F { @(Entity({ table: "Things", partitionKey: "{id}", rowKey: "r" }) as any) id!: string; }`,
      [/@Entity decorates classes/],
    ],
    [
      "@Column on a class",
      standard,
      `@(Column({ type: "String" }) as any) export class C { id!: string; }`,
      [/@Column decorates fields/, /@Entity/],
    ],
    [
      "a column without type where nothing can infer it",
      [...standard, "legacy without emitDecoratorMetadata (tsc)"],
      `${entity} export class Untyped { @Column({ type: "String" }) id!: string; @Column() nickname!: string; }`,
      [/Untyped\.nickname/, /cannot be inferred/, /@Column\(\{ type:/],
    ],
  ];

  for (const [label, dialects, body, mentions] of cases) {
    it.each(dialects)(`${label}: %s`, async (compiler) => {
      const message = await schemaError(compiler, body);
      for (const mention of mentions) expect(message).toMatch(mention);
    });
  }

  it("names the fix for the dialect when a column type cannot be inferred", async () => {
    const body = `${entity} export class Untyped { @Column({ type: "String" }) id!: string; @Column() nickname!: string; }`;
    expect(await schemaError("standard (tsc)", body)).toMatch(
      /standard decorators carry no type information/,
    );
    expect(await schemaError("legacy without emitDecoratorMetadata (tsc)", body)).toMatch(
      /enable emitDecoratorMetadata/,
    );
  });

  it("infers column types in legacy mode with emitDecoratorMetadata", async () => {
    const loaded = await run(
      "legacy (tsc)",
      `${entity} export class Inferred { @Column() id!: string; @Column() n!: number; @Column() at!: Date; @Column() big!: bigint; }`,
    );
    const model = getEntityModel(loaded.Inferred as new () => object);
    expect(model.columns.map((c) => c.type)).toEqual(["String", "Double", "DateTime", "Int64"]);
    expect(decoratorDialectOf(loaded.Inferred as Function)).toBe("legacy");
  });

  it("legacy mode without reflect-metadata loaded: explicit types work, missing ones are a SchemaError", async () => {
    // tablekit loads reflect-metadata itself; this is a runtime where that global API is absent.
    const reflect = Reflect as unknown as Record<string, unknown>;
    const saved = {
      getMetadata: reflect.getMetadata,
      metadata: reflect.metadata,
      decorate: reflect.decorate,
    };
    for (const name of Object.keys(saved)) delete reflect[name];
    try {
      const loaded = await run(
        "legacy (tsc)",
        `${entity} export class Typed { @Column({ type: "String" }) id!: string; @Column({ type: "Int32" }) n!: number; }`,
      );
      expect(getEntityModel(loaded.Typed as new () => object).columns.map((c) => c.type)).toEqual([
        "String",
        "Int32",
      ]);
      const message = await schemaError(
        "legacy (tsc)",
        `${entity} export class Untyped { @Column({ type: "String" }) id!: string; @Column() n!: number; }`,
      );
      expect(message).toMatch(/Untyped\.n/);
      expect(message).toMatch(/emitDecoratorMetadata/);
    } finally {
      Object.assign(reflect, saved);
    }
  });

  it("subclasses of an entity are separate entities (decorating both is not 'twice')", async () => {
    const loaded = await run(
      "standard (tsc)",
      `${entity} export class Base { @Column({ type: "String" }) id!: string; }
       @Entity({ table: "Things", partitionKey: "{id}", rowKey: "s", type: "Sub" }) export class Sub extends Base { @Column({ type: "Int32" }) n!: number; }`,
    );
    expect(getEntityModel(loaded.Sub as new () => object).columns.map((c) => c.field)).toEqual(["id", "n"]);
    expect(getEntityModel(loaded.Base as new () => object).columns.map((c) => c.field)).toEqual(["id"]);
  });
});
