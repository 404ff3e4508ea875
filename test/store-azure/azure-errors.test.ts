import { RestError } from "@azure/data-tables";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/azurite-process.js";
import {
  ConcurrencyError,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  StoreError,
  TableKitError,
  ValidationError,
} from "../../src/errors.js";
import { translateAzureError } from "../../src/store/azure/azure-errors.js";
import { AzureStore } from "../../src/store/azure/azure-store.js";
import { createAzuriteStore } from "../support/azurite.js";
import { startFaultServer } from "../support/fault-server.js";
import { failureOf as failure } from "../support/rejection.js";
import { uniqueTableName } from "../support/table-names.js";

const store = createAzuriteStore();
const table = uniqueTableName("err");
const missingTable = uniqueTableName("none");

beforeAll(() => store.createTable(table));
afterAll(() => store.deleteTable(table));

/** Runs `action` and returns what it threw (failing the test when it does not throw). */

const STALE_ETAG = `W/"datetime'2020-01-01T00%3A00%3A00.0000000Z'"`;

describe("translateAzureError against Azurite", () => {
  it("409 on insert -> EntityAlreadyExistsError with the keys and the RestError as cause", async () => {
    await store.insert(table, { partitionKey: "p", rowKey: "dup" });
    const error = await failure(() => store.insert(table, { partitionKey: "p", rowKey: "dup" }));
    expect(error).toBeInstanceOf(EntityAlreadyExistsError);
    expect(error).toMatchObject({ code: "ENTITY_ALREADY_EXISTS", table, partitionKey: "p", rowKey: "dup" });
    expect((error as Error).cause).toBeInstanceOf(RestError);
  });

  it.each(["replace", "merge"] as const)("404 on update (%s) -> EntityNotFoundError", async (mode) => {
    const error = await failure(() =>
      store.update(table, { partitionKey: "p", rowKey: "nope", a: 1 }, mode, "*"),
    );
    expect(error).toBeInstanceOf(EntityNotFoundError);
    expect(error).toMatchObject({ code: "ENTITY_NOT_FOUND", table, partitionKey: "p", rowKey: "nope" });
  });

  it("412 on update and delete -> ConcurrencyError", async () => {
    await store.insert(table, { partitionKey: "p", rowKey: "stale", a: 1 });
    for (const mode of ["replace", "merge"] as const) {
      const error = await failure(() =>
        store.update(table, { partitionKey: "p", rowKey: "stale" }, mode, STALE_ETAG),
      );
      expect(error).toBeInstanceOf(ConcurrencyError);
      expect(error).toMatchObject({ code: "CONCURRENCY", partitionKey: "p", rowKey: "stale" });
    }
    const error = await failure(() => store.delete(table, "p", "stale", STALE_ETAG));
    expect(error).toBeInstanceOf(ConcurrencyError);
    expect(await store.getEntity(table, "p", "stale")).toBeDefined();
  });

  it("400 PropertyValueTooLarge -> StoreError with status, service code and the service's text", async () => {
    const error = await failure(() =>
      store.upsert(table, { partitionKey: "p", rowKey: "big", s: "x".repeat(32_769) }, "replace"),
    );
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ code: "STORE", statusCode: 400, serviceCode: "PropertyValueTooLarge" });
    const message = (error as Error).message;
    expect(message).toContain("The property value exceeds the maximum allowed size");
    // The raw JSON body and the RequestId/Time trailer are not repeated in the message.
    expect(message).not.toContain("odata.error");
    expect(message).not.toContain("RequestId");
  });

  it("400 EntityTooLarge -> StoreError", async () => {
    const entity: Record<string, string> = { partitionKey: "p", rowKey: "huge" };
    for (let i = 0; i < 40; i++) entity[`p${i}`] = "x".repeat(30_000);
    const error = await failure(() => store.upsert(table, entity as never, "replace"));
    expect(error).toMatchObject({ statusCode: 400, serviceCode: "EntityTooLarge" });
  });

  it("400 InvalidInput for a forbidden key character and a bad filter", async () => {
    expect(await failure(() => store.insert(table, { partitionKey: "p", rowKey: "a#b" }))).toMatchObject({
      statusCode: 400,
      serviceCode: "InvalidInput",
    });
    const error = await failure(() => store.queryPage(table, { filter: "a eq eq" }));
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ statusCode: 400, serviceCode: "InvalidInput" });
  });

  it("404 TableNotFound is a StoreError for every operation, never 'entity absent'", async () => {
    const cases: Array<() => Promise<unknown>> = [
      () => store.getEntity(missingTable, "p", "r"),
      () => store.delete(missingTable, "p", "r", "*"),
      () => store.update(missingTable, { partitionKey: "p", rowKey: "r" }, "merge", "*"),
      () => store.insert(missingTable, { partitionKey: "p", rowKey: "r" }),
      () => store.queryPage(missingTable, {}),
    ];
    for (const run of cases) {
      const error = await failure(run);
      expect(error).toBeInstanceOf(StoreError);
      expect(error).toMatchObject({ statusCode: 404, serviceCode: "TableNotFound" });
    }
  });

  it("500 without a body -> StoreError with status and no service code", async () => {
    await store.insert(table, { partitionKey: "p", rowKey: "i32", n: 5 });
    // Azurite answers an Int32 compared with an Int64 literal with a bare 500.
    const error = await failure(() => store.queryPage(table, { filter: "n eq 5L" }));
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ statusCode: 500, serviceCode: undefined });
  });

  it("an invalid table name -> StoreError 400 (Azurite sends an empty code)", async () => {
    const error = await failure(() => store.createTable("1bad"));
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ statusCode: 400, serviceCode: undefined });
    expect((error as Error).message).toContain("invalid characters");
  });

  it("connection refused -> StoreError ECONNREFUSED without status", async () => {
    const port = await freePort();
    const closed = AzureStore.fromConnectionString(
      `DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;TableEndpoint=http://127.0.0.1:${port}/devstoreaccount1;`,
    );
    const error = await failure(() => closed.getEntity("abc", "p", "r"));
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ statusCode: undefined, serviceCode: "ECONNREFUSED" });
  });

  it("connection reset -> StoreError ECONNRESET without status", async () => {
    const server = await startFaultServer("reset");
    try {
      const resetting = AzureStore.fromConnectionString(server.connectionString);
      const error = await failure(() => resetting.upsert("abc", { partitionKey: "p", rowKey: "r" }, "merge"));
      expect(error).toBeInstanceOf(StoreError);
      expect(error).toMatchObject({ statusCode: undefined, serviceCode: "ECONNRESET" });
    } finally {
      await server.close();
    }
  });
});

describe("translateAzureError on its own", () => {
  it("returns tablekit errors unchanged", () => {
    const original = new ValidationError("x", "bad");
    expect(translateAzureError(original, { operation: "insert", table: "t" })).toBe(original);
  });

  it("maps a non-error value to a StoreError", () => {
    const error = translateAzureError("boom", { operation: "queryPage", table: "t" });
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toBeInstanceOf(TableKitError);
    expect(error.message).toContain("boom");
  });

  it("maps an AbortError to serviceCode Timeout", () => {
    const abort = new Error("The operation was aborted.");
    abort.name = "AbortError";
    const error = translateAzureError(abort, { operation: "getEntity", table: "t", timeoutMs: 50 });
    expect(error).toMatchObject({ serviceCode: "Timeout", statusCode: undefined });
    expect(error.message).toContain("50 ms");
  });
});
