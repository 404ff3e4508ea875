/**
 * The stored format of encrypted values, offline: every wire type round-trips through its plaintext
 * bytes, and the associated data binds a value to its table, PartitionKey, RowKey and property.
 */
import { describe, expect, it } from "vitest";
import { localKeys } from "../../src/index.js";
import {
  envelopeBytes,
  openValue,
  readEnvelopeHeader,
  sealValue,
  type ValueLocation,
} from "../../src/repository/encryption/envelope.js";
import { bytesToValue, valueToBytes } from "../../src/repository/encryption/value-bytes.js";
import type { WireValue } from "../../src/store/table-store.js";

const dataKey = new Uint8Array(32).fill(9);
const key = { keyId: "k1", wrapped: new Uint8Array(40).fill(3), dataKey };
const here: ValueLocation = {
  table: "Patients",
  partitionKey: "north",
  rowKey: "p_000001",
  property: "notes",
};

describe("plaintext bytes", () => {
  const cases: Array<[string, WireValue, WireValue]> = [
    ["String", "héllo ✓", "héllo ✓"],
    ["empty String", "", ""],
    ["Int32", -2_147_483_648, -2_147_483_648],
    ["Double", 0.1, 0.1],
    ["annotated Double", { type: "Double", value: 5 }, 5],
    ["Int64", 9_223_372_036_854_775_807n, 9_223_372_036_854_775_807n],
    ["annotated Int64", { type: "Int64", value: "-42" }, -42n],
    ["Boolean", false, false],
    ["DateTime", new Date("2026-11-26T05:00:00.123Z"), new Date("2026-11-26T05:00:00.123Z")],
    [
      "Guid",
      { type: "Guid", value: "0f8fad5b-d9cb-469f-a165-70867728950e" },
      { type: "Guid", value: "0f8fad5b-d9cb-469f-a165-70867728950e" },
    ],
    ["Binary", new Uint8Array([0, 255, 7]), new Uint8Array([0, 255, 7])],
  ];
  it.each(cases)("%s reads back as the store would return it", (_name, written, read) => {
    expect(bytesToValue(valueToBytes(written) as Uint8Array)).toEqual(read);
  });
});

describe("envelope", () => {
  const plaintext = valueToBytes("secret") as Uint8Array;
  const sealed = sealValue(key, here, plaintext);

  it("opens at its own location, with its header readable and its size as computed", () => {
    expect(Buffer.from(openValue(sealed, dataKey, here) as Uint8Array)).toEqual(Buffer.from(plaintext));
    expect(readEnvelopeHeader(sealed)).toMatchObject({ keyId: "k1" });
    expect(sealed.byteLength).toBe(envelopeBytes("k1", 40, plaintext.byteLength));
    expect(Buffer.from(sealed).includes(Buffer.from("secret"))).toBe(false);
  });

  it("fails anywhere else: another table, PartitionKey, RowKey or property", () => {
    for (const moved of [
      { ...here, table: "Archive" },
      { ...here, partitionKey: "south" },
      { ...here, rowKey: "p_000002" },
      { ...here, property: "diagnosis" },
      // Length prefixes: shifting text between parts changes the associated data.
      { ...here, partitionKey: "nort", rowKey: "hp_000001" },
    ]) {
      expect(openValue(sealed, dataKey, moved)).toBeUndefined();
    }
  });

  it("binds the table name case-insensitively, as the service names tables", () => {
    expect(openValue(sealed, dataKey, { ...here, table: "PATIENTS" })).toBeDefined();
  });

  it("fails with another data key, a changed header or a flipped bit", () => {
    expect(openValue(sealed, new Uint8Array(32), here)).toBeUndefined();
    for (const at of [0, 2, 5, sealed.byteLength - 1, sealed.byteLength - 20]) {
      const tampered = new Uint8Array(sealed);
      tampered[at] = (tampered[at] as number) ^ 1;
      expect(openValue(tampered, dataKey, here), `byte ${at}`).toBeUndefined();
    }
    expect(readEnvelopeHeader(new Uint8Array([2, 1, 65]))).toBeUndefined();
  });
});

describe("localKeys", () => {
  it("wraps with AES key wrap (40 bytes) and refuses unknown ids and wrong keys", async () => {
    const keys = localKeys({ k1: new Uint8Array(32).fill(1), k2: new Uint8Array(32).fill(2) }, "k2");
    const wrapped = await keys.wrapKey("k2", dataKey);
    expect(wrapped.byteLength).toBe(40);
    expect(Buffer.from(await keys.unwrapKey("k2", wrapped))).toEqual(Buffer.from(dataKey));
    expect(() => keys.unwrapKey("k1", wrapped)).toThrow();
    expect(() => keys.unwrapKey("k3", wrapped)).toThrow(/k3/);
  });
});
