/**
 * Observations about Azurite 3.35 and @azure/data-tables 13.3, kept as assertions so a new version
 * that behaves differently fails here first. Uses the raw SDK on purpose: this is about the service
 * and the SDK, not about tablekit. Summary: AZURITE-NOTES.md.
 */
import { RestError, TableClient, type TableEntity } from "@azure/data-tables";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { azuriteConnectionString } from "../support/azurite.js";
import { uniqueTableName } from "../support/table-names.js";

const table = uniqueTableName("obs");
let client: TableClient;
const bodies: string[] = [];

beforeAll(async () => {
  client = TableClient.fromConnectionString(azuriteConnectionString(), table, {
    allowInsecureConnection: true,
    retryOptions: { maxRetries: 0 },
  });
  client.pipeline.addPolicy({
    name: "recordBodies",
    async sendRequest(request, next) {
      const response = await next(request);
      bodies.push(response.bodyAsText ?? "");
      return response;
    },
  });
  await client.createTable();
});
afterAll(() => client.deleteTable());

/** Status and service code of a failed call, or "ok". */
async function outcome(action: () => Promise<unknown>): Promise<string> {
  try {
    await action();
    return "ok";
  } catch (error) {
    if (!(error instanceof RestError)) throw error;
    const details = error.details as { errorCode?: string } | undefined;
    return `${error.statusCode} ${details?.errorCode ?? error.code ?? ""}`.trim();
  }
}

let counter = 0;
const insert = (entity: Record<string, unknown>) =>
  client.createEntity({ partitionKey: "p", rowKey: `r${++counter}`, ...entity } as TableEntity);

describe("keys", () => {
  it("accepts at most 512 UTF-16 code units per key (1 KiB as UTF-16), else 400 InvalidInput", async () => {
    const row = (rowKey: string) => () => client.createEntity({ partitionKey: "keys", rowKey });
    expect(await outcome(row("k".repeat(512)))).toBe("ok");
    expect(await outcome(row("k".repeat(513)))).toBe("400 InvalidInput");
    // Counted in UTF-16 units, not UTF-8 bytes: 512 'é' (1,024 UTF-8 bytes) pass, 256 '😀' (512 units) pass.
    expect(await outcome(row("é".repeat(512)))).toBe("ok");
    expect(await outcome(row("é".repeat(513)))).toBe("400 InvalidInput");
    expect(await outcome(row("😀".repeat(256)))).toBe("ok");
    expect(await outcome(row(`${"😀".repeat(256)}x`))).toBe("400 InvalidInput");
    const part = (partitionKey: string) => () => client.createEntity({ partitionKey, rowKey: "r" });
    expect(await outcome(part("q".repeat(512)))).toBe("ok");
    expect(await outcome(part("q".repeat(513)))).toBe("400 InvalidInput");
    // Reading an over-long key is a plain 404.
    expect(await outcome(() => client.getEntity("keys", "k".repeat(513)))).toBe("404 ResourceNotFound");
  });

  it.each(["/", "\\", "#", "?", "\u0000", "\u0001", "\u001f", "\u007f", "\u0085", "\u009f"])(
    "rejects the key character %j with 400 InvalidInput",
    async (char) => {
      expect(await outcome(() => client.createEntity({ partitionKey: "bad", rowKey: `a${char}b` }))).toBe(
        "400 InvalidInput",
      );
      expect(await outcome(() => client.createEntity({ partitionKey: `a${char}b`, rowKey: "r" }))).toBe(
        "400 InvalidInput",
      );
    },
  );

  it('accepts an empty RowKey and PartitionKey ("")', async () => {
    await client.createEntity({ partitionKey: "empty", rowKey: "" });
    await client.createEntity({ partitionKey: "", rowKey: "" });
    expect((await client.getEntity("empty", "")).rowKey).toBe("");
    expect((await client.getEntity("", "")).partitionKey).toBe("");
  });
});

describe("values and limits", () => {
  it("limits strings to 32,768 UTF-16 units and binaries to 65,536 bytes: 400 PropertyValueTooLarge", async () => {
    expect(await outcome(() => insert({ s: "x".repeat(32_768) }))).toBe("ok");
    expect(await outcome(() => insert({ s: "x".repeat(32_769) }))).toBe("400 PropertyValueTooLarge");
    expect(await outcome(() => insert({ b: new Uint8Array(65_536) }))).toBe("ok");
    expect(await outcome(() => insert({ b: new Uint8Array(65_537) }))).toBe("400 PropertyValueTooLarge");
  });

  it("corrupts a multi-byte character that straddles a 64 KiB chunk of the request body (Azurite bug)", async () => {
    // The body is decoded chunk by chunk: a split character turns into U+FFFD replacement characters,
    // silently, or (when that makes the string longer) into a PropertyValueTooLarge error. Where the
    // chunk boundary falls depends on the bytes before it, so shift the text by 0-3 bytes.
    const text = "😀".repeat(16_383);
    const outcomes: string[] = [];
    for (const rowKey of ["e", "ee", "eee", "eeee"]) {
      await client.createEntity({ partitionKey: "utf8", rowKey, text });
      const stored = (await client.getEntity("utf8", rowKey)).text as string;
      outcomes.push(stored === text ? "intact" : stored.includes("\uFFFD") ? "corrupted" : "other");
    }
    expect(outcomes).toContain("corrupted");
    expect(outcomes).not.toContain("other");
    // Below 64 KiB of body nothing happens.
    const small = "😀".repeat(10_000);
    await client.createEntity({ partitionKey: "utf8", rowKey: "small", small });
    expect((await client.getEntity("utf8", "small")).small).toBe(small);
  });

  it("enforces the 1 MiB entity size on upsert/update (400 EntityTooLarge) but not on insert", async () => {
    const big: Record<string, unknown> = {};
    for (let i = 0; i < 40; i++) big[`p${i}`] = "x".repeat(30_000);
    expect(await outcome(() => insert(big))).toBe("ok");
    const entity = { partitionKey: "p", rowKey: "huge", ...big } as TableEntity;
    expect(await outcome(() => client.upsertEntity(entity, "Replace"))).toBe("400 EntityTooLarge");
    expect(await outcome(() => client.upsertEntity(entity, "Merge"))).toBe("400 EntityTooLarge");
    // Inside a transaction an oversized insert is accepted too.
    expect(
      await outcome(() =>
        client.submitTransaction([["create", { partitionKey: "p", rowKey: "huge2", ...big }]]),
      ),
    ).toBe("ok");
  });

  it("does not enforce property names, property count, or Int32/Int64 ranges", async () => {
    expect(await outcome(() => insert({ "bad name": 1, "1abc": 2, "ä-ö": 3 }))).toBe("ok");
    const many: Record<string, number> = {};
    for (let i = 0; i < 300; i++) many[`p${i}`] = i;
    expect(await outcome(() => insert(many))).toBe("ok");
    expect(await outcome(() => insert({ n: { type: "Int32", value: 3_000_000_000 } }))).toBe("ok");
    expect(await outcome(() => insert({ n: { type: "Int64", value: "99999999999999999999" } }))).toBe("ok");
    expect(await outcome(() => insert({ d: { type: "DateTime", value: "0001-01-01T00:00:00Z" } }))).toBe(
      "ok",
    );
  });

  it("rejects a Double serialized as null (NaN through JSON) with 400 InvalidInput", async () => {
    expect(await outcome(() => insert({ d: { type: "Double", value: Number.NaN } }))).toBe(
      "400 InvalidInput",
    );
    expect(await outcome(() => insert({ d: { type: "Double", value: "NaN" } }))).toBe("ok");
  });

  it("drops null properties on insert and ignores them on merge", async () => {
    await client.createEntity({ partitionKey: "nulls", rowKey: "r", a: 1, b: null } as TableEntity);
    expect(await client.getEntity("nulls", "r")).not.toHaveProperty("b");
    await client.updateEntity({ partitionKey: "nulls", rowKey: "r", a: null } as TableEntity, "Merge");
    expect((await client.getEntity("nulls", "r")).a).toBe(1);
  });
});

describe("wire format of reads", () => {
  beforeAll(async () => {
    await client.createEntity({
      partitionKey: "wire",
      rowKey: "r",
      whole: { type: "Double", value: 5 },
      fraction: { type: "Double", value: 2.5 },
      nan: { type: "Double", value: "NaN" },
      int: 5,
      long: 5n,
    });
  });

  it("sends doubles without @odata.type (whole ones as 5.0); only NaN/Infinity are annotated", async () => {
    bodies.length = 0;
    await client.getEntity("wire", "r");
    const body = bodies.at(-1) ?? "";
    expect(body).toContain('"whole":5.0');
    expect(body).toContain('"fraction":2.5');
    expect(body).toContain('"int":5,');
    expect(body).not.toContain("whole@odata.type");
    expect(body).not.toContain("fraction@odata.type");
    expect(body).toContain('"nan@odata.type":"Edm.Double"');
    expect(body).toContain('"long@odata.type":"Edm.Int64"');
    // Timestamp is not annotated either, so the SDK returns it as a string.
    expect(body).not.toContain("Timestamp@odata.type");
  });

  it("makes the SDK guess Int32 for a whole Double under disableTypeConversion", async () => {
    const raw = await client.getEntity("wire", "r", { disableTypeConversion: true });
    expect(raw.whole).toEqual({ type: "Int32", value: "5" });
    expect(raw.fraction).toEqual({ type: "Double", value: "2.5" });
    const converted = await client.getEntity("wire", "r");
    expect(typeof converted.timestamp).toBe("string");
    // A point read also carries the response's metadata URL as if it were a property.
    expect(converted).toHaveProperty("odata.metadata");
    expect(converted.nan).toBe("NaN");
  });

  it("omits a $select-ed property the entity lacks (Azure returns it as null), and $select= returns all", async () => {
    const selected = await client.getEntity("wire", "r", { queryOptions: { select: ["int", "missing"] } });
    expect(selected).toHaveProperty("int", 5);
    expect(selected).not.toHaveProperty("missing");
    expect(selected).not.toHaveProperty("timestamp");
    const page = await client
      .listEntities({ queryOptions: { filter: "PartitionKey eq 'wire'", select: [] } })
      .byPage()
      .next();
    expect(page.value?.[0]).toHaveProperty("fraction", 2.5);
  });

  it("answers a type-mismatched comparison (Int32 eq 5L) with a bare 500", async () => {
    const query = () =>
      client
        .listEntities({ queryOptions: { filter: "int eq 5L" } })
        .byPage()
        .next();
    expect(await outcome(query)).toBe("500");
  });

  it("encodes continuation keys as base64 of the UTF-8 key", async () => {
    await client.createEntity({ partitionKey: "cont", rowKey: "a" });
    await client.createEntity({ partitionKey: "cont", rowKey: "é" });
    const page = await client
      .listEntities({ queryOptions: { filter: "PartitionKey eq 'cont'" } })
      .byPage({ maxPageSize: 1 })
      .next();
    const token = JSON.parse(Buffer.from(page.value?.continuationToken ?? "", "base64").toString("utf8"));
    expect(token).toEqual({
      nextPartitionKey: Buffer.from("cont").toString("base64"),
      nextRowKey: Buffer.from("é").toString("base64"),
    });
  });
});

describe("failed transactions", () => {
  it("surface as RestError: sub-response status, code = service code, message 'N:…', no details", async () => {
    await client.createEntity({ partitionKey: "tx", rowKey: "taken" });
    let error: unknown;
    try {
      await client.submitTransaction([
        ["create", { partitionKey: "tx", rowKey: "a" }],
        ["create", { partitionKey: "tx", rowKey: "taken" }],
        ["create", { partitionKey: "tx", rowKey: "b" }],
      ]);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(RestError);
    const rest = error as RestError;
    expect(rest.statusCode).toBe(409);
    expect(rest.code).toBe("EntityAlreadyExists");
    expect(rest.message).toMatch(/^1:The specified entity already exists\.\nRequestId:.*\nTime:/);
    expect(rest.details).toBeUndefined();
    // The HTTP response itself was 202 Accepted: the failure is inside the multipart body.
    expect(rest.response?.status).toBe(202);
  });

  it("reports batch-level rule violations against operation 0", async () => {
    const many = Array.from(
      { length: 101 },
      (_, i) => ["create", { partitionKey: "tx2", rowKey: `r${i}` }] as const,
    );
    let error: RestError | undefined;
    try {
      await client.submitTransaction(many.map((a) => [...a]) as never);
    } catch (caught) {
      error = caught as RestError;
    }
    expect(error?.statusCode).toBe(400);
    expect(error?.code).toBe("InvalidInput");
    expect(error?.message).toMatch(
      /^0:The batch request operation exceeds the maximum 100 changes per change set/,
    );
  });

  it("sends every delete with If-Match: * (TableClient.submitTransaction drops a delete's etag)", async () => {
    const { etag } = await client.createEntity({ partitionKey: "tx3", rowKey: "d" });
    await client.updateEntity({ partitionKey: "tx3", rowKey: "d", v: 2 }, "Merge");
    // The stale etag is ignored: the delete succeeds although the entity changed after `etag`.
    await client.submitTransaction([
      ["delete", { partitionKey: "tx3", rowKey: "d" }, { etag } as never] as never,
    ]);
    expect(await outcome(() => client.getEntity("tx3", "d"))).toBe("404 ResourceNotFound");
  });
});
