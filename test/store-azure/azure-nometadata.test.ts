import {
  createDefaultHttpClient,
  createHttpHeaders,
  type HttpClient,
  type PipelineRequest,
} from "@azure/core-rest-pipeline";
import { AzureSASCredential, TableClient, type TableEntity } from "@azure/data-tables";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Column, Entity, etagOf, TableContext, ValidationError } from "../../src/index.js";
import { AzureStore } from "../../src/store/azure/azure-store.js";
import { etagFromTimestamp } from "../../src/store/azure/nometadata-rows.js";
import type { PropertyTypes, StoreContinuation, StoredEntity } from "../../src/store/table-store.js";
import { azuriteConnectionString, createAzuriteStore } from "../support/azurite.js";
import { uniquePrefix, uniqueTableName } from "../support/table-names.js";

/** An HTTP client that records the URL of every request and the size of every response body. */
function recordingHttp(): { http: HttpClient; urls: string[]; bytes: number[] } {
  const inner = createDefaultHttpClient();
  const urls: string[] = [];
  const bytes: number[] = [];
  return {
    urls,
    bytes,
    http: {
      async sendRequest(request: PipelineRequest) {
        urls.push(decodeURIComponent(request.url));
        const response = await inner.sendRequest(request);
        bytes.push(response.bodyAsText?.length ?? 0);
        return response;
      },
    },
  };
}

const usesNometadata = (url: string) => url.includes("odata=nometadata");

const table = uniqueTableName("nometa");
const recorder = recordingHttp();
const store = createAzuriteStore({ httpClient: recorder.http });
const minimal = createAzuriteStore({ metadata: "minimal" });
/** Another client: the raw SDK, writing values with explicit Edm types. */
const other = TableClient.fromConnectionString(azuriteConnectionString(), table, {
  allowInsecureConnection: true,
});

const GUID_UPPER = "C9DA6455-213D-42C9-9A79-3E9149A57833";
const TYPES: PropertyTypes = {
  str: "String",
  empty: "String",
  int32: "Int32",
  int32Max: "Int32",
  int32Min: "Int32",
  int64: "Int64",
  int64Min: "Int64",
  int64Max: "Int64",
  int64Zero: "Int64",
  dbl: "Double",
  dblWhole: "Double",
  dblNaN: "Double",
  dblInf: "Double",
  dblNegInf: "Double",
  dblNegZero: "Double",
  dblTiny: "Double",
  yes: "Boolean",
  no: "Boolean",
  date: "DateTime",
  date7: "DateTime",
  date7Zeros: "DateTime",
  dateMin: "DateTime",
  guid: "Guid",
  guidUpper: "Guid",
  bin: "Binary",
  binEmpty: "Binary",
};

/** One row with every Edm type and its edge values, written by another client. */
const everyType: TableEntity = {
  partitionKey: "p",
  rowKey: "every-type",
  str: "text with 'quotes' and ünïcode",
  empty: "",
  int32: 5,
  int32Max: 2147483647,
  int32Min: -2147483648,
  int64: { type: "Int64", value: "123" },
  int64Min: { type: "Int64", value: "-9223372036854775808" },
  int64Max: { type: "Int64", value: "9223372036854775807" },
  int64Zero: { type: "Int64", value: "0" },
  dbl: { type: "Double", value: 5.25 },
  dblWhole: { type: "Double", value: 5 },
  dblNaN: { type: "Double", value: "NaN" },
  dblInf: { type: "Double", value: "Infinity" },
  dblNegInf: { type: "Double", value: "-Infinity" },
  dblNegZero: { type: "Double", value: "-0" },
  dblTiny: { type: "Double", value: 5e-324 },
  yes: true,
  no: false,
  date: new Date("2024-01-02T03:04:05.678Z"),
  date7: { type: "DateTime", value: "2024-01-02T03:04:05.6789012Z" },
  date7Zeros: { type: "DateTime", value: "2024-01-02T03:04:05.1200000Z" },
  dateMin: { type: "DateTime", value: "1601-01-01T00:00:00.0000000Z" },
  guid: { type: "Guid", value: GUID_UPPER.toLowerCase() },
  guidUpper: { type: "Guid", value: GUID_UPPER },
  bin: { type: "Binary", value: Buffer.from([0, 1, 2, 254, 255]).toString("base64") },
  binEmpty: { type: "Binary", value: "" },
  untyped: "a property outside the model",
};

beforeAll(async () => {
  await store.createTable(table);
  await other.createEntity(everyType);
});
afterAll(() => store.deleteTable(table));

describe("typed reads with odata=nometadata (Azurite)", () => {
  it("read every Edm type exactly as minimal metadata does: query page and point read, with and without $select", async () => {
    recorder.urls.length = 0;
    const filter = "RowKey eq 'every-type'";
    const light = await store.queryPage(table, { filter, types: TYPES });
    const annotated = await minimal.queryPage(table, { filter });
    expect(light.items).toHaveLength(1);
    expect(light.items).toEqual(annotated.items);
    expect(await store.getEntity(table, "p", "every-type", undefined, TYPES)).toEqual(
      await minimal.getEntity(table, "p", "every-type"),
    );
    const select = ["PartitionKey", "RowKey", "int64Min", "date7", "guidUpper", "binEmpty", "dblNaN"];
    const lightSelected = await store.queryPage(table, { filter, select, types: TYPES });
    const annotatedSelected = await minimal.queryPage(table, { filter, select });
    // The light read also asks for Timestamp (its ETag comes from it), yet answers as the port says:
    // the ETag and what was named, nothing else.
    expect(lightSelected.items).toEqual(annotatedSelected.items);
    expect(Object.keys(lightSelected.items[0] as StoredEntity).sort()).toEqual(
      Object.keys(annotatedSelected.items[0] as StoredEntity).sort(),
    );
    const point = (await store.getEntity(table, "p", "every-type", select, TYPES)) as StoredEntity;
    expect(point.etag).toBe(annotated.items[0]?.etag);
    expect(point.int64Min).toBe(-9223372036854775808n);
    expect(recorder.urls).toHaveLength(4);
    expect(recorder.urls.every(usesNometadata)).toBe(true);
  });

  it("is lighter on the wire than minimal metadata", async () => {
    recorder.bytes.length = 0;
    await store.queryPage(table, { filter: "RowKey eq 'every-type'", types: TYPES });
    await store.queryPage(table, { filter: "RowKey eq 'every-type'" });
    const [light, annotated] = recorder.bytes as [number, number];
    expect(light).toBeLessThan(annotated * 0.8);
  });

  it("derives each row's ETag from its Timestamp exactly as the service forms it, trailing zeros included", async () => {
    const etagTable = uniqueTableName("etagrule");
    await store.createTable(etagTable);
    try {
      // Timestamps come from the clock: write until three of them end in a zero digit (about one in ten does).
      const trailingZeros: string[] = [];
      let written = 0;
      while (trailingZeros.length < 3) {
        if (written >= 2000) throw new Error(`no Timestamp ending in 0 among ${written} rows`);
        await store.upsert(
          etagTable,
          { partitionKey: "p", rowKey: String(written++).padStart(5, "0") },
          "replace",
        );
        if (written % 50 !== 0) continue;
        trailingZeros.length = 0;
        const page = await minimal.queryPage(etagTable, {});
        for (const row of page.items) {
          const fraction = /\.(\d+)Z'/.exec(decodeURIComponent(row.etag))?.[1] ?? "";
          if (fraction.endsWith("0")) trailingZeros.push(row.rowKey);
        }
      }
      const light = await store.queryPage(etagTable, { types: {} });
      const annotated = await minimal.queryPage(etagTable, {});
      expect(light.items.map((row) => [row.rowKey, row.etag])).toEqual(
        annotated.items.map((row) => [row.rowKey, row.etag]),
      );
      for (const rowKey of trailingZeros) {
        expect(light.items.find((row) => row.rowKey === rowKey)?.etag).toMatch(/0Z'"$/);
      }
      // And an ETag derived by a light read is a valid condition for a write.
      const first = light.items[0] as StoredEntity;
      await expect(
        store.update(etagTable, { partitionKey: "p", rowKey: first.rowKey }, "merge", first.etag),
      ).resolves.toBeDefined();
    } finally {
      await store.deleteTable(etagTable);
    }
  });

  it("keeps paging with the service's continuation headers", async () => {
    const pagedTable = uniqueTableName("nometapages");
    await store.createTable(pagedTable);
    try {
      for (let i = 0; i < 7; i++)
        await store.upsert(pagedTable, { partitionKey: `p${i % 3}`, rowKey: `r${i}`, n: i }, "replace");
      const seen: string[] = [];
      let continuation: StoreContinuation | undefined;
      let pages = 0;
      do {
        const page = await store.queryPage(pagedTable, {
          top: 2,
          types: { n: "Int32" },
          ...(continuation ? { continuation } : {}),
        });
        seen.push(...page.items.map((row) => `${row.partitionKey}/${row.rowKey}/${row.n}`));
        continuation = page.continuation;
        pages++;
      } while (continuation !== undefined);
      expect(pages).toBe(4);
      expect(seen).toEqual([0, 3, 6, 1, 4, 2, 5].map((i) => `p${i % 3}/r${i}/${i}`));
    } finally {
      await store.deleteTable(pagedTable);
    }
  });

  it("reads a row another client typed differently through minimal metadata, never mis-typed", async () => {
    // A String where the model says Int32, and text that is no Int64, no DateTime, no Guid, no Binary.
    await other.upsertEntity(
      { partitionKey: "p", rowKey: "mistyped", int32: "abc", int64: "12x", date: "soon" },
      "Replace",
    );
    for (const types of [{ int32: "Int32" }, { int64: "Int64" }, { date: "DateTime" }] as PropertyTypes[]) {
      recorder.urls.length = 0;
      const filter = "RowKey eq 'mistyped'";
      expect((await store.queryPage(table, { filter, types })).items).toEqual(
        (await minimal.queryPage(table, { filter })).items,
      );
      expect(await store.getEntity(table, "p", "mistyped", undefined, types)).toEqual(
        await minimal.getEntity(table, "p", "mistyped"),
      );
      // Each read went out light, found the row untypable, and was answered with minimal metadata.
      expect(recorder.urls.map(usesNometadata)).toEqual([true, false, true, false]);
    }
    const row = (await store.getEntity(table, "p", "mistyped", undefined, {
      int32: "Int32",
    })) as StoredEntity;
    expect(row.int32).toBe("abc");
  });

  it("re-reads only the untypable rows of a page, and a page with many of them whole", async () => {
    const mixed = uniqueTableName("nometamixed");
    await store.createTable(mixed);
    const writer = TableClient.fromConnectionString(azuriteConnectionString(), mixed, {
      allowInsecureConnection: true,
    });
    try {
      for (let i = 0; i < 12; i++) {
        // Rows 3 and 7 hold text in the Int32 column; from row 8 on, every row does.
        const n = i === 3 || i === 7 || i >= 8 ? `text ${i}` : i;
        await writer.upsertEntity(
          { partitionKey: "p", rowKey: `r${String(i).padStart(2, "0")}`, n },
          "Replace",
        );
      }
      const types: PropertyTypes = { n: "Int32" };
      const filter = "RowKey lt 'r08'";
      recorder.urls.length = 0;
      expect((await store.queryPage(mixed, { filter, types })).items).toEqual(
        (await minimal.queryPage(mixed, { filter })).items,
      );
      // One light page, then one annotated read per untypable row.
      expect(recorder.urls.map(usesNometadata)).toEqual([true, false, false]);
      recorder.urls.length = 0;
      expect((await store.queryPage(mixed, { types })).items).toEqual(
        (await minimal.queryPage(mixed, {})).items,
      );
      expect(recorder.urls.map(usesNometadata)).toEqual([true, false]);
    } finally {
      await store.deleteTable(mixed);
    }
  });

  it("asks for minimal metadata when told to, for untyped reads, and on the Cosmos DB Table API", async () => {
    const optedOut = recordingHttp();
    const plain = createAzuriteStore({ metadata: "minimal", httpClient: optedOut.http });
    await plain.queryPage(table, { filter: "RowKey eq 'every-type'", types: TYPES });
    await plain.getEntity(table, "p", "every-type", undefined, TYPES);
    recorder.urls.length = 0;
    await store.queryPage(table, { filter: "RowKey eq 'every-type'" });
    await store.getEntity(table, "p", "every-type");
    const cosmosUrls: string[] = [];
    const cosmos = new AzureStore(
      "https://account.table.cosmos.azure.com",
      new AzureSASCredential("sv=2019-02-02&sig=x"),
      {
        httpClient: {
          async sendRequest(request: PipelineRequest) {
            cosmosUrls.push(decodeURIComponent(request.url));
            return {
              request,
              status: 200,
              headers: createHttpHeaders({ "content-type": "application/json;odata=minimalmetadata" }),
              bodyAsText: '{"value":[]}',
            };
          },
        },
      },
    );
    await cosmos.queryPage("t", { types: TYPES });
    for (const url of [...optedOut.urls, ...recorder.urls, ...cosmosUrls]) {
      expect(url).not.toContain("odata=nometadata");
    }
    expect(optedOut.urls).toHaveLength(2);
    expect(recorder.urls).toHaveLength(2);
    expect(cosmosUrls).toHaveLength(1);
  });
});

describe("the metadata option", () => {
  it("accepts none and minimal only, before any request", () => {
    const options = { metadata: "full" } as unknown as { metadata: "none" };
    expect(() => createAzuriteStore(options)).toThrow(ValidationError);
    expect(() => createAzuriteStore({ metadata: "none" })).not.toThrow();
  });
});

describe("the ETag rule on Timestamps with shorter fractions", () => {
  it("writes the fraction to 7 digits and URL-encodes the colons", () => {
    expect(etagFromTimestamp("2026-11-25T13:00:00.1234567Z")).toBe(
      `W/"datetime'2026-11-25T13%3A00%3A00.1234567Z'"`,
    );
    expect(etagFromTimestamp("2026-11-25T13:00:00.12Z")).toBe(
      `W/"datetime'2026-11-25T13%3A00%3A00.1200000Z'"`,
    );
    expect(etagFromTimestamp("2026-11-25T13:00:00Z")).toBe(`W/"datetime'2026-11-25T13%3A00%3A00.0000000Z'"`);
    expect(etagFromTimestamp("yesterday")).toBeUndefined();
    expect(etagFromTimestamp(undefined)).toBeUndefined();
  });
});

@Entity({ table: "Readings", partitionKey: "{sensor}", rowKey: "{id}" })
class Reading {
  @Column({ type: "String" }) sensor!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Int32" }) count?: number;
  @Column({ type: "Int64" }) total?: bigint;
  @Column({ type: "Double" }) mean?: number;
  @Column({ type: "DateTime" }) at?: Date;
  @Column({ type: "Guid" }) ref?: string;
  @Column({ type: "Binary" }) raw?: Uint8Array;
  @Column({ type: "Boolean" }) ok?: boolean;
  @Column({ type: "Json" }) tags?: string[];
}

describe("repositories read through nometadata (Azurite)", () => {
  const prefix = uniquePrefix();
  const light = new TableContext({ store: createAzuriteStore(), tablePrefix: prefix });
  const annotated = new TableContext({
    store: createAzuriteStore({ metadata: "minimal" }),
    tablePrefix: prefix,
  });

  it("get, find and scan give the same instances and ETags as minimal metadata", async () => {
    await light.ensureTables(Reading);
    const readings = light.repository(Reading);
    const written = Object.assign(new Reading(), {
      sensor: "s1",
      id: "a",
      count: -3,
      total: -9223372036854775808n,
      mean: 0.1,
      at: new Date("2026-01-01T00:00:00.120Z"),
      ref: GUID_UPPER.toLowerCase(),
      raw: new Uint8Array(0),
      ok: false,
      tags: ["x", "y"],
    });
    await readings.insert(written);
    await readings.insert(Object.assign(new Reading(), { sensor: "s1", id: "b" }));
    const mapped = annotated.repository(Reading);
    const pairs: Array<[Reading | undefined, Reading | undefined]> = [
      [await readings.get({ sensor: "s1", id: "a" }), await mapped.get({ sensor: "s1", id: "a" })],
      ...zip(await readings.find({ sensor: "s1" }).toArray(), await mapped.find({ sensor: "s1" }).toArray()),
      ...zip(await readings.scan().toArray(), await mapped.scan().toArray()),
    ];
    expect(pairs).toHaveLength(5);
    for (const [a, b] of pairs) {
      expect(a).toEqual(b);
      expect(a).toBeInstanceOf(Reading);
      expect(etagOf(a as Reading)).toBe(etagOf(b as Reading));
    }
    // Through every store wrapper of a context (pacing, concurrency slots) the reads stay light.
    const wrapped = recordingHttp();
    const paced = new TableContext({
      store: createAzuriteStore({ httpClient: wrapped.http }),
      tablePrefix: prefix,
      throughput: { perPartition: 1000 },
      maxConcurrentRequests: 4,
    });
    expect(await paced.repository(Reading).get({ sensor: "s1", id: "a" })).toEqual(pairs[0]?.[1]);
    expect(await paced.repository(Reading).find({ sensor: "s1" }).toArray()).toHaveLength(2);
    expect(wrapped.urls).toHaveLength(2);
    expect(wrapped.urls.every(usesNometadata)).toBe(true);
    const [first] = pairs[0] as [Reading, Reading];
    expect(first.total).toBe(-9223372036854775808n);
    // The derived ETag holds as a write condition.
    first.count = 4;
    await readings.update(first);
    expect((await readings.get({ sensor: "s1", id: "a" }))?.count).toBe(4);
  });
});

function zip<A, B>(a: A[], b: B[]): Array<[A | undefined, B | undefined]> {
  expect(a.length).toBe(b.length);
  return a.map((item, i) => [item, b[i]]);
}
