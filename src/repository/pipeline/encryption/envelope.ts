import { createCipheriv, createDecipheriv } from "node:crypto";
import { randomView } from "./random-pool.js";

/**
 * The stored form of one encrypted property (a Binary property under the column's own name):
 *
 *   version (1 byte, 1) | key id length (1 byte) | key id (UTF-8) | wrapped key length (2 bytes, big-endian)
 *   | wrapped data key | IV (12 bytes) | AES-256-GCM ciphertext | GCM tag (16 bytes)
 *
 * Every property carries its own key id and wrapped data key (the same ones for all columns of one
 * write), so a merge that rewrites some encrypted columns leaves the others readable, and a
 * projection (`select`) needs no extra properties. The associated data is the header (everything
 * before the IV) plus the row's table (lower-cased, without the context's `tablePrefix`), PartitionKey, RowKey and
 * the property name, each length-prefixed: a value copied to another row, column or table, or a
 * header swapped for another, fails the GCM check instead of decrypting.
 */
export const ENVELOPE_VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** The data key size of AES-256. */
export const DATA_KEY_BYTES = 32;
/** The longest key id (its length is one byte of the header). */
export const MAX_KEY_ID_BYTES = 255;
/** The longest wrapped data key (its length is two bytes of the header). */
export const MAX_WRAPPED_KEY_BYTES = 0xffff;

/** Where a value lives: what the associated data binds it to. */
export interface ValueLocation {
  /** The table without the context's `tablePrefix`. */
  table: string;
  partitionKey: string;
  rowKey: string;
  property: string;
}

/** The key material of one entity write: a fresh data key and its wrapped form under `keyId`. */
export interface SealingKey {
  keyId: string;
  wrapped: Uint8Array;
  dataKey: Uint8Array;
}

/** The header fields of a stored envelope. */
export interface EnvelopeHeader {
  keyId: string;
  wrapped: Uint8Array;
}

/** An envelope split into its parts (views into its bytes). */
export interface ParsedEnvelope extends EnvelopeHeader {
  header: Buffer;
  iv: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

/** Encrypts one property's plaintext under the write's data key, bound to its location. */
export function sealValue(key: SealingKey, location: ValueLocation, plaintext: Uint8Array): Uint8Array {
  return new RowSealer(key, rowBinding(location)).seal(location.property, plaintext);
}

/**
 * Seals the properties of one row under one write's data key. The header and the row's part of the
 * associated data are encoded once for all its properties, and each property's associated data goes
 * to GCM in one piece (the same bytes as separate parts: GCM hashes their concatenation).
 */
export class RowSealer {
  readonly #dataKey: Uint8Array;
  /** The associated data up to the property: header, then the row binding. */
  readonly #prefix: Buffer;
  readonly #headerBytes: number;

  constructor(key: SealingKey, row: Uint8Array) {
    this.#dataKey = key.dataKey;
    const header = encodeHeader(key.keyId, key.wrapped);
    this.#headerBytes = header.byteLength;
    this.#prefix = Buffer.allocUnsafe(header.byteLength + row.byteLength);
    this.#prefix.set(header, 0);
    this.#prefix.set(row, header.byteLength);
  }

  /** The envelope of one property's plaintext. */
  seal(property: string, plaintext: Uint8Array): Uint8Array {
    const iv = randomView(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.#dataKey, iv);
    cipher.setAAD(associatedData(this.#prefix, this.#prefix.byteLength, property));
    const body = cipher.update(plaintext);
    // GCM is a stream mode: `final` adds nothing, it only computes the tag.
    cipher.final();
    const headerBytes = this.#headerBytes;
    const out = Buffer.allocUnsafe(headerBytes + IV_BYTES + body.byteLength + TAG_BYTES);
    this.#prefix.copy(out, 0, 0, headerBytes);
    out.set(iv, headerBytes);
    out.set(body, headerBytes + IV_BYTES);
    out.set(cipher.getAuthTag(), headerBytes + IV_BYTES + body.byteLength);
    return out;
  }
}

/** The key id and wrapped data key of an envelope; `undefined` when the bytes are not one. */
export function readEnvelopeHeader(bytes: Uint8Array): EnvelopeHeader | undefined {
  return parseEnvelope(bytes);
}

/**
 * Decrypts an envelope with its unwrapped data key; `undefined` when it does not verify (wrong key,
 * tampered bytes, or a value moved from another location).
 */
export function openValue(
  bytes: Uint8Array,
  dataKey: Uint8Array,
  location: ValueLocation,
): Uint8Array | undefined {
  const parsed = parseEnvelope(bytes);
  return parsed === undefined ? undefined : openAt(parsed, dataKey, rowBinding(location), location.property);
}

/** `openValue` of an envelope parsed once, with the row's part of the associated data computed once per row. */
export function openAt(
  parsed: ParsedEnvelope,
  dataKey: Uint8Array,
  row: Uint8Array,
  property: string,
): Uint8Array | undefined {
  try {
    const decipher = createDecipheriv("aes-256-gcm", dataKey, parsed.iv);
    const headerBytes = parsed.header.byteLength;
    const prefix = scratch(headerBytes + row.byteLength + 4 + Buffer.byteLength(property, "utf8"));
    prefix.set(parsed.header, 0);
    prefix.set(row, headerBytes);
    decipher.setAAD(associatedData(prefix, headerBytes + row.byteLength, property));
    decipher.setAuthTag(parsed.tag);
    const plaintext = decipher.update(parsed.ciphertext);
    decipher.final();
    return plaintext;
  } catch {
    return undefined;
  }
}

/** Reused for associated data: GCM copies it in at once, so one buffer serves every call. */
let scratchBuffer = Buffer.allocUnsafe(1024);

function scratch(bytes: number): Buffer {
  if (scratchBuffer.byteLength < bytes)
    scratchBuffer = Buffer.allocUnsafe(Math.max(bytes, 2 * scratchBuffer.byteLength));
  return scratchBuffer;
}

/**
 * The whole associated data, `prefix` (its first `prefixBytes`) then the property length-prefixed, as
 * a view of the scratch buffer, valid until the next call.
 */
function associatedData(prefix: Buffer, prefixBytes: number, property: string): Buffer {
  const out = scratch(prefixBytes + 4 + Buffer.byteLength(property, "utf8"));
  if (prefix !== out) prefix.copy(out, 0, 0, prefixBytes);
  const written = out.write(property, prefixBytes + 4, "utf8");
  out.writeUInt32BE(written, prefixBytes);
  return out.subarray(0, prefixBytes + 4 + written);
}

/**
 * The row's part of the associated data: the table (lower-cased: the service's table names are
 * case-insensitive), PartitionKey and RowKey, each as a 4-byte big-endian length and its UTF-8 bytes.
 * The property follows the same way, and the envelope header comes first.
 */
export function rowBinding(location: Omit<ValueLocation, "property">): Buffer {
  const parts = [location.table.toLowerCase(), location.partitionKey, location.rowKey];
  let size = 0;
  for (const part of parts) size += 4 + Buffer.byteLength(part, "utf8");
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const part of parts) {
    const written = out.write(part, at + 4, "utf8");
    out.writeUInt32BE(written, at);
    at += 4 + written;
  }
  return out;
}

/** The stored size of an envelope for a plaintext of `plaintextBytes` (for the size checks). */
export function envelopeBytes(keyId: string, wrappedBytes: number, plaintextBytes: number): number {
  return 1 + 1 + Buffer.byteLength(keyId, "utf8") + 2 + wrappedBytes + IV_BYTES + plaintextBytes + TAG_BYTES;
}

function encodeHeader(keyId: string, wrapped: Uint8Array): Uint8Array {
  const id = Buffer.from(keyId, "utf8");
  const header = new Uint8Array(4 + id.byteLength + wrapped.byteLength);
  header[0] = ENVELOPE_VERSION;
  header[1] = id.byteLength;
  header.set(id, 2);
  header[2 + id.byteLength] = wrapped.byteLength >> 8;
  header[3 + id.byteLength] = wrapped.byteLength & 0xff;
  header.set(wrapped, 4 + id.byteLength);
  return header;
}

/** The parts of an envelope; `undefined` when the bytes are not one of a known version. */
export function parseEnvelope(bytes: Uint8Array): ParsedEnvelope | undefined {
  if (bytes.byteLength < 4 || bytes[0] !== ENVELOPE_VERSION) return undefined;
  const idLength = bytes[1] as number;
  if (idLength === 0 || bytes.byteLength < 4 + idLength) return undefined;
  const wrappedLength = ((bytes[2 + idLength] as number) << 8) | (bytes[3 + idLength] as number);
  const headerLength = 4 + idLength + wrappedLength;
  if (bytes.byteLength < headerLength + IV_BYTES + TAG_BYTES) return undefined;
  const buffer = Buffer.isBuffer(bytes)
    ? bytes
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return {
    keyId: buffer.toString("utf8", 2, 2 + idLength),
    wrapped: buffer.subarray(4 + idLength, headerLength),
    header: buffer.subarray(0, headerLength),
    iv: buffer.subarray(headerLength, headerLength + IV_BYTES),
    ciphertext: buffer.subarray(headerLength + IV_BYTES, buffer.byteLength - TAG_BYTES),
    tag: buffer.subarray(buffer.byteLength - TAG_BYTES),
  };
}
