import { describe, expect, test } from "vitest";
import { skipAzuriteDeviations, storeKinds, storeWithTable } from "./contract.js";

describe.each(storeKinds)("store contract (types) on $name", (kind) => {
  skipAzuriteDeviations(kind);

  const GUID = "3f2504e0-4f89-11d3-9a0c-0305e82c3301";

  describe("EDM type round trips", () => {
    test("every type reads back in @azure/data-tables' default conversion", async () => {
      const store = await storeWithTable(kind);
      const bytes = new Uint8Array([0, 1, 2, 254, 255]);
      await store.insert("Things", {
        partitionKey: "p",
        rowKey: "r",
        str: "héllo ✓ 😀",
        empty: "",
        int32: 42,
        int32Neg: -2_147_483_648,
        int32Max: 2_147_483_647,
        dbl: 1.5,
        dblWhole: { type: "Double", value: 5 },
        dblString: { type: "Double", value: "2.25" },
        int64Min: -(2n ** 63n),
        int64Max: 2n ** 63n - 1n,
        int64Typed: { type: "Int64", value: "-9007199254740993" },
        boolTrue: true,
        boolFalse: false,
        date: new Date("2024-05-01T10:00:00.123Z"),
        dateTyped: { type: "DateTime", value: "1601-01-01T00:00:00.0000000Z" },
        guid: { type: "Guid", value: GUID },
        bin: bytes,
        binTyped: { type: "Binary", value: "AAEC/v8=" },
      });
      const e = (await store.getEntity("Things", "p", "r"))!;
      expect(e.str).toBe("héllo ✓ 😀");
      expect(e.empty).toBe("");
      expect(e.int32).toBe(42);
      expect(e.int32Neg).toBe(-2_147_483_648);
      expect(e.int32Max).toBe(2_147_483_647);
      expect(e.dbl).toBe(1.5);
      expect(e.dblWhole).toBe(5);
      expect(e.dblString).toBe(2.25);
      expect(e.int64Min).toBe(-(2n ** 63n));
      expect(e.int64Max).toBe(2n ** 63n - 1n);
      expect(e.int64Typed).toBe(-9007199254740993n);
      expect(e.boolTrue).toBe(true);
      expect(e.boolFalse).toBe(false);
      expect(e.date).toEqual(new Date("2024-05-01T10:00:00.123Z"));
      expect((e.date as Date).getUTCMilliseconds()).toBe(123);
      expect(e.dateTyped).toEqual(new Date("1601-01-01T00:00:00Z"));
      expect(e.guid).toEqual({ type: "Guid", value: GUID });
      expect(e.bin).toBeInstanceOf(Uint8Array);
      expect([...(e.bin as Uint8Array)]).toEqual([0, 1, 2, 254, 255]);
      expect([...(e.binTyped as Uint8Array)]).toEqual([0, 1, 2, 254, 255]);
    });

    test("numbers read back as numbers whatever their inferred type; bigint as bigint", async () => {
      const store = await storeWithTable(kind);
      await store.insert("Things", {
        partitionKey: "p",
        rowKey: "r",
        small: 7,
        wide: 2 ** 40,
        frac: 0.25,
        i64: 7n,
      });
      const e = (await store.getEntity("Things", "p", "r"))!;
      expect(e).toMatchObject({ small: 7, wide: 2 ** 40, frac: 0.25, i64: 7n });
      // (limits.test.ts observes the inferred Int32/Double types through the entity-size formula.)
    });

    test("special Double values survive", async () => {
      const store = await storeWithTable(kind);
      await store.insert("Things", {
        partitionKey: "p",
        rowKey: "r",
        nan: { type: "Double", value: "NaN" },
        inf: { type: "Double", value: "Infinity" },
        ninf: { type: "Double", value: "-Infinity" },
      });
      const e = (await store.getEntity("Things", "p", "r"))!;
      expect(e.nan).toBeNaN();
      expect(e.inf).toBe(Number.POSITIVE_INFINITY);
      expect(e.ninf).toBe(Number.NEGATIVE_INFINITY);
    });

    // JSON.stringify, which the Azure SDK sends, writes -0 as 0, and Azurite answers a stored -0 as
    // 0.0: every store keeps a negative zero Double as 0 (src/util/stored-double.ts).
    test("a negative zero Double reads back as 0, however it is written", async () => {
      const store = await storeWithTable(kind);
      await store.insert("Things", {
        partitionKey: "p",
        rowKey: "r",
        typed: { type: "Double", value: -0 },
        text: { type: "Double", value: "-0" },
        fraction: { type: "Double", value: "-0.0" },
      });
      await store.upsert(
        "Things",
        { partitionKey: "p", rowKey: "m", merged: { type: "Double", value: -0 } },
        "merge",
      );
      await store.submitTransaction("Things", "p", [
        {
          kind: "insert",
          entity: { partitionKey: "p", rowKey: "t", batched: { type: "Double", value: -0 } },
        },
      ]);
      const e = (await store.getEntity("Things", "p", "r"))!;
      expect([e.typed, e.text, e.fraction].map((v) => Object.is(v, 0))).toEqual([true, true, true]);
      expect(Object.is((await store.getEntity("Things", "p", "m"))!.merged, 0)).toBe(true);
      expect(Object.is((await store.getEntity("Things", "p", "t"))!.batched, 0)).toBe(true);
      // A filter on -0.0 and on 0.0 finds it alike (IEEE equality).
      const page = await store.queryPage("Things", { filter: "typed eq -0.0 and text eq 0.0" });
      expect(page.items.map((i) => i.rowKey)).toEqual(["r"]);
    });

    test("Guids are normalized to lower case", async () => {
      const store = await storeWithTable(kind);
      await store.insert("Things", {
        partitionKey: "p",
        rowKey: "r",
        g: { type: "Guid", value: GUID.toUpperCase() },
      });
      expect((await store.getEntity("Things", "p", "r"))!.g).toEqual({ type: "Guid", value: GUID });
    });

    test("DateTime keeps 100-ns precision for filters while reads give milliseconds", async () => {
      const store = await storeWithTable(kind);
      await store.insert("Things", {
        partitionKey: "p",
        rowKey: "r",
        at: { type: "DateTime", value: "2024-05-01T10:00:00.1234567Z" },
      });
      expect((await store.getEntity("Things", "p", "r"))!.at).toEqual(new Date("2024-05-01T10:00:00.123Z"));
      const count = async (filter: string) => (await store.queryPage("Things", { filter })).items.length;
      expect(await count("at eq datetime'2024-05-01T10:00:00.1234567Z'")).toBe(1);
      expect(await count("at gt datetime'2024-05-01T10:00:00.123Z'")).toBe(1);
      expect(await count("at lt datetime'2024-05-01T10:00:00.1234568Z'")).toBe(1);
    });

    test("dates before 1970 and typed date-times with offsets keep their instant", async () => {
      const store = await storeWithTable(kind);
      await store.insert("Things", {
        partitionKey: "p",
        rowKey: "r",
        old: new Date("1950-06-15T12:34:56.789Z"),
        oldest: new Date("1601-01-01T00:00:00.001Z"),
        offset: { type: "DateTime", value: "2024-05-01T12:00:00.5+02:00" },
      });
      const e = (await store.getEntity("Things", "p", "r"))!;
      expect(e.old).toEqual(new Date("1950-06-15T12:34:56.789Z"));
      expect(e.oldest).toEqual(new Date("1601-01-01T00:00:00.001Z"));
      expect(e.offset).toEqual(new Date("2024-05-01T10:00:00.500Z"));
    });

    test("returned entities are fresh copies", async () => {
      const store = await storeWithTable(kind);
      const written = new Uint8Array([1, 2, 3]);
      await store.insert("Things", { partitionKey: "p", rowKey: "r", bin: written, at: new Date(0) });
      written[0] = 99; // the caller's array is not shared with the store
      const first = (await store.getEntity("Things", "p", "r"))!;
      (first.bin as Uint8Array)[1] = 99;
      (first.at as Date).setFullYear(2000);
      first.extra = "x";
      const second = (await store.getEntity("Things", "p", "r"))!;
      expect([...(second.bin as Uint8Array)]).toEqual([1, 2, 3]);
      expect(second.at).toEqual(new Date(0));
      expect(second).not.toHaveProperty("extra");
      const [fromQuery] = (await store.queryPage("Things", {})).items;
      expect(fromQuery).not.toBe(second);
      expect(fromQuery).toEqual(second);
    });

    // BUG (known, AZURITE-NOTES): through AzureStore a property named __proto__ is lost both ways, in
    // @azure/data-tables' serialize and deserialize (`serialized[name] = …` sets the prototype instead).
    // A failing expectation there, not a skip: once the bug is fixed, `test.fails` fails and must go.
    (kind.name === "memory" ? test : test.fails)(
      "a property named __proto__ is stored as a plain property",
      async () => {
        const store = await storeWithTable(kind);
        const entity = { partitionKey: "p", rowKey: "r" } as Record<string, unknown>;
        Object.defineProperty(entity, "__proto__", { value: "x", enumerable: true });
        await store.insert("Things", entity as never);
        const e = (await store.getEntity("Things", "p", "r"))!;
        expect(Object.getPrototypeOf(e)).toBe(Object.prototype);
        expect(Object.getOwnPropertyDescriptor(e, "__proto__")?.value).toBe("x");
      },
    );

    test("$select returns the etag and only the named properties, keys and Timestamp included", async () => {
      // As the service answers (Azurite: NormalizedEntity.toResponseString filters PartitionKey, RowKey
      // and Timestamp by the $select set too); a named property the entity lacks is left out.
      const store = await storeWithTable(kind);
      await store.insert("Things", { partitionKey: "p", rowKey: "r", a: 1, b: 2, c: 3 });
      const e = (await store.getEntity("Things", "p", "r", ["a", "c", "missing", "RowKey"]))!;
      expect(Object.keys(e).sort()).toEqual(["a", "c", "etag", "rowKey"]);
      expect(e).toMatchObject({ a: 1, c: 3, rowKey: "r" });
      const [q] = (await store.queryPage("Things", { select: ["b"] })).items;
      expect(Object.keys(q!).sort()).toEqual(["b", "etag"]);
      const [all] = (await store.queryPage("Things", { select: ["PartitionKey", "RowKey", "Timestamp"] }))
        .items;
      expect(Object.keys(all!).sort()).toEqual(["etag", "partitionKey", "rowKey", "timestamp"]);
      expect(all).toMatchObject({ partitionKey: "p", rowKey: "r", timestamp: expect.any(Date) });
      expect(all?.etag).toBe(e.etag);
      // Typed reads (AzureStore asks for lighter payloads with them) answer the same shape.
      const types = { a: "Int32", b: "Int32", c: "Int32" } as const;
      const typed = (await store.getEntity("Things", "p", "r", ["b"], types))!;
      expect(Object.keys(typed).sort()).toEqual(["b", "etag"]);
      expect(typed.etag).toBe(e.etag);
      const [typedRow] = (await store.queryPage("Things", { select: ["a", "PartitionKey"], types })).items;
      expect(Object.keys(typedRow!).sort()).toEqual(["a", "etag", "partitionKey"]);
      expect(typedRow?.etag).toBe(e.etag);
    });
  });
});
