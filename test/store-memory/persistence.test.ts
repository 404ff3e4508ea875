import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { StoreError } from "../../src/errors.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import type { StoredEntity } from "../../src/store/table-store.js";
import { readAll } from "./helpers.js";

let dir: string;
let file: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "tablekit-memory-"));
  file = path.join(dir, "store.jsonl");
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

async function everything(store: MemoryStore, tables: string[]): Promise<Record<string, StoredEntity[]>> {
  const out: Record<string, StoredEntity[]> = {};
  for (const t of tables) out[t] = (await readAll(store, t)).items;
  return out;
}

async function writeSample(store: MemoryStore): Promise<void> {
  await store.createTable("People");
  await store.createTable("Gone");
  await store.createTable("Other");
  await store.insert("People", {
    partitionKey: "p",
    rowKey: "all-types",
    s: "text with 'quotes', \"double\", newline\n and 😀",
    i32: -5,
    dbl: { type: "Double", value: 5 },
    frac: 0.1,
    nan: { type: "Double", value: "NaN" },
    negZero: { type: "Double", value: -0 },
    i64: -(2n ** 63n),
    i64max: 2n ** 63n - 1n,
    yes: true,
    at: new Date("1999-12-31T23:59:59.999Z"),
    precise: { type: "DateTime", value: "2024-05-01T10:00:00.1234567Z" },
    g: { type: "Guid", value: "3f2504e0-4f89-11d3-9a0c-0305e82c3301" },
    bin: new Uint8Array([0, 255, 7]),
  });
  await store.insert("People", { partitionKey: "p", rowKey: "deleted" });
  await store.delete("People", "p", "deleted", "*");
  await store.submitTransaction("People", "q", [
    { kind: "insert", entity: { partitionKey: "q", rowKey: "1", n: 1 } },
    { kind: "insert", entity: { partitionKey: "q", rowKey: "2", n: 2 } },
  ]);
  await store.update("People", { partitionKey: "q", rowKey: "1", m: 1 }, "merge", "*");
  await store.insert("Gone", { partitionKey: "x", rowKey: "y" });
  await store.deleteTable("Gone");
  await store.insert("Other", { partitionKey: "o", rowKey: "o" });
}

describe("MemoryStore({ file })", () => {
  test("data, types, ETags and timestamps survive a reopen", async () => {
    const first = new MemoryStore({ file });
    await writeSample(first);
    const before = await everything(first, ["People", "Other"]);
    const reopened = new MemoryStore({ file });
    const after = await everything(reopened, ["People", "Other"]);
    expect(after).toEqual(before);
    const allTypes = after.People!.find((e) => e.rowKey === "all-types")!;
    expect(allTypes.i64).toBe(-(2n ** 63n));
    expect(allTypes.nan).toBeNaN();
    expect(Object.is(allTypes.negZero, 0)).toBe(true); // stored as 0, as on Azure (util/stored-double.ts)
    expect([...(allTypes.bin as Uint8Array)]).toEqual([0, 255, 7]);
    expect(await reopened.getEntity("People", "p", "deleted")).toBeUndefined();
    await expect(reopened.getEntity("Gone", "x", "y")).rejects.toBeInstanceOf(StoreError);
    // 100-ns precision survives too (visible through filters).
    const precise = await reopened.queryPage("People", {
      filter: "precise eq datetime'2024-05-01T10:00:00.1234567Z'",
    });
    expect(precise.items).toHaveLength(1);
  });

  test("ETags read before a reopen still work for conditional writes; new ETags stay distinct", async () => {
    const first = new MemoryStore({ file });
    await first.createTable("Things");
    const { etag } = await first.insert("Things", { partitionKey: "p", rowKey: "r", v: 1 });
    const reopened = new MemoryStore({ file });
    const { etag: next } = await reopened.update(
      "Things",
      { partitionKey: "p", rowKey: "r", v: 2 },
      "replace",
      etag,
    );
    expect(next).not.toBe(etag);
    expect(next > etag).toBe(true);
  });

  test("appends one line per committed request, none for failed ones", async () => {
    const store = new MemoryStore({ file });
    await store.createTable("Things");
    await store.insert("Things", { partitionKey: "p", rowKey: "a" });
    await store.submitTransaction("Things", "p", [
      { kind: "insert", entity: { partitionKey: "p", rowKey: "b" } },
      { kind: "insert", entity: { partitionKey: "p", rowKey: "c" } },
    ]);
    await store.insert("Things", { partitionKey: "p", rowKey: "a" }).catch(() => {});
    await store
      .submitTransaction("Things", "p", [{ kind: "insert", entity: { partitionKey: "p", rowKey: "a" } }])
      .catch(() => {});
    await store.createTable("Things"); // already exists: nothing to commit
    await store.delete("Things", "p", "zzz", "*"); // nothing deleted
    const lines = fs.readFileSync(file, "utf8").split("\n");
    expect(lines.pop()).toBe("");
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
  });

  test("server settings are one journal line each, survive reopen and compaction, and go with their table", async () => {
    const first = new MemoryStore({ file });
    const access = first.served()!;
    await first.createTable("Kept");
    await first.createTable("Gone");
    const linesBefore = fs.readFileSync(file, "utf8").split("\n").length;
    access.setAccountSetting("props", '<a>&amp;\n"x"</a>');
    access.setTableSetting("kept", "acl", "one"); // table names are case-insensitive
    access.setTableSetting("Gone", "acl", "two");
    access.setAccountSetting("cleared", "x");
    access.setAccountSetting("cleared", undefined);
    expect(fs.readFileSync(file, "utf8").split("\n").length - linesBefore).toBe(5);
    expect(() => access.setTableSetting("Missing", "acl", "x")).toThrow(StoreError);
    await first.deleteTable("Gone");
    for (const reopened of [new MemoryStore({ file }), new MemoryStore({ file })]) {
      const again = reopened.served()!;
      expect(again.accountSetting("props")).toBe('<a>&amp;\n"x"</a>');
      expect(again.accountSetting("cleared")).toBeUndefined();
      expect(again.tableSetting("KEPT", "acl")).toBe("one");
      expect(again.tableSetting("Gone", "acl")).toBeUndefined();
      await reopened.createTable("Gone");
      expect(again.tableSetting("Gone", "acl")).toBeUndefined();
      await reopened.deleteTable("Gone");
    }
  });

  test("a torn last line is ignored; later writes append cleanly and reload", async () => {
    const first = new MemoryStore({ file });
    await first.createTable("Things");
    await first.insert("Things", { partitionKey: "p", rowKey: "a", v: 1 });
    const before = await everything(first, ["Things"]);
    // A process killed in the middle of appendFileSync leaves a partial line without a newline.
    const line = fs.readFileSync(file, "utf8").trimEnd().split("\n").at(-1)!;
    fs.appendFileSync(file, line.slice(0, Math.floor(line.length / 2)).replace('"a"', '"torn"'));
    const second = new MemoryStore({ file });
    expect(await everything(second, ["Things"])).toEqual(before);
    expect(fs.readFileSync(file, "utf8").endsWith("\n")).toBe(true);
    await second.insert("Things", { partitionKey: "p", rowKey: "b", v: 2 });
    const third = new MemoryStore({ file });
    const { items } = await readAll(third, "Things");
    expect(items.map((e) => [e.rowKey, e.v])).toEqual([
      ["a", 1],
      ["b", 2],
    ]);
  });

  test("a torn file with only a partial first line loads as empty", async () => {
    fs.writeFileSync(file, '{"ts":"1","m":[{"op":"createT');
    const store = new MemoryStore({ file });
    await store.createTable("Things");
    const reopened = new MemoryStore({ file });
    expect((await reopened.queryPage("Things")).items).toEqual([]);
  });

  test("a corrupt line in the middle of the file is reported, not skipped", () => {
    fs.writeFileSync(file, 'not json\n{"ts":"1","m":[]}\n');
    expect(() => new MemoryStore({ file })).toThrow(/corrupt at line 1/);
  });

  test("loading compacts the file atomically (no temp file left behind)", async () => {
    const first = new MemoryStore({ file });
    await first.createTable("Things");
    for (let i = 0; i < 50; i++)
      await first.upsert("Things", { partitionKey: "p", rowKey: "r", i }, "replace");
    const grown = fs.statSync(file).size;
    new MemoryStore({ file });
    expect(fs.statSync(file).size).toBeLessThan(grown / 10);
    expect(fs.readdirSync(dir)).toEqual(["store.jsonl"]);
    const again = new MemoryStore({ file });
    expect((await again.getEntity("Things", "p", "r"))!.i).toBe(49);
  });

  test("creates the file's directory on the first write", async () => {
    const nested = path.join(dir, "a", "b", "store.jsonl");
    const store = new MemoryStore({ file: nested });
    await store.createTable("Things");
    expect(fs.existsSync(nested)).toBe(true);
  });

  test("a journal written before rows were packed still loads, value for value", async () => {
    // The line format is unchanged by the compact row representation: [name, type, value] triples.
    const ts = "17145576001234567"; // 2024-05-01T10:00:00.1234567Z in ticks since 1970
    const put = {
      op: "put",
      t: "Old",
      pk: "p",
      rk: "r",
      ts,
      p: [
        ["s", "String", "text"],
        ["i32", "Int32", -5],
        ["i64", "Int64", "-9223372036854775808"],
        ["small64", "Int64", "42"],
        ["dbl", "Double", "-0"],
        ["yes", "Boolean", true],
        ["at", "DateTime", "9466847999990000"],
        ["precise", "DateTime", "17145576001234567"],
        ["g", "Guid", "3f2504e0-4f89-11d3-9a0c-0305e82c3301"],
        ["bin", "Binary", "AP8H"],
      ],
    };
    const lines = [
      { ts, m: [{ op: "createTable", t: "Old" }] },
      { ts, m: [put] },
    ];
    fs.writeFileSync(file, lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
    const store = new MemoryStore({ file });
    const e = await store.getEntity("Old", "p", "r");
    expect(e).toEqual({
      partitionKey: "p",
      rowKey: "r",
      etag: `W/"datetime'${encodeURIComponent("2024-05-01T10:00:00.1234567Z")}'"`,
      timestamp: new Date("2024-05-01T10:00:00.123Z"),
      s: "text",
      i32: -5,
      i64: -(2n ** 63n),
      small64: 42n,
      dbl: 0,
      yes: true,
      at: new Date("1999-12-31T23:59:59.999Z"),
      precise: new Date("2024-05-01T10:00:00.123Z"),
      g: { type: "Guid", value: "3f2504e0-4f89-11d3-9a0c-0305e82c3301" },
      bin: new Uint8Array([0, 255, 7]),
    });
    // A "-0" of a file written before -0 was normalised reads as the 0 a write stores now.
    expect(Object.is(e?.dbl, 0)).toBe(true);
    // Sub-millisecond DateTime ticks survive: a filter at 100-ns precision still tells them apart.
    const page = await store.queryPage("Old", {
      filter: "precise eq datetime'2024-05-01T10:00:00.1234567Z'",
    });
    expect(page.items).toHaveLength(1);
    const miss = await store.queryPage("Old", { filter: "precise eq datetime'2024-05-01T10:00:00.123Z'" });
    expect(miss.items).toHaveLength(0);
  });

  test("a journaled row that repeats a name keeps its first position and its last value", async () => {
    const ts = "17145576001234567";
    const p = [
      ["a", "Int32", 1],
      ["b", "String", "x"],
      ["a", "String", "last"],
    ];
    const lines = [
      { ts, m: [{ op: "createTable", t: "Rep" }] },
      { ts, m: [{ op: "put", t: "Rep", pk: "p", rk: "r", ts, p }] },
    ];
    fs.writeFileSync(file, lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
    const e = await new MemoryStore({ file }).getEntity("Rep", "p", "r");
    const { partitionKey, rowKey, etag, timestamp, ...rest } = e ?? {};
    expect(Object.entries(rest)).toEqual([
      ["a", "last"],
      ["b", "x"],
    ]);
  });

  test("data written by another process load in this one", async () => {
    const moduleUrl = pathToFileURL(path.resolve("src/store/memory/memory-store.ts")).href;
    const script = path.join(dir, "writer.mts"); // .mts: ESM outside any package
    fs.writeFileSync(
      script,
      `import { MemoryStore } from ${JSON.stringify(moduleUrl)};
const store = new MemoryStore({ file: ${JSON.stringify(file)} });
await store.createTable("Things");
await store.insert("Things", { partitionKey: "p", rowKey: "r", n: 12345678901234567890n % (2n ** 63n), at: new Date(86400000) });
`,
    );
    execFileSync(process.execPath, ["--import", "tsx", script], { cwd: process.cwd(), stdio: "pipe" });
    const store = new MemoryStore({ file });
    const e = await store.getEntity("Things", "p", "r");
    expect(e).toMatchObject({ n: 12345678901234567890n % 2n ** 63n, at: new Date(86400000) });
  });
});
