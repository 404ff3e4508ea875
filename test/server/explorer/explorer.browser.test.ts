import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TableClient, TableServiceClient } from "@azure/data-tables";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { startTableServer, type TableServer } from "../../../src/server/table-server.js";
import { MemoryStore } from "../../../src/store/memory/memory-store.js";

// The explorer page in a real Chromium (the Debian package, driven by playwright-core; nothing is
// downloaded). One browser for the file, one page per test, every page error and console error kept.

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
// CI installs Chromium (.ci/run); a developer machine without it skips these tests rather than fail.
const missing = !existsSync(CHROMIUM) && process.env.CI === undefined;
const ENTITIES = 30;
const BASE_TIME = Date.UTC(2026, 0, 1);

describe.skipIf(missing)("explorer page in Chromium", () => {
  const dir = mkdtempSync(join(tmpdir(), "tablekit-explorer-"));
  const file = join(dir, "store.jsonl");
  let server: TableServer;
  let browser: Browser;
  let service: TableServiceClient;
  let items: TableClient;
  let page: Page;
  let problems: string[];
  // Statuses a test provokes on purpose: the browser logs each failed fetch as a console error.
  let provoked: number[];

  const client = (table: string) =>
    TableClient.fromConnectionString(server.connectionString, table, { allowInsecureConnection: true });

  beforeAll(async () => {
    server = await startTableServer({ port: 0, store: new MemoryStore({ file }) });
    service = TableServiceClient.fromConnectionString(server.connectionString, {
      allowInsecureConnection: true,
    });
    await service.createTable("items");
    items = client("items");
    for (let i = 0; i < ENTITIES; i++) {
      await items.createEntity({
        partitionKey: "p",
        rowKey: `r${String(i).padStart(2, "0")}`,
        n: { value: String(i * 1_000_000_007), type: "Int64" },
        when: new Date(BASE_TIME + i * 86_400_000),
        label: `item-${i}`,
      });
    }
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    problems = [];
    provoked = [];
    page = await browser.newPage({ acceptDownloads: true });
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(`console error: ${message.text()}`);
    });
    await page.goto(server.explorerUrl ?? "");
  });

  afterEach(async () => {
    await page.close();
    const expected = (p: string) =>
      provoked.some((status) => p.includes(`the server responded with a status of ${status} `));
    expect(problems.filter((p) => !expected(p))).toEqual([]);
  });

  const rows = () => page.locator("#grid tbody tr");
  const openItems = async () => {
    await page.getByRole("button", { name: "items", exact: true }).click();
    await expect.poll(() => rows().count()).toBe(20);
  };

  test("lists the tables; a table's header names each property and its Edm type; filter + Run", async () => {
    // The count of a short table is exact (and is no part of the button's name).
    await expect.poll(() => page.locator("#tables li .count").first().textContent()).toBe(String(ENTITIES));
    await openItems();
    const headers = await page.locator("#grid thead th").allTextContents();
    expect(headers.slice(0, 3)).toEqual(["PartitionKey String", "RowKey String", "Timestamp DateTime"]);
    expect(headers).toContain("n Int64");
    expect(headers).toContain("when DateTime");
    expect(headers).toContain("label String");
    await expect.poll(() => page.getByRole("columnheader", { name: "n Int64" }).count()).toBe(1);
    await page.getByRole("textbox", { name: "Filter" }).fill("label eq 'item-7'");
    await page.getByRole("button", { name: "Run" }).click();
    await expect.poll(() => rows().count()).toBe(1);
    expect(await rows().first().textContent()).toContain("item-7");
    expect(await rows().first().textContent()).toContain(String(7 * 1_000_000_007));
  });

  test("pages with the service's continuation: next and previous", async () => {
    await openItems();
    const first = await rows().first().textContent();
    await page.getByRole("button", { name: "Next", exact: true }).click();
    await expect.poll(() => rows().count()).toBe(ENTITIES - 20);
    expect(await rows().first().textContent()).toContain("item-20");
    expect(await page.getByRole("button", { name: "Next", exact: true }).isDisabled()).toBe(true);
    await page.getByRole("button", { name: "Previous", exact: true }).click();
    await expect.poll(() => rows().count()).toBe(20);
    expect(await rows().first().textContent()).toBe(first);
    // $select and $top shape the page.
    await page.getByRole("textbox", { name: "$select" }).fill("RowKey,label");
    await page.getByRole("spinbutton", { name: "$top" }).fill("5");
    await page.getByRole("button", { name: "Run" }).click();
    await expect.poll(() => rows().count()).toBe(5);
    expect(await page.locator("#grid thead th").allTextContents()).toEqual([
      "RowKey String",
      "label String",
      "Actions",
    ]);
  });

  test("a page fills up to $top across partitions; when the request bound is reached it says more rows follow", async () => {
    // 12 partitions of 3 rows: the service ends every page at a partition boundary.
    await service.createTable("spread");
    const spread = client("spread");
    try {
      for (let p = 0; p < 12; p++) {
        const partitionKey = `p${String(p).padStart(2, "0")}`;
        await spread.submitTransaction(
          [0, 1, 2].map((r) => ["create", { partitionKey, rowKey: `r${r}`, label: p === 11 ? "last" : "x" }]),
        );
      }
      // The page listed the tables when it opened, before this one existed.
      await page.getByRole("button", { name: "Refresh tables" }).click();
      await page.getByRole("button", { name: "spread", exact: true }).click();
      await expect.poll(() => rows().count()).toBe(20);
      expect(await page.locator("#status").textContent()).toBe("20 entities on this page");
      // Matches only in the last partition: ten requests find none, and the page says so.
      await page.getByRole("textbox", { name: "Filter" }).fill("label eq 'last'");
      await page.getByRole("button", { name: "Run" }).click();
      await expect.poll(() => page.locator("#status").textContent()).toMatch(/more rows may follow/);
      expect(await rows().count()).toBe(0);
      expect(await page.locator("#grid thead th").count()).toBe(0);
      expect(await page.getByRole("button", { name: "Next", exact: true }).isDisabled()).toBe(false);
      await page.getByRole("button", { name: "Next", exact: true }).click();
      await expect.poll(() => rows().count()).toBe(3);
      expect(await rows().first().textContent()).toContain("p11");
      expect(await page.getByRole("button", { name: "Next", exact: true }).isDisabled()).toBe(true);
    } finally {
      await service.deleteTable("spread");
    }
  });

  test("a query error shows the service's message", async () => {
    provoked = [400];
    await openItems();
    await page.getByRole("textbox", { name: "Filter" }).fill("n eq");
    await page.getByRole("button", { name: "Run" }).click();
    const alert = page.locator("#query-error");
    await expect.poll(() => alert.isVisible()).toBe(true);
    expect(await alert.textContent()).toMatch(/^400 /);
    expect(await rows().count()).toBe(0);
  });

  test("an edit with a stale ETag shows 412 and overwrites nothing; a fresh edit saves typed values", async () => {
    provoked = [412];
    await openItems();
    await page.getByRole("textbox", { name: "Filter" }).fill("RowKey eq 'r03'");
    await page.getByRole("button", { name: "Run" }).click();
    await expect.poll(() => rows().count()).toBe(1);
    await rows().first().getByRole("button", { name: "Edit" }).click();
    const editor = page.getByRole("textbox", { name: "Entity JSON" });
    const shown = JSON.parse(await editor.inputValue());
    expect(shown).toMatchObject({ RowKey: "r03", n: "3000000021", "n@odata.type": "Edm.Int64" });
    // Someone else changes the row after the page showed it.
    await items.updateEntity({ partitionKey: "p", rowKey: "r03", label: "changed-elsewhere" }, "Merge");
    await editor.fill(JSON.stringify({ ...shown, label: "from-the-page" }));
    await page.getByRole("button", { name: "Save" }).click();
    const error = page.locator("#editor-error");
    await expect.poll(() => error.isVisible()).toBe(true);
    expect(await error.textContent()).toMatch(/^412 UpdateConditionNotSatisfied/);
    expect((await items.getEntity("p", "r03")).label).toBe("changed-elsewhere");
    // Reloaded, the row has its new ETag and the edit goes through with its types.
    await page.getByRole("button", { name: "Cancel" }).click();
    await page.getByRole("button", { name: "Run" }).click();
    await expect.poll(() => rows().first().textContent()).toContain("changed-elsewhere");
    await rows().first().getByRole("button", { name: "Edit" }).click();
    const fresh = JSON.parse(await editor.inputValue());
    await editor.fill(JSON.stringify({ ...fresh, n: "-9007199254740993", label: "from-the-page" }));
    await page.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => rows().first().textContent()).toContain("from-the-page");
    const saved = await items.getEntity("p", "r03", { disableTypeConversion: true });
    expect(saved.n).toEqual({ value: "-9007199254740993", type: "Int64" });
    expect(saved.when).toEqual({ value: "2026-01-04T00:00:00.0000000Z", type: "DateTime" });
  });

  test("edits one typed value in place (merge on the ETag); a stale one shows 412", async () => {
    provoked = [412];
    await openItems();
    await page.getByRole("textbox", { name: "Filter" }).fill("RowKey eq 'r05'");
    await page.getByRole("button", { name: "Run" }).click();
    await expect.poll(() => rows().count()).toBe(1);
    const nCell = () => rows().first().locator("td").nth(3);
    await nCell().dblclick();
    expect(await page.getByRole("combobox", { name: "Type of n" }).inputValue()).toBe("Int64");
    await page.getByRole("textbox", { name: "Value of n" }).fill("-42");
    await page.getByRole("button", { name: "Save value" }).click();
    await expect.poll(() => nCell().textContent()).toBe("-42");
    const saved = await items.getEntity("p", "r05", { disableTypeConversion: true });
    expect(saved.n).toEqual({ value: "-42", type: "Int64" });
    expect(saved.label).toEqual({ value: "item-5", type: "String" });
    // Changed elsewhere after the page showed it: the in-place edit is refused, nothing is written.
    await items.updateEntity({ partitionKey: "p", rowKey: "r05", label: "changed-elsewhere" }, "Merge");
    await nCell().dblclick();
    await page.getByRole("textbox", { name: "Value of n" }).fill("7");
    await page.getByRole("button", { name: "Save value" }).click();
    await expect
      .poll(() => page.locator("#query-error").textContent())
      .toMatch(/^412 UpdateConditionNotSatisfied/);
    expect((await items.getEntity("p", "r05", { disableTypeConversion: true })).n).toEqual({
      value: "-42",
      type: "Int64",
    });
    // A value that is not of its type is refused on the page, before any request.
    await page.getByRole("button", { name: "Cancel edit" }).click();
    await nCell().dblclick();
    await page.getByRole("textbox", { name: "Value of n" }).fill("4.5");
    await page.getByRole("button", { name: "Save value" }).click();
    await expect.poll(() => page.locator("#query-error").textContent()).toBe("An Int64 is a whole number");
  });

  test("inserts from typed JSON and deletes with a confirmation; the --file store keeps both", async () => {
    await openItems();
    await page.getByRole("button", { name: "Insert entity" }).click();
    await page.getByRole("textbox", { name: "Entity JSON" }).fill(
      JSON.stringify({
        PartitionKey: "q",
        RowKey: "new",
        big: "12345678901234567",
        "big@odata.type": "Edm.Int64",
        id: "6f1c0b8e-3a4d-4e5f-8a9b-0c1d2e3f4a5b",
        "id@odata.type": "Edm.Guid",
        note: "<b>not bold</b>",
        count: 3,
        "count@odata.type": "Edm.Int32",
        ratio: 2,
        "ratio@odata.type": "Edm.Double",
        ok: true,
        "ok@odata.type": "Edm.Boolean",
        blob: "AQID",
        "blob@odata.type": "Edm.Binary",
        at: "2026-02-03T04:05:06.0000007Z",
        "at@odata.type": "Edm.DateTime",
      }),
    );
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByRole("textbox", { name: "Filter" }).fill("PartitionKey eq 'q'");
    await page.getByRole("button", { name: "Run" }).click();
    await expect.poll(() => rows().count()).toBe(1);
    // A value is text, never markup.
    expect(await page.locator("#grid tbody b").count()).toBe(0);
    expect(await rows().first().textContent()).toContain("<b>not bold</b>");
    const headers = await page.locator("#grid thead th").allTextContents();
    for (const header of [
      "big Int64",
      "id Guid",
      "count Int32",
      "ratio Double",
      "ok Boolean",
      "blob Binary",
    ]) {
      expect(headers).toContain(header);
    }
    const inserted = await items.getEntity("q", "new", { disableTypeConversion: true });
    expect(inserted.big).toEqual({ value: "12345678901234567", type: "Int64" });
    expect(inserted.id).toEqual({ value: "6f1c0b8e-3a4d-4e5f-8a9b-0c1d2e3f4a5b", type: "Guid" });
    // Saved unchanged from the editor, every value keeps its type and value exactly.
    await rows().first().getByRole("button", { name: "Edit" }).click();
    await page.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => page.locator("#editor").isHidden()).toBe(true);
    const resaved = await items.getEntity("q", "new", { disableTypeConversion: true });
    const { etag: _before, timestamp: _t1, ...insertedValues } = inserted;
    const { etag: after, timestamp: _t2, ...resavedValues } = resaved;
    expect(after).not.toBe(inserted.etag);
    expect(resavedValues).toEqual(insertedValues);
    expect(resaved.ratio).toEqual({ value: 2, type: "Double" });
    const reloaded = new MemoryStore({ file });
    expect((await reloaded.getEntity("items", "q", "new"))?.big).toBe(12345678901234567n);

    // A dismissed confirmation deletes nothing; an accepted one deletes the row.
    page.once("dialog", (dialog) => void dialog.dismiss());
    await rows().first().getByRole("button", { name: "Delete", exact: true }).click();
    expect((await items.getEntity("q", "new")).rowKey).toBe("new");
    page.once("dialog", (dialog) => void dialog.accept());
    await rows().first().getByRole("button", { name: "Delete", exact: true }).click();
    await expect.poll(() => rows().count()).toBe(0);
    await expect(items.getEntity("q", "new")).rejects.toMatchObject({ statusCode: 404 });
  });

  test("exports the current query as typed NDJSON", async () => {
    await openItems();
    await page.getByRole("textbox", { name: "Filter" }).fill("PartitionKey eq 'p' and RowKey le 'r04'");
    await page.getByRole("button", { name: "Run" }).click();
    await expect.poll(() => rows().count()).toBe(5);
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Export NDJSON" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe("items.ndjson");
    const path = await download.path();
    const lines = readFileSync(path, "utf8").trimEnd().split("\n");
    expect(lines).toHaveLength(5);
    const first = JSON.parse(lines[0] as string);
    expect(first).toMatchObject({
      PartitionKey: "p",
      RowKey: "r00",
      "Timestamp@odata.type": "Edm.DateTime",
      n: "0",
      "n@odata.type": "Edm.Int64",
      when: "2026-01-01T00:00:00.0000000Z",
      "when@odata.type": "Edm.DateTime",
      label: "item-0",
    });
    expect(first["label@odata.type"]).toBeUndefined();
    expect(Object.keys(first).some((k) => k.startsWith("odata."))).toBe(false);
  });

  test("creates and deletes a table (with a confirmation)", async () => {
    await page.getByRole("textbox", { name: "New table name" }).fill("scratch");
    await page.getByRole("button", { name: "Create table" }).click();
    await expect.poll(() => page.getByRole("button", { name: "scratch", exact: true }).count()).toBe(1);
    await expect.poll(() => page.locator("#table-title").textContent()).toBe("scratch");
    // The list's count request for the new table is answered before the table goes.
    const scratchCount = page.locator("#tables li", { hasText: "scratch" }).locator(".count");
    await expect.poll(() => scratchCount.textContent()).toBe("0");
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Delete table" }).click();
    await expect.poll(() => page.getByRole("button", { name: "scratch", exact: true }).count()).toBe(0);
    const names: string[] = [];
    for await (const table of service.listTables()) names.push(table.name ?? "");
    expect(names).toEqual(["items"]);
  });

  test("the page's calls need its token: without it 401, with another origin 403", async () => {
    provoked = [401, 403];
    const token = (await page.locator('meta[name="tablekit-explorer-token"]').getAttribute("content")) ?? "";
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    const statuses = await page.evaluate(async (token) => {
      const api = "/_explorer/api/Tables";
      const without = await fetch(api);
      const wrong = await fetch(api, { headers: { "x-tablekit-explorer-token": "x" } });
      const right = await fetch(api, { headers: { "x-tablekit-explorer-token": token } });
      return [without.status, wrong.status, right.status];
    }, token);
    expect(statuses).toEqual([401, 403, 200]);
    // Another origin (the same server by another address is another origin) cannot use the token.
    const other = await fetch(`http://localhost:${server.port}/_explorer/api/Tables`, {
      method: "POST",
      headers: {
        "x-tablekit-explorer-token": token,
        Origin: `http://127.0.0.1:${server.port + 1}`,
        "Content-Type": "application/json",
      },
      body: JSON.stringify({ TableName: "stolen" }),
    });
    expect(other.status).toBe(403);
  });
});
