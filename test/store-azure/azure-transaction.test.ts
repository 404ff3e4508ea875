import { RestError } from "@azure/data-tables";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TransactionError, ValidationError } from "../../src/errors.js";
import type { TransactionAction } from "../../src/store/table-store.js";
import { createAzuriteStore } from "../support/azurite.js";
import { failureOf as failure } from "../support/rejection.js";
import { uniqueTableName } from "../support/table-names.js";

const store = createAzuriteStore();
const table = uniqueTableName("tx");

beforeAll(() => store.createTable(table));
afterAll(() => store.deleteTable(table));

async function rowKeys(partitionKey: string): Promise<string[]> {
  const page = await store.queryPage(table, { filter: `PartitionKey eq '${partitionKey}'` });
  return page.items.map((e) => e.rowKey);
}

const STALE_ETAG = `W/"datetime'2020-01-01T00%3A00%3A00.0000000Z'"`;

describe("AzureStore.submitTransaction (Azurite)", () => {
  it("runs every action kind and returns one result per action, in order", async () => {
    const pk = "mixed";
    const u = await store.insert(table, { partitionKey: pk, rowKey: "u", v: 1 });
    const m = await store.insert(table, { partitionKey: pk, rowKey: "m", v: 1, keep: true });
    const d = await store.insert(table, { partitionKey: pk, rowKey: "d" });
    await store.insert(table, { partitionKey: pk, rowKey: "d2" });
    const actions: TransactionAction[] = [
      { kind: "insert", entity: { partitionKey: pk, rowKey: "i", v: 1 } },
      { kind: "update", entity: { partitionKey: pk, rowKey: "u", v: 2 }, mode: "replace", ifMatch: u.etag },
      { kind: "delete", partitionKey: pk, rowKey: "d", ifMatch: d.etag },
      { kind: "upsert", entity: { partitionKey: pk, rowKey: "r", v: 1 }, mode: "replace" },
      { kind: "update", entity: { partitionKey: pk, rowKey: "m", v: 2 }, mode: "merge", ifMatch: m.etag },
      { kind: "upsert", entity: { partitionKey: pk, rowKey: "g", v: 1 }, mode: "merge" },
      { kind: "delete", partitionKey: pk, rowKey: "d2", ifMatch: "*" },
    ];
    const results = await store.submitTransaction(table, pk, actions);
    expect(results).toHaveLength(actions.length);
    // Deletes have no ETag; every other result is the entity's new ETag.
    expect(results.map((r) => r.etag === "")).toEqual([false, false, true, false, false, false, true]);
    for (const [index, rowKey] of [
      [0, "i"],
      [1, "u"],
      [3, "r"],
      [4, "m"],
      [5, "g"],
    ] as const) {
      expect((await store.getEntity(table, pk, rowKey))?.etag).toBe(results[index]?.etag);
    }
    expect(await rowKeys(pk)).toEqual(["g", "i", "m", "r", "u"]);
    expect(await store.getEntity(table, pk, "m")).toMatchObject({ v: 2, keep: true });
  });

  it("reports the failing operation of a 3-operation batch (op 1 fails -> index 1) and writes nothing", async () => {
    const pk = "index";
    await store.insert(table, { partitionKey: pk, rowKey: "taken" });
    const error = await failure(() =>
      store.submitTransaction(table, pk, [
        { kind: "insert", entity: { partitionKey: pk, rowKey: "a" } },
        { kind: "insert", entity: { partitionKey: pk, rowKey: "taken" } },
        { kind: "insert", entity: { partitionKey: pk, rowKey: "b" } },
      ]),
    );
    expect(error).toBeInstanceOf(TransactionError);
    expect(error).toMatchObject({
      code: "TRANSACTION",
      index: 1,
      table,
      partitionKey: pk,
      rowKey: "taken",
      statusCode: 409,
      serviceCode: "EntityAlreadyExists",
    });
    expect((error as Error).message).toContain("The specified entity already exists");
    expect((error as Error).message).not.toMatch(/\d+:The specified/);
    expect((error as Error).cause).toBeInstanceOf(RestError);
    expect(await rowKeys(pk)).toEqual(["taken"]);
  });

  it.each([0, 1, 2])("finds the failing operation at index %i", async (failing) => {
    const pk = `at${failing}`;
    await store.insert(table, { partitionKey: pk, rowKey: "x" });
    const actions: TransactionAction[] = [0, 1, 2].map((i) =>
      i === failing
        ? { kind: "update", entity: { partitionKey: pk, rowKey: "missing" }, mode: "merge", ifMatch: "*" }
        : { kind: "insert", entity: { partitionKey: pk, rowKey: `n${i}` } },
    );
    const error = await failure(() => store.submitTransaction(table, pk, actions));
    expect(error).toMatchObject({
      index: failing,
      rowKey: "missing",
      statusCode: 404,
      serviceCode: "ResourceNotFound",
    });
  });

  it("sends a delete's ETag (the SDK alone would delete unconditionally)", async () => {
    const pk = "deletes";
    const current = await store.insert(table, { partitionKey: pk, rowKey: "d", v: 1 });
    const stale = await failure(() =>
      store.submitTransaction(table, pk, [
        { kind: "insert", entity: { partitionKey: pk, rowKey: "other" } },
        { kind: "delete", partitionKey: pk, rowKey: "d", ifMatch: STALE_ETAG },
      ]),
    );
    expect(stale).toBeInstanceOf(TransactionError);
    expect(stale).toMatchObject({
      index: 1,
      rowKey: "d",
      statusCode: 412,
      serviceCode: "UpdateConditionNotSatisfied",
    });
    expect(await rowKeys(pk)).toEqual(["d"]);

    const results = await store.submitTransaction(table, pk, [
      { kind: "delete", partitionKey: pk, rowKey: "d", ifMatch: current.etag },
      { kind: "insert", entity: { partitionKey: pk, rowKey: "other" } },
    ]);
    expect(results).toHaveLength(2);
    expect(await rowKeys(pk)).toEqual(["other"]);
  });

  it("rejects a stale update ETag with TransactionError 412", async () => {
    const pk = "stale";
    await store.insert(table, { partitionKey: pk, rowKey: "u", v: 1 });
    const error = await failure(() =>
      store.submitTransaction(table, pk, [
        {
          kind: "update",
          entity: { partitionKey: pk, rowKey: "u", v: 2 },
          mode: "replace",
          ifMatch: STALE_ETAG,
        },
      ]),
    );
    expect(error).toMatchObject({ index: 0, statusCode: 412, serviceCode: "UpdateConditionNotSatisfied" });
  });

  it("maps service-side batch rules: duplicate entity, more than 100 operations", async () => {
    const pk = "rules";
    const duplicate = await failure(() =>
      store.submitTransaction(table, pk, [
        { kind: "insert", entity: { partitionKey: pk, rowKey: "a" } },
        { kind: "upsert", entity: { partitionKey: pk, rowKey: "a" }, mode: "merge" },
      ]),
    );
    expect(duplicate).toMatchObject({ index: 1, statusCode: 400, serviceCode: "InvalidDuplicateRow" });

    const many: TransactionAction[] = Array.from({ length: 101 }, (_, i) => ({
      kind: "insert",
      entity: { partitionKey: pk, rowKey: `r${i}` },
    }));
    const tooMany = await failure(() => store.submitTransaction(table, pk, many));
    expect(tooMany).toBeInstanceOf(TransactionError);
    expect(tooMany).toMatchObject({ index: 0, statusCode: 400, serviceCode: "InvalidInput" });
    expect(await rowKeys(pk)).toEqual([]);
  });

  it("maps a whole-request rejection without an index (413 over 4 MiB) to TransactionError index 0", async () => {
    const pk = "large";
    const actions: TransactionAction[] = Array.from({ length: 100 }, (_, i) => ({
      kind: "insert",
      entity: { partitionKey: pk, rowKey: `r${i}`, s: "x".repeat(30_000), t: "y".repeat(20_000) },
    }));
    const error = await failure(() => store.submitTransaction(table, pk, actions));
    expect(error).toBeInstanceOf(TransactionError);
    expect(error).toMatchObject({
      index: 0,
      rowKey: undefined,
      statusCode: 413,
      serviceCode: "RequestBodyTooLarge",
    });
  });

  it("reports a missing table as TransactionError 404 TableNotFound", async () => {
    const error = await failure(() =>
      store.submitTransaction(uniqueTableName("none"), "p", [
        { kind: "insert", entity: { partitionKey: "p", rowKey: "r" } },
      ]),
    );
    expect(error).toMatchObject({ index: 0, statusCode: 404, serviceCode: "TableNotFound" });
  });

  it("rejects empty and cross-partition transactions before any request, as MemoryStore does", async () => {
    expect(await failure(() => store.submitTransaction(table, "p", []))).toMatchObject({
      index: 0,
      statusCode: 400,
      serviceCode: "InvalidInput",
    });
    const crossing = await failure(() =>
      store.submitTransaction(table, "p", [
        { kind: "insert", entity: { partitionKey: "p", rowKey: "a" } },
        { kind: "delete", partitionKey: "q", rowKey: "b", ifMatch: "*" },
      ]),
    );
    expect(crossing).toBeInstanceOf(TransactionError);
    expect(crossing).toMatchObject({
      index: 1,
      rowKey: "b",
      statusCode: 400,
      serviceCode: "CommandsInBatchActOnDifferentPartitions",
    });
    expect(await rowKeys("p")).toEqual([]);
  });

  it("refuses an ETag with a line break instead of injecting it into the batch body", async () => {
    const error = await failure(() =>
      store.submitTransaction(table, "inject", [
        { kind: "delete", partitionKey: "inject", rowKey: "a", ifMatch: 'W/"x"\r\nIf-Match: *' },
      ]),
    );
    expect(error).toBeInstanceOf(ValidationError);
  });
});
