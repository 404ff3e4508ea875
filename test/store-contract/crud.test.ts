import { describe, expect, test } from "vitest";
import {
  ConcurrencyError,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  StoreError,
  TableKitError,
} from "../../src/errors.js";
import {
  contractStore,
  expectStoreError,
  skipAzuriteDeviations,
  storeKinds,
  storeWithTable,
} from "./contract.js";

describe.each(storeKinds)("store contract (crud) on $name", (kind) => {
  skipAzuriteDeviations(kind);

  test("reports sorted results (both stores return keys in order)", () => {
    expect(contractStore(kind).capabilities.sortedResults).toBe(true);
  });

  describe("tables", () => {
    test("createTable and deleteTable are idempotent", async () => {
      const store = contractStore(kind);
      await store.createTable("Things");
      await store.createTable("Things");
      await store.insert("Things", { partitionKey: "p", rowKey: "r" });
      await store.createTable("Things"); // does not wipe the table
      expect(await store.getEntity("Things", "p", "r")).toBeDefined();
      await store.deleteTable("Things");
      await store.deleteTable("Things");
      await expectStoreError(store.getEntity("Things", "p", "r"), 404, "TableNotFound");
    });

    test("table names are case-insensitive", async () => {
      const store = await storeWithTable(kind, "Things");
      await store.insert("THINGS", { partitionKey: "p", rowKey: "r" });
      expect(await store.getEntity("things", "p", "r")).toBeDefined();
      await store.deleteTable("tHiNgS");
      await expectStoreError(store.getEntity("Things", "p", "r"), 404, "TableNotFound");
    });

    test("a recreated table is empty", async () => {
      const store = await storeWithTable(kind, "Things");
      await store.insert("Things", { partitionKey: "p", rowKey: "r" });
      await store.deleteTable("Things");
      await store.createTable("Things");
      expect(await store.getEntity("Things", "p", "r")).toBeUndefined();
    });

    test.each([
      ["ab", "OutOfRangeInput"],
      [`a${"b".repeat(63)}`, "OutOfRangeInput"],
      ["1abc", "InvalidResourceName"],
      ["my_table", "InvalidResourceName"],
      ["my-table", "InvalidResourceName"],
      ["tables", "InvalidResourceName"],
      ["", "InvalidResourceName"],
    ])("rejects the table name %j with 400 %s", async (name, code) => {
      const store = contractStore(kind);
      await expectStoreError(store.createTable(name), 400, code);
    });

    test("accepts names of 3 and 63 characters", async () => {
      const store = contractStore(kind);
      await store.createTable("abc");
      await store.createTable(`a${"1".repeat(62)}`);
    });

    test("every entity operation on a missing table is 404 TableNotFound", async () => {
      const store = contractStore(kind);
      const e = { partitionKey: "p", rowKey: "r" };
      await expectStoreError(store.insert("Nope", e), 404, "TableNotFound");
      await expectStoreError(store.upsert("Nope", e, "replace"), 404, "TableNotFound");
      await expectStoreError(store.update("Nope", e, "merge", "*"), 404, "TableNotFound");
      await expectStoreError(store.delete("Nope", "p", "r", "*"), 404, "TableNotFound");
      await expectStoreError(store.getEntity("Nope", "p", "r"), 404, "TableNotFound");
      await expectStoreError(store.queryPage("Nope", {}), 404, "TableNotFound");
    });
  });

  describe("entity CRUD", () => {
    test("insert then get returns the entity with etag and timestamp", async () => {
      const store = await storeWithTable(kind);
      const before = Date.now();
      const { etag } = await store.insert("Things", { partitionKey: "p", rowKey: "r", name: "Ann", age: 42 });
      const e = await store.getEntity("Things", "p", "r");
      expect(e).toEqual({
        partitionKey: "p",
        rowKey: "r",
        etag,
        timestamp: expect.any(Date),
        name: "Ann",
        age: 42,
      });
      expect(e!.timestamp!.getTime()).toBeGreaterThanOrEqual(before - 1);
    });

    test("getEntity returns undefined when absent", async () => {
      const store = await storeWithTable(kind);
      expect(await store.getEntity("Things", "p", "nothing")).toBeUndefined();
    });

    test("insert of an existing key is EntityAlreadyExistsError (409)", async () => {
      const store = await storeWithTable(kind);
      await store.insert("Things", { partitionKey: "p", rowKey: "r", v: 1 });
      const error = await store
        .insert("Things", { partitionKey: "p", rowKey: "r", v: 2 })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EntityAlreadyExistsError);
      expect(error).toBeInstanceOf(TableKitError);
      expect(error).toMatchObject({
        code: "ENTITY_ALREADY_EXISTS",
        table: "Things",
        partitionKey: "p",
        rowKey: "r",
      });
      // The cause is the store's own record of the service's answer; only its status is common to every store.
      expect((error as Error).cause).toMatchObject({ statusCode: 409 });
      expect((await store.getEntity("Things", "p", "r"))!.v).toBe(1);
    });

    test("upsert replace inserts, then replaces dropping unsent properties", async () => {
      const store = await storeWithTable(kind);
      await store.upsert("Things", { partitionKey: "p", rowKey: "r", a: 1, b: 2 }, "replace");
      await store.upsert("Things", { partitionKey: "p", rowKey: "r", a: 10 }, "replace");
      const e = await store.getEntity("Things", "p", "r");
      expect(e).toMatchObject({ a: 10 });
      expect(e).not.toHaveProperty("b");
    });

    test("upsert merge inserts, then merges keeping unsent properties", async () => {
      const store = await storeWithTable(kind);
      await store.upsert("Things", { partitionKey: "p", rowKey: "r", a: 1, b: 2 }, "merge");
      await store.upsert("Things", { partitionKey: "p", rowKey: "r", a: "ten", c: true }, "merge");
      const e = await store.getEntity("Things", "p", "r");
      expect(e).toMatchObject({ a: "ten", b: 2, c: true });
    });

    test("update replace vs merge", async () => {
      const store = await storeWithTable(kind);
      await store.insert("Things", { partitionKey: "p", rowKey: "r", a: 1, b: 2 });
      await store.update("Things", { partitionKey: "p", rowKey: "r", c: 3 }, "merge", "*");
      expect(await store.getEntity("Things", "p", "r")).toMatchObject({ a: 1, b: 2, c: 3 });
      await store.update("Things", { partitionKey: "p", rowKey: "r", d: 4 }, "replace", "*");
      const e = await store.getEntity("Things", "p", "r");
      expect(e).toMatchObject({ d: 4 });
      for (const gone of ["a", "b", "c"]) expect(e).not.toHaveProperty(gone);
    });

    test("null and undefined properties are ignored (merge keeps the stored value)", async () => {
      const store = await storeWithTable(kind);
      await store.insert("Things", { partitionKey: "p", rowKey: "r", a: 1, b: null, c: undefined });
      expect(Object.keys((await store.getEntity("Things", "p", "r"))!)).not.toContain("b");
      await store.update("Things", { partitionKey: "p", rowKey: "r", a: null }, "merge", "*");
      expect((await store.getEntity("Things", "p", "r"))!.a).toBe(1);
    });

    test("update of a missing entity is EntityNotFoundError (404)", async () => {
      const store = await storeWithTable(kind);
      for (const mode of ["replace", "merge"] as const) {
        const error = await store
          .update("Things", { partitionKey: "p", rowKey: "r" }, mode, "*")
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(EntityNotFoundError);
        expect((error as Error).cause).toMatchObject({ statusCode: 404 });
      }
    });

    test("delete resolves true when it existed, false when not", async () => {
      const store = await storeWithTable(kind);
      await store.insert("Things", { partitionKey: "p", rowKey: "r" });
      expect(await store.delete("Things", "p", "r", "*")).toBe(true);
      expect(await store.delete("Things", "p", "r", "*")).toBe(false);
      expect(await store.getEntity("Things", "p", "r")).toBeUndefined();
    });

    test("delete with a stale ETag is ConcurrencyError and deletes nothing", async () => {
      const store = await storeWithTable(kind);
      const first = await store.insert("Things", { partitionKey: "p", rowKey: "r", v: 1 });
      await store.update("Things", { partitionKey: "p", rowKey: "r", v: 2 }, "replace", "*");
      await expect(store.delete("Things", "p", "r", first.etag)).rejects.toBeInstanceOf(ConcurrencyError);
      expect(await store.getEntity("Things", "p", "r")).toBeDefined();
      const current = (await store.getEntity("Things", "p", "r"))!.etag;
      expect(await store.delete("Things", "p", "r", current)).toBe(true);
    });

    test("delete of a missing entity with an ETag resolves false", async () => {
      const store = await storeWithTable(kind);
      expect(await store.delete("Things", "p", "r", `W/"datetime'2024-01-01T00%3A00%3A00.0000000Z'"`)).toBe(
        false,
      );
    });

    test("an empty If-Match is 400 InvalidInput", async () => {
      const store = await storeWithTable(kind);
      await store.insert("Things", { partitionKey: "p", rowKey: "r" });
      await expectStoreError(
        store.update("Things", { partitionKey: "p", rowKey: "r" }, "merge", ""),
        400,
        "InvalidInput",
      );
      await expectStoreError(store.delete("Things", "p", "r", ""), 400, "InvalidInput");
    });

    test("a strong or malformed If-Match is 400 InvalidInput; a weak one that matches nothing is 412", async () => {
      const store = await storeWithTable(kind);
      await store.insert("Things", { partitionKey: "p", rowKey: "r" });
      for (const etag of ['"wrong"', "wrong", `datetime'2015-01-01T00%3A00%3A00.0000000Z'`, '"']) {
        await expectStoreError(
          store.update("Things", { partitionKey: "p", rowKey: "r" }, "replace", etag),
          400,
          "InvalidInput",
        );
        await expectStoreError(store.delete("Things", "p", "r", etag), 400, "InvalidInput");
      }
      for (const etag of ['W/"wrong"', 'w/"wrong"']) {
        await expect(
          store.update("Things", { partitionKey: "p", rowKey: "r" }, "replace", etag),
        ).rejects.toBeInstanceOf(ConcurrencyError);
      }
      expect(await store.getEntity("Things", "p", "r")).toBeDefined();
    });

    test("an unknown write mode is 400 InvalidInput", async () => {
      const store = await storeWithTable(kind);
      await expectStoreError(
        store.upsert("Things", { partitionKey: "p", rowKey: "r" }, "patch" as "merge"),
        400,
        "InvalidInput",
      );
    });

    test("empty keys are allowed, as on the service", async () => {
      const store = await storeWithTable(kind);
      await store.insert("Things", { partitionKey: "", rowKey: "", v: 1 });
      expect((await store.getEntity("Things", "", ""))!.v).toBe(1);
    });

    test("etag and timestamp on a written entity are ignored (a read entity can be written back)", async () => {
      const store = await storeWithTable(kind);
      await store.insert("Things", { partitionKey: "p", rowKey: "r", v: 1 });
      const read = (await store.getEntity("Things", "p", "r"))!;
      await store.update("Things", { ...read, v: 2 }, "replace", read.etag);
      const again = (await store.getEntity("Things", "p", "r"))!;
      expect(again.v).toBe(2);
      expect(again.etag).not.toBe(read.etag);
      expect(Object.keys(again).sort()).toEqual(["etag", "partitionKey", "rowKey", "timestamp", "v"]);
    });

    test("errors are StoreError only for service failures other than 404/409/412", async () => {
      const store = await storeWithTable(kind);
      const error = await store
        .insert("Things", { partitionKey: "a/b", rowKey: "r" })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect(error).toBeInstanceOf(TableKitError);
    });

    test("calls are atomic: concurrent inserts of one key yield exactly one winner", async () => {
      const store = await storeWithTable(kind);
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, i) => store.insert("Things", { partitionKey: "p", rowKey: "r", i })),
      );
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    });
  });
});
