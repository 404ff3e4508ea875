import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { rowsAsItems } from "../../src/movement/copy.js";
import { TableEndpoint } from "../../src/movement/endpoint.js";
import { exportTable } from "../../src/movement/export.js";
import { importItems } from "../../src/movement/import.js";
import { readLines } from "../../src/movement/lines.js";
import { formatLine, rowFromJson } from "../../src/movement/typed-row.js";
import { verifyTables } from "../../src/movement/verify.js";
import { startTableServer } from "../../src/server/table-server.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { azuriteConnectionString, serveConnectionString } from "../support/azurite.js";
import { azuriteSelected, serveSelected, uniqueTableName } from "../support/stores.js";
import { edgeLines, NEGATIVE_ZERO_LINE } from "./edge-rows.js";

// Every Edm type and edge goes line → import → export → line unchanged, on each backend.
const dir = mkdtempSync(join(tmpdir(), "tablekit-movement-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A line without its Timestamp, in the format's own spelling. */
function canonical(line: string): string {
  const { timestamp: _, ...row } = rowFromJson(JSON.parse(line));
  return formatLine(row);
}

async function roundTrip(
  endpoint: TableEndpoint,
  lines: readonly string[],
  reopen?: () => Promise<TableEndpoint>,
) {
  const table = uniqueTableName("move");
  const input = join(dir, `${table}.ndjson`);
  writeFileSync(input, `${lines.join("\n")}\n`);
  await endpoint.createTable(table);
  const failures: string[] = [];
  const stats = await importItems(endpoint, readLines(input), {
    table,
    mode: "insert",
    onFailure: (f) => failures.push(`${f.line}: ${f.reason}`),
  });
  expect(failures).toEqual([]);
  expect(stats.imported).toBe(lines.length);
  const source = reopen === undefined ? endpoint : await reopen();
  let text = "";
  const count = await exportTable(source, table, {
    write: (t) => {
      text += t;
      return undefined;
    },
    close: async () => undefined,
  });
  expect(count).toBe(lines.length);
  const exported = text.trimEnd().split("\n");
  for (const line of exported)
    expect(line).toMatch(/"Timestamp@odata.type":"Edm.DateTime","Timestamp":"[^"]+\.\d{7}Z"/);
  expect(exported.map(canonical).sort()).toEqual(lines.map(canonical).sort());
  // A negative zero is imported as 0, on every store alike: the export writes 0.
  if (lines.includes(NEGATIVE_ZERO_LINE))
    expect(exported.find((line) => line.includes('"negzero"'))).toMatch(/"nz":0[,}]/);
  // And verify agrees: the table equals itself.
  const result = await verifyTables(
    { endpoint: source, table },
    { endpoint: source, table },
    {},
    () => undefined,
  );
  expect(result).toMatchObject({ equal: lines.length, different: 0, onlyFirst: 0, onlySecond: 0 });
}

describe("export/import round trip", () => {
  test.runIf(azuriteSelected)("Azurite", async () => {
    await roundTrip(TableEndpoint.fromConnectionString(azuriteConnectionString()), [
      ...edgeLines(),
      NEGATIVE_ZERO_LINE,
    ]);
  });

  test.runIf(serveSelected)("tablekit serve", async () => {
    await roundTrip(TableEndpoint.fromConnectionString(serveConnectionString()), [
      ...edgeLines(),
      NEGATIVE_ZERO_LINE,
    ]);
  });

  test.runIf(azuriteSelected && serveSelected)(
    "Azurite → serve: copied, and verify finds both equal",
    async () => {
      const azurite = TableEndpoint.fromConnectionString(azuriteConnectionString());
      const serve = TableEndpoint.fromConnectionString(serveConnectionString());
      const table = uniqueTableName("cross");
      const input = join(dir, `${table}.ndjson`);
      writeFileSync(input, `${edgeLines().join("\n")}\n`);
      await azurite.createTable(table);
      await importItems(azurite, readLines(input), { table, mode: "insert" });
      await serve.createTable(table);
      const copied = await importItems(serve, rowsAsItems(azurite.pages(table)), { table, mode: "insert" });
      expect(copied).toMatchObject({ imported: edgeLines().length, failed: 0 });
      const mismatches: string[] = [];
      const result = await verifyTables({ endpoint: azurite, table }, { endpoint: serve, table }, {}, (m) =>
        mismatches.push(`${m.rowKey}: ${m.kind} ${m.detail ?? ""}`),
      );
      expect(mismatches).toEqual([]);
      expect(result.equal).toBe(edgeLines().length);
    },
  );

  test("a MemoryStore file, read back by a new server", async () => {
    const file = join(dir, "store.jsonl");
    const first = await startTableServer({ port: 0, store: new MemoryStore({ file }) });
    let second: Awaited<ReturnType<typeof startTableServer>> | undefined;
    try {
      await roundTrip(
        TableEndpoint.fromConnectionString(first.connectionString),
        [...edgeLines(), NEGATIVE_ZERO_LINE],
        async () => {
          await first.close();
          second = await startTableServer({ port: 0, store: new MemoryStore({ file }) });
          return TableEndpoint.fromConnectionString(second.connectionString);
        },
      );
    } finally {
      await first.close().catch(() => undefined);
      await second?.close();
    }
  });
});
