import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

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

interface ParsedEnvelope extends EnvelopeHeader {
  header: Uint8Array;
  iv: Uint8Array;
  ciphertext: Uint8Array;
  tag: Uint8Array;
}

/** Encrypts one property's plaintext under the write's data key, bound to its location. */
export function sealValue(key: SealingKey, location: ValueLocation, plaintext: Uint8Array): Uint8Array {
  const header = encodeHeader(key.keyId, key.wrapped);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key.dataKey, iv);
  cipher.setAAD(associatedData(header, location));
  const first = cipher.update(plaintext);
  const last = cipher.final();
  const tag = cipher.getAuthTag();
  const out = new Uint8Array(header.byteLength + IV_BYTES + first.byteLength + last.byteLength + TAG_BYTES);
  let at = 0;
  for (const part of [header, iv, first, last, tag]) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
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
  if (parsed === undefined) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", dataKey, parsed.iv);
    decipher.setAAD(associatedData(parsed.header, location));
    decipher.setAuthTag(parsed.tag);
    const first = decipher.update(parsed.ciphertext);
    const last = decipher.final();
    return last.byteLength === 0 ? first : Buffer.concat([first, last]);
  } catch {
    return undefined;
  }
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

function parseEnvelope(bytes: Uint8Array): ParsedEnvelope | undefined {
  if (bytes.byteLength < 4 || bytes[0] !== ENVELOPE_VERSION) return undefined;
  const idLength = bytes[1] as number;
  if (idLength === 0 || bytes.byteLength < 4 + idLength) return undefined;
  const wrappedLength = ((bytes[2 + idLength] as number) << 8) | (bytes[3 + idLength] as number);
  const headerLength = 4 + idLength + wrappedLength;
  if (bytes.byteLength < headerLength + IV_BYTES + TAG_BYTES) return undefined;
  const view = (from: number, to: number) => bytes.subarray(from, to);
  return {
    keyId: Buffer.from(view(2, 2 + idLength)).toString("utf8"),
    wrapped: view(4 + idLength, headerLength),
    header: view(0, headerLength),
    iv: view(headerLength, headerLength + IV_BYTES),
    ciphertext: view(headerLength + IV_BYTES, bytes.byteLength - TAG_BYTES),
    tag: view(bytes.byteLength - TAG_BYTES, bytes.byteLength),
  };
}

/** The associated data: the header, then each location part as a 4-byte length and its UTF-8 bytes. */
function associatedData(header: Uint8Array, location: ValueLocation): Buffer {
  // Table names are case-insensitive in the service: bind the lower-case name.
  const parts = [location.table.toLowerCase(), location.partitionKey, location.rowKey, location.property].map(
    (text) => Buffer.from(text, "utf8"),
  );
  const out = Buffer.alloc(header.byteLength + parts.reduce((sum, part) => sum + 4 + part.byteLength, 0));
  out.set(header, 0);
  let at = header.byteLength;
  for (const part of parts) {
    out.writeUInt32BE(part.byteLength, at);
    out.set(part, at + 4);
    at += 4 + part.byteLength;
  }
  return out;
}
