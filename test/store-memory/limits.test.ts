/**
 * The service's entity limits, on MemoryStore only: Azurite 3.35 enforces few of them (property names,
 * count and value ranges are not checked; keys and sizes answer with other codes: see
 * test/store-azure/AZURITE-NOTES.md), so MemoryStore is the reference that follows Azure's documented rules.
 */

import { describe, expect, test } from "vitest";
import { batchBodyBytes } from "../../src/store/batch-body-size.js";
import type { WireEntity, WireValue } from "../../src/store/table-store.js";
import { AZURE_TABLE_LIMITS } from "../../src/util/store-limits.js";
import { expectStoreError, storeWithTable } from "./helpers.js";

/**
 * Properties that bring an entity with PartitionKey "p", RowKey "r" and one more property of
 * `extraBytes` (8 + name + value, by the service's formula) to exactly 1 MiB.
 */
function fillerTo1MiB(extraBytes: number): Record<string, string> {
  let remaining = 1024 * 1024 - (4 + 2 * 2) - extraBytes;
  const props: Record<string, string> = {};
  for (let i = 0; remaining > 0; i++) {
    const name = `s${String(i).padStart(2, "0")}`; // 3 characters
    const overhead = 8 + name.length * 2 + 4;
    const chars = Math.min(32_000, (remaining - overhead) / 2);
    props[name] = "x".repeat(chars);
    remaining -= overhead + chars * 2;
  }
  expect(remaining).toBe(0);
  return props;
}

describe("entity size (the service's formula)", () => {
  // "n" as Int32 costs 8 + 2 + 4 = 14 bytes; as Double or Int64 18 bytes; as Boolean 11.
  const filler = fillerTo1MiB(14);
  const entity = (n: WireValue): WireEntity => ({ partitionKey: "p", rowKey: "r", ...filler, n });

  test("an entity of exactly 1 MiB is accepted (n inferred as Int32)", async () => {
    const store = await storeWithTable();
    await store.insert("Things", entity(5));
    await store.upsert("Things", entity(-2_147_483_648), "replace");
    await store.upsert("Things", entity(true), "replace");
  });

  test.each<[string, WireValue]>([
    ["a fraction (Double)", 5.5],
    ["a whole number beyond Int32 (Double)", 2 ** 31],
    ["an annotated Double", { type: "Double", value: 5 }],
    ["a bigint (Int64)", 5n],
    ["a Date (DateTime)", new Date(0)],
  ])("one byte class more is 400 EntityTooLarge: %s", async (_label, value) => {
    const store = await storeWithTable();
    await expectStoreError(store.insert("Things", entity(value)), 400, "EntityTooLarge");
  });

  test("a merge is checked on the merged result", async () => {
    const store = await storeWithTable();
    await store.insert("Things", { partitionKey: "p", rowKey: "r", ...filler });
    await store.update("Things", { partitionKey: "p", rowKey: "r", n: 1 }, "merge", "*");
    await expectStoreError(
      store.update("Things", { partitionKey: "p", rowKey: "r", n: 1.5 }, "merge", "*"),
      400,
      "EntityTooLarge",
    );
    await expectStoreError(
      store.upsert("Things", { partitionKey: "p", rowKey: "r", n: 1n }, "merge"),
      400,
      "EntityTooLarge",
    );
    expect((await store.getEntity("Things", "p", "r"))!.n).toBe(1);
  });
});

describe("property count", () => {
  const withProps = (count: number, prefix = "p") =>
    Object.fromEntries(Array.from({ length: count }, (_, i) => [`${prefix}${i}`, i]));

  test("252 user properties are accepted, 253 are 400 TooManyProperties", async () => {
    const store = await storeWithTable();
    await store.insert("Things", { partitionKey: "p", rowKey: "a", ...withProps(252) });
    await expectStoreError(
      store.insert("Things", { partitionKey: "p", rowKey: "b", ...withProps(253) }),
      400,
      "TooManyProperties",
    );
  });

  test("a merge is counted on the merged result", async () => {
    const store = await storeWithTable();
    await store.insert("Things", { partitionKey: "p", rowKey: "r", ...withProps(200, "a") });
    await store.update("Things", { partitionKey: "p", rowKey: "r", ...withProps(52, "b") }, "merge", "*");
    await expectStoreError(
      store.update("Things", { partitionKey: "p", rowKey: "r", extra: 1 }, "merge", "*"),
      400,
      "TooManyProperties",
    );
    // Replacing existing names does not add properties.
    await store.update("Things", { partitionKey: "p", rowKey: "r", a0: "changed" }, "merge", "*");
  });
});

describe("property names", () => {
  test.each(["1abc", "a-b", "a b", "é", "odata.type", "PartitionKey", "RowKey", "a@odata.type"])(
    "%j is 400 PropertyNameInvalid",
    async (name) => {
      const store = await storeWithTable();
      await expectStoreError(
        store.insert("Things", { partitionKey: "p", rowKey: "r", [name]: 1 }),
        400,
        "PropertyNameInvalid",
      );
    },
  );

  test("255 characters are accepted, 256 are 400 PropertyNameTooLong", async () => {
    const store = await storeWithTable();
    await store.insert("Things", { partitionKey: "p", rowKey: "a", [`a${"b".repeat(254)}`]: 1 });
    await expectStoreError(
      store.insert("Things", { partitionKey: "p", rowKey: "b", [`a${"b".repeat(255)}`]: 1 }),
      400,
      "PropertyNameTooLong",
    );
  });

  test("underscores and digits are fine; names are case-sensitive", async () => {
    const store = await storeWithTable();
    await store.insert("Things", { partitionKey: "p", rowKey: "r", _x1: 1, name: "a", Name: "b" });
    expect(await store.getEntity("Things", "p", "r")).toMatchObject({ _x1: 1, name: "a", Name: "b" });
  });
});

describe("property values", () => {
  test("strings: 32,768 UTF-16 units (64 KiB) accepted, 32,769 are 400 PropertyValueTooLarge", async () => {
    const store = await storeWithTable();
    await store.insert("Things", { partitionKey: "p", rowKey: "a", s: "x".repeat(32_768) });
    await expectStoreError(
      store.insert("Things", { partitionKey: "p", rowKey: "b", s: "x".repeat(32_769) }),
      400,
      "PropertyValueTooLarge",
    );
    // UTF-16 units, not code points: 16,385 astral characters are 32,770 units.
    await expectStoreError(
      store.insert("Things", { partitionKey: "p", rowKey: "c", s: "😀".repeat(16_385) }),
      400,
      "PropertyValueTooLarge",
    );
  });

  test("binary: 64 KiB accepted, one byte more is 400 PropertyValueTooLarge", async () => {
    const store = await storeWithTable();
    await store.insert("Things", { partitionKey: "p", rowKey: "a", b: new Uint8Array(65_536) });
    await expectStoreError(
      store.insert("Things", { partitionKey: "p", rowKey: "b", b: new Uint8Array(65_537) }),
      400,
      "PropertyValueTooLarge",
    );
  });

  test.each<[string, WireValue, string]>([
    ["Int32 above range", { type: "Int32", value: 2_147_483_648 }, "InvalidInput"],
    ["Int32 fraction", { type: "Int32", value: 1.5 }, "InvalidInput"],
    ["Int64 above range (bigint)", 2n ** 63n, "InvalidInput"],
    ["Int64 below range (string)", { type: "Int64", value: "-9223372036854775809" }, "InvalidInput"],
    ["Int64 not a number", { type: "Int64", value: "12x" }, "InvalidInput"],
    ["DateTime before 1601", new Date("1600-12-31T23:59:59.999Z"), "OutOfRangeInput"],
    ["DateTime typed before 1601", { type: "DateTime", value: "0001-01-01T00:00:00Z" }, "OutOfRangeInput"],
    ["DateTime after 9999", new Date("+010000-01-01T00:00:00Z"), "OutOfRangeInput"],
    ["Invalid Date", new Date(Number.NaN), "InvalidInput"],
    ["DateTime malformed", { type: "DateTime", value: "yesterday" }, "InvalidInput"],
    ["Guid malformed", { type: "Guid", value: "not-a-guid" }, "InvalidInput"],
    // Azure refuses a Double past its range rather than storing Infinity (Azurite issue #2387).
    ["Double past its range", { type: "Double", value: "13e7705" }, "InvalidInput"],
    ["Binary not base64", { type: "Binary", value: "***" }, "InvalidInput"],
    ["unknown type", { type: "Decimal" as "Double", value: "1" }, "InvalidInput"],
    ["an object", { nested: true } as unknown as WireValue, "InvalidInput"],
  ])("%s is 400 %s", async (_label, value, code) => {
    const store = await storeWithTable();
    await expectStoreError(store.insert("Things", { partitionKey: "p", rowKey: "r", v: value }), 400, code);
  });

  test("range edges are accepted", async () => {
    const store = await storeWithTable();
    await store.insert("Things", {
      partitionKey: "p",
      rowKey: "r",
      i32: { type: "Int32", value: -2_147_483_648 },
      i64: { type: "Int64", value: "9223372036854775807" },
      d1: new Date("1601-01-01T00:00:00Z"),
      d2: new Date("9999-12-31T23:59:59.999Z"),
      d3: { type: "DateTime", value: "9999-12-31T23:59:59.9999999Z" },
    });
  });
});

describe("keys", () => {
  test.each(["a/b", "a\\b", "a#b", "a?b", "a\u0000b", "a\u001fb", "a\u007fb", "a\u009fb"])(
    "%j is 400 OutOfRangeInput in PartitionKey and RowKey, for writes and reads",
    async (key) => {
      const store = await storeWithTable();
      await expectStoreError(
        store.insert("Things", { partitionKey: key, rowKey: "r" }),
        400,
        "OutOfRangeInput",
      );
      await expectStoreError(
        store.insert("Things", { partitionKey: "p", rowKey: key }),
        400,
        "OutOfRangeInput",
      );
      await expectStoreError(store.getEntity("Things", key, "r"), 400, "OutOfRangeInput");
      await expectStoreError(store.delete("Things", "p", key, "*"), 400, "OutOfRangeInput");
    },
  );

  test("keys up to 1 KiB (512 UTF-16 units) are accepted; more is 400 OutOfRangeInput", async () => {
    const store = await storeWithTable();
    await store.insert("Things", { partitionKey: "p".repeat(512), rowKey: "r".repeat(512) });
    await expectStoreError(
      store.insert("Things", { partitionKey: "p".repeat(513), rowKey: "r" }),
      400,
      "OutOfRangeInput",
    );
    await expectStoreError(
      store.insert("Things", { partitionKey: "p", rowKey: "r".repeat(513) }),
      400,
      "OutOfRangeInput",
    );
  });

  test("a missing key is 400 PropertiesNeedValue; a non-string key 400 InvalidInput", async () => {
    const store = await storeWithTable();
    await expectStoreError(
      store.insert("Things", { partitionKey: "p" } as WireEntity),
      400,
      "PropertiesNeedValue",
    );
    await expectStoreError(
      store.insert("Things", { partitionKey: 5, rowKey: "r" } as unknown as WireEntity),
      400,
      "InvalidInput",
    );
  });

  test("a failed write changes nothing", async () => {
    const store = await storeWithTable();
    await store.insert("Things", { partitionKey: "p", rowKey: "r", v: 1 });
    await expect(
      store.upsert("Things", { partitionKey: "p", rowKey: "r", v: 2, "bad name": 1 }, "replace"),
    ).rejects.toThrow();
    expect((await store.getEntity("Things", "p", "r"))!.v).toBe(1);
  });
});

describe("transaction payload (4 MiB $batch body, sized as the SDK sends it)", () => {
  test("the failing index and the bytes reported are those of the $batch body on the nominal account URL", async () => {
    const store = await storeWithTable();
    // Escapes count: quotes and newlines make the body longer than the text.
    const entity = (i: number): WireEntity => ({
      partitionKey: "p",
      rowKey: `r${i}`,
      ...Object.fromEntries(Array.from({ length: 8 }, (_, j) => [`s${j}`, `"\n${"x".repeat(31_000)}`])),
      n: i * 1.5,
      at: new Date(Date.UTC(2024, 0, 1)),
    });
    const actions = Array.from({ length: 30 }, (_, i) => ({ kind: "insert" as const, entity: entity(i) }));
    let index = -1;
    let bytes = 0;
    for (let i = 1; i <= actions.length; i++) {
      bytes = batchBodyBytes(AZURE_TABLE_LIMITS, "Things", actions.slice(0, i));
      if (bytes > 4 * 1024 * 1024) {
        index = i - 1;
        break;
      }
    }
    const error = await store.submitTransaction("Things", "p", actions).catch((e: unknown) => e);
    expect(error).toMatchObject({ index, statusCode: 413, serviceCode: "RequestBodyTooLarge" });
    expect((error as Error).message).toContain(`reaches ${bytes} bytes`);
    // One operation fewer fits.
    await expect(store.submitTransaction("Things", "p", actions.slice(0, index))).resolves.toHaveLength(
      index,
    );
  });
});
