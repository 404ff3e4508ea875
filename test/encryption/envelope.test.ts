/**
 * The stored format of encrypted values, offline: every wire type round-trips through its plaintext
 * bytes, and the associated data binds a value to its table, PartitionKey, RowKey and property.
 */
import { createCipheriv, createDecipheriv } from "node:crypto";
import { describe, expect, it } from "vitest";
import { localKeys } from "../../src/index.js";
import {
  envelopeBytes,
  openValue,
  readEnvelopeHeader,
  sealValue,
  type ValueLocation,
} from "../../src/repository/pipeline/encryption/envelope.js";
import { bytesToValue, valueToBytes } from "../../src/repository/pipeline/encryption/value-bytes.js";
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

/** The documented associated data, built here from the format's description, not from envelope.ts. */
function documentedAad(header: Buffer, at: ValueLocation): Buffer {
  const part = (text: string) => {
    const bytes = Buffer.from(text, "utf8");
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.byteLength);
    return Buffer.concat([length, bytes]);
  };
  return Buffer.concat([
    header,
    part(at.table.toLowerCase()),
    part(at.partitionKey),
    part(at.rowKey),
    part(at.property),
  ]);
}

describe("stored format", () => {
  // version 1 | key id length | "k1" | wrapped length (2 bytes) | wrapped key
  const header = Buffer.concat([Buffer.from([1, 2]), Buffer.from("k1"), Buffer.from([0, 40]), key.wrapped]);
  const plaintext = valueToBytes("stored earlier") as Uint8Array;

  it("opens an envelope sealed independently by the documented layout", () => {
    const iv = Buffer.alloc(12, 5);
    const cipher = createCipheriv("aes-256-gcm", dataKey, iv);
    cipher.setAAD(documentedAad(header, here));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    const envelope = Buffer.concat([header, iv, body, cipher.getAuthTag()]);
    expect(Buffer.from(openValue(envelope, dataKey, here) as Uint8Array)).toEqual(Buffer.from(plaintext));
    expect(openValue(envelope, dataKey, { ...here, property: "other" })).toBeUndefined();
  });

  it("seals what an independent reader of the documented layout opens", () => {
    for (const at of [here, { ...here, rowKey: "ü_2" }, { ...here, property: "a".repeat(3000) }]) {
      const sealed = Buffer.from(sealValue(key, at, plaintext));
      expect(sealed.subarray(0, header.byteLength)).toEqual(header);
      const iv = sealed.subarray(header.byteLength, header.byteLength + 12);
      const decipher = createDecipheriv("aes-256-gcm", dataKey, iv);
      decipher.setAAD(documentedAad(header, at));
      decipher.setAuthTag(sealed.subarray(sealed.byteLength - 16));
      const body = sealed.subarray(header.byteLength + 12, sealed.byteLength - 16);
      const opened = Buffer.concat([decipher.update(body), decipher.final()]);
      expect(opened).toEqual(Buffer.from(plaintext));
    }
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
