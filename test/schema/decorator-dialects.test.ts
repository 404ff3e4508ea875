import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { transform } from "esbuild";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EntityClass, MemoryStore, TableContext } from "../../src/index.js";
import { decoratorDialectOf } from "../../src/schema/decorators.js";
import { type EntityModel, getEntityModel } from "../../src/schema/entity-model.js";
import { Address, Employee, Note, Truck, Vehicle } from "./dialects/entities.js";

/** The fixture as vitest loads it (legacy decorators, per the root tsconfig). */
const asLoaded = { Address, Employee, Note, Truck, Vehicle };
type Entities = typeof asLoaded;

const here = dirname(fileURLToPath(import.meta.url));
const fixture = join(here, "dialects/entities.ts");
const srcIndex = resolve(here, "../../src/index.ts");
// The compiled copies import the very module instance this test uses (one model registry).
const source = readFileSync(fixture, "utf8").replace('"../../../src/index.js"', JSON.stringify(srcIndex));

function tsc(options: ts.CompilerOptions): string {
  return ts.transpileModule(source, {
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, ...options },
  }).outputText;
}

let dir: string;
let count = 0;
async function load(code: string): Promise<Entities> {
  count += 1;
  const file = join(dir, `entities-${count}.mjs`);
  writeFileSync(file, code);
  return (await import(pathToFileURL(file).href)) as Entities;
}

/** Everything a model decides, with class references replaced by names (each copy has its own classes). */
function describeModel(model: EntityModel): unknown {
  return {
    name: model.name,
    table: model.table,
    type: model.type,
    version: model.version,
    partitionKey: model.partitionKey.source,
    rowKey: model.rowKey.source,
    columns: model.columns.map((c) => ({ ...c, jsonClass: c.jsonClass?.name })),
    indexes: [...model.indexes.values()].map((i) => ({
      ...i,
      partitionKey: i.partitionKey.source,
      rowKey: i.rowKey.source,
    })),
  };
}

const CLASSES = ["Employee", "Note", "Vehicle", "Truck"] as const;

/** Writes the same entities through each class and returns every stored row, without ETags and times. */
async function storedRows(entities: Entities): Promise<unknown[]> {
  const store = new MemoryStore();
  const db = new TableContext({ store });
  await db.ensureTables(...CLASSES.map((name) => entities[name] as EntityClass));
  const address = Object.assign(new entities.Address(), { street: "1 Main St", city: "Springfield" });
  await db.repository(entities.Employee).insert(
    Object.assign(new entities.Employee(), {
      department: "Sales",
      employeeId: 223,
      firstName: "Jane",
      lastName: "Jones",
      email: "jonesj@contoso.com",
      salary: 5,
      badge: 9_007_199_254_740_993n,
      active: true,
      hired: new Date("2024-02-29T12:34:56.789Z"),
      uid: "0f8fad5b-d9cb-469f-a165-70867728950e",
      photo: new Uint8Array([1, 2, 3]),
      address,
    }),
  );
  await db.repository(entities.Note).insert(
    Object.assign(new entities.Note(), {
      topic: "t",
      id: "1",
      text: "hello",
      createdAt: new Date(0),
      createdBy: "me",
    }),
  );
  await db
    .repository(entities.Vehicle)
    .insert(Object.assign(new entities.Vehicle(), { fleet: "f", plate: "AB-1", seats: 5 }));
  await db
    .repository(entities.Truck)
    .insert(Object.assign(new entities.Truck(), { fleet: "f", plate: "XY-9", seats: 2, payload: 7.5 }));
  const rows: unknown[] = [];
  for (const table of ["Employees", "EmployeesByName", "Notes", "Vehicles"]) {
    const page = await store.queryPage(table, {});
    for (const { etag: _etag, timestamp: _timestamp, ...row } of page.items) {
      // A copy's version stamp is a digest of its entity's ETag, which holds the write's time: compare its kind.
      if (typeof row._tkStamp === "string" && row._tkStamp.startsWith("v:"))
        row._tkStamp = "v:<digest of the ETag>";
      rows.push({ table, row });
    }
  }
  const employee = await db.repository(entities.Employee).get({ department: "Sales", employeeId: 223 });
  expect(employee).toBeInstanceOf(entities.Employee);
  expect(employee?.address).toBeInstanceOf(entities.Address);
  return rows;
}

const variants: ReadonlyArray<{
  name: string;
  dialect: "legacy" | "standard";
  compile?: () => Promise<string> | string;
  withoutSymbolMetadata?: boolean;
}> = [
  { name: "as vitest loads it (legacy, root tsconfig)", dialect: "legacy" },
  {
    name: "tsc, experimentalDecorators + emitDecoratorMetadata",
    dialect: "legacy",
    compile: () =>
      tsc({ experimentalDecorators: true, emitDecoratorMetadata: true, useDefineForClassFields: false }),
  },
  {
    name: "tsc, experimentalDecorators with define semantics for fields",
    dialect: "legacy",
    compile: () => tsc({ experimentalDecorators: true, useDefineForClassFields: true }),
  },
  { name: "tsc, standard decorators (the tsc --init default)", dialect: "standard", compile: () => tsc({}) },
  {
    name: "tsc, standard decorators, Symbol.metadata missing at class definition",
    dialect: "standard",
    compile: () => tsc({}),
    withoutSymbolMetadata: true,
  },
  {
    name: "esbuild, standard decorators (as tsx runs it)",
    dialect: "standard",
    compile: async () =>
      (
        await transform(source, {
          loader: "ts",
          format: "esm",
          target: "es2022",
          tsconfigRaw: { compilerOptions: { experimentalDecorators: false } },
        })
      ).code,
  },
];

describe("both decorator dialects", () => {
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "tablekit-dialects-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const reference = {
    models: () => CLASSES.map((name) => describeModel(getEntityModel(asLoaded[name] as EntityClass))),
    rows: () => storedRows(asLoaded),
  };

  it.each(variants)("$name: same models and stored rows", async (variant) => {
    let entities: Entities = asLoaded;
    if (variant.compile) {
      const code = await variant.compile();
      if (variant.dialect === "standard") expect(code).not.toMatch(/__decorate\(/);
      else expect(code).toMatch(/__decorate\(/);
      const symbol = Symbol as { metadata?: symbol };
      const polyfill = symbol.metadata;
      if (variant.withoutSymbolMetadata) delete symbol.metadata;
      try {
        entities = await load(code);
      } finally {
        if (variant.withoutSymbolMetadata) symbol.metadata = polyfill;
      }
      const metadata = (entities.Employee as unknown as Record<symbol, unknown>)[
        Symbol.for("Symbol.metadata")
      ];
      if (variant.dialect === "standard" && !variant.withoutSymbolMetadata)
        expect(metadata).toBeTypeOf("object");
      else expect(metadata).toBeUndefined();
    }
    for (const name of CLASSES) expect(decoratorDialectOf(entities[name])).toBe(variant.dialect);
    expect(CLASSES.map((name) => describeModel(getEntityModel(entities[name] as EntityClass)))).toEqual(
      reference.models(),
    );
    expect(await storedRows(entities)).toEqual(await reference.rows());
  });

  it("the reference rows are what the fixture declares", async () => {
    const rows = (await reference.rows()) as Array<{ table: string; row: Record<string, unknown> }>;
    // Employee + its same-partition copy, the other-table copy, a note, a vehicle and a truck.
    expect(rows.map((r) => r.table)).toEqual([
      "Employees",
      "Employees",
      "EmployeesByName",
      "Notes",
      "Vehicles",
      "Vehicles",
    ]);
    expect(rows.filter((r) => "scratch" in r.row)).toEqual([]);
    expect(rows.find((r) => r.row.rowKey === "XY-9")?.row).toMatchObject({ Cabin: 2, payload: 7.5 });
  });

  it("the reference models are what the fixture declares", () => {
    const [employee, note, , truck] = reference.models() as Array<{
      columns: Array<{ field: string; property: string; type: string }>;
    }>;
    expect(employee!.columns.map((c) => `${c.field}:${c.property}:${c.type}`)).toEqual([
      "department:department:String",
      "employeeId:employeeId:Int32",
      "firstName:FirstName:String",
      "lastName:lastName:String",
      "email:email:String",
      "salary:salary:Double",
      "badge:badge:Int64",
      "active:active:Boolean",
      "hired:hired:DateTime",
      "uid:uid:Guid",
      "photo:photo:Binary",
      "address:address:Json",
      "age:age:Int32",
    ]);
    // Base class columns first, then the subclass's own.
    expect(note!.columns.map((c) => c.field)).toEqual(["createdAt", "createdBy", "topic", "id", "text"]);
    // A redeclared field keeps its place and takes the subclass's options.
    expect(truck!.columns.map((c) => `${c.field}:${c.property}`)).toEqual([
      "fleet:fleet",
      "plate:plate",
      "seats:Cabin",
      "payload:payload",
    ]);
  });
});
