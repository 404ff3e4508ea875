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
  header: Uint8Array;
  iv: Uint8Array;
  ciphertext: Uint8Array;
  tag: Uint8Array;
}

/** Encrypts one property's plaintext under the write's data key, bound to its location. */
export function sealValue(key: SealingKey, location: ValueLocation, plaintext: Uint8Array): Uint8Array {
  return sealAt(key, rowBinding(location), location.property, plaintext);
}

/** `sealValue` with the row's part of the associated data (`rowBinding`) computed once per row. */
export function sealAt(
  key: SealingKey,
  row: Uint8Array,
  property: string,
  plaintext: Uint8Array,
): Uint8Array {
  const header = headerOf(key);
  const iv = randomView(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key.dataKey, iv);
  cipher.setAAD(header);
  cipher.setAAD(row);
  cipher.setAAD(lengthPrefixed(property));
  const first = cipher.update(plaintext);
  const last = cipher.final();
  const out = new Uint8Array(header.byteLength + IV_BYTES + first.byteLength + last.byteLength + TAG_BYTES);
  out.set(header, 0);
  let at = header.byteLength;
  out.set(iv, at);
  at += IV_BYTES;
  out.set(first, at);
  at += first.byteLength;
  if (last.byteLength > 0) out.set(last, at);
  out.set(cipher.getAuthTag(), at + last.byteLength);
  return out;
}

/** The header of a write's envelopes, encoded once for all its columns. */
const headers = new WeakMap<SealingKey, Uint8Array>();

function headerOf(key: SealingKey): Uint8Array {
  let header = headers.get(key);
  if (header === undefined) {
    header = encodeHeader(key.keyId, key.wrapped);
    headers.set(key, header);
  }
  return header;
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
    decipher.setAAD(parsed.header);
    decipher.setAAD(row);
    decipher.setAAD(lengthPrefixed(property));
    decipher.setAuthTag(parsed.tag);
    const first = decipher.update(parsed.ciphertext);
    const last = decipher.final();
    return last.byteLength === 0 ? first : Buffer.concat([first, last]);
  } catch {
    return undefined;
  }
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

function lengthPrefixed(text: string): Buffer {
  const out = Buffer.allocUnsafe(4 + Buffer.byteLength(text, "utf8"));
  out.writeUInt32BE(out.write(text, 4, "utf8"), 0);
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
