import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { TableEndpoint } from "../../src/movement/endpoint.js";
import { exportTable } from "../../src/movement/export.js";
import { startTableServer, type TableServer } from "../../src/server/table-server.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { bundleChild, type ChildScript } from "../support/kill-child.js";
import { seededRandom } from "../support/seeded-random.js";

// An import killed with SIGKILL at seeded points (before a batch is sent, or after its answer came but
// before the checkpoint recorded it), then resumed, ends with every row exactly once: in insert mode a
// row written twice would fail with EntityAlreadyExists and be counted as failed.
const SEED = Number(process.env.TABLEKIT_KILL_SEED ?? 2111);
const LINES = 900;
const dir = mkdtempSync(join(tmpdir(), "tablekit-kill-"));
let child: ChildScript;
let server: TableServer;

beforeAll(async () => {
  child = await bundleChild("test/movement/import-child.ts");
  server = await startTableServer({ port: 0, store: new MemoryStore() });
});
afterAll(async () => {
  child?.dispose();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

function inputLines(random: () => number): string[] {
  const lines: string[] = [];
  for (let i = 0; i < LINES; i++) {
    // Mostly runs of one partition, sometimes interleaved: batches of many sizes.
    const partition = random() < 0.7 ? Math.floor(i / 60) : Math.floor(random() * 8);
    const key = String(i).padStart(5, "0");
    lines.push(
      `{"PartitionKey":"p${partition}","RowKey":"${key}","n@odata.type":"Edm.Int64","n":"${i}","text":"row ${key}"}`,
    );
  }
  return lines;
}

describe("import killed with SIGKILL, then resumed", () => {
  for (const mode of ["insert", "upsert"] as const) {
    test(`${mode}: every row once (seed ${SEED})`, async () => {
      const random = seededRandom(SEED + (mode === "insert" ? 0 : 1));
      const table = `kill${mode}${SEED}`;
      const input = join(dir, `${table}.ndjson`);
      const checkpoint = join(dir, `${table}.checkpoint`);
      const lines = inputLines(random);
      writeFileSync(input, `${lines.join("\n")}\n`);
      const endpoint = TableEndpoint.fromConnectionString(server.connectionString);
      await endpoint.createTable(table);
      const args = [server.connectionString, table, input, checkpoint, mode];
      // Two kills at seeded lines (each run announces at least 2 lines per batch it sends), then a run to the end.
      const stops = [1 + Math.floor(random() * 40), 1 + Math.floor(random() * 12)];
      for (const stopAt of stops) {
        const said = await child.run(args, stopAt);
        expect(said.length, `stop at ${stopAt}`).toBe(stopAt);
      }
      const said = await child.run(args, 0);
      const done = said.find((line) => line.startsWith("done "));
      const [imported, failed] = done!.split(" ").slice(1).map(Number);
      expect({ imported, failed }, `stops ${stops.join(", ")}`).toEqual({ imported: LINES, failed: 0 });
      let text = "";
      const count = await exportTable(endpoint, table, {
        write: (t) => {
          text += t;
          return undefined;
        },
        close: async () => undefined,
      });
      expect(count).toBe(LINES);
      const keys = new Set(
        text
          .trimEnd()
          .split("\n")
          .map((l) => (JSON.parse(l) as { RowKey: string }).RowKey),
      );
      expect(keys.size).toBe(LINES);
    });
  }
});
