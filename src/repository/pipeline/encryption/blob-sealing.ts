import { EncryptionError, ValidationError } from "../../../errors.js";
import type { DataKeyCache } from "./data-key-cache.js";
import {
  DATA_KEY_BYTES,
  MAX_WRAPPED_KEY_BYTES,
  openAt,
  parseEnvelope,
  RowSealer,
  rowBinding,
} from "./envelope.js";
import { assertKeyId, type KeyResolver } from "./key-resolver.js";
import { randomView } from "./random-pool.js";

/** Which value a blob holds: the entity's column and keys (for messages). */
export interface SealedBlobOwner {
  /** The physical table of the entity (with the context's prefix). */
  table: string;
  /** The blob's name in its container (unique per written value). */
  blob: string;
  /** The column's stored property. */
  property: string;
  /** The column's field, and the entity's keys, for errors. */
  column: string;
  partitionKey: string;
  rowKey: string;
}

/** The PartitionKey slot of a blob's associated data: no row's PartitionKey is compared with it. */
const BLOB_BINDING = "tkblob";

/**
 * The bytes of an encrypted large column (kept in a blob) sealed in the envelope of encrypted
 * properties (envelope.ts), the whole value as one plaintext under a fresh data key per value. The
 * associated data binds it to the table (without the context's prefix), the blob's name (fresh per
 * write, and naming the entity's keys and property) and the property: a blob copied to another name,
 * table or column fails the GCM check instead of decrypting.
 */
export class BlobSealer {
  readonly #resolver: KeyResolver;
  readonly #keys: DataKeyCache;
  readonly #logicalTable: (table: string) => string;

  constructor(resolver: KeyResolver, keys: DataKeyCache, logicalTable: (table: string) => string) {
    this.#resolver = resolver;
    this.#keys = keys;
    this.#logicalTable = logicalTable;
  }

  /** The key id new values are sealed under. */
  get currentKeyId(): string {
    return this.#resolver.currentKeyId;
  }

  /** The key id a sealed value's envelope names, or `undefined` when the bytes are not an envelope. */
  keyIdOf(bytes: Uint8Array): string | undefined {
    return parseEnvelope(bytes)?.keyId;
  }

  /** The envelope of a value's bytes; the resolver wraps a fresh data key for it. */
  async seal(owner: SealedBlobOwner, bytes: Uint8Array): Promise<Uint8Array> {
    const keyId = this.#resolver.currentKeyId;
    assertKeyId(keyId, "encryption.keys.currentKeyId");
    const dataKey = Buffer.from(randomView(DATA_KEY_BYTES));
    let wrapped: Uint8Array;
    try {
      // A copy: the resolver must not be able to change the key the value is sealed with.
      wrapped = await this.#resolver.wrapKey(keyId, new Uint8Array(dataKey));
    } catch (error) {
      throw failed(owner, `the key resolver could not wrap the data key under key id '${keyId}'`, error);
    }
    if (
      !(wrapped instanceof Uint8Array) ||
      wrapped.byteLength === 0 ||
      wrapped.byteLength > MAX_WRAPPED_KEY_BYTES
    )
      throw failed(owner, `wrapKey under key id '${keyId}' must return 1 to ${MAX_WRAPPED_KEY_BYTES} bytes`);
    this.#keys.put(keyId, wrapped, dataKey);
    return new RowSealer({ keyId, wrapped, dataKey }, this.#binding(owner)).seal(owner.property, bytes);
  }

  /** The value's bytes from their envelope; `EncryptionError` when it does not verify. */
  async open(owner: SealedBlobOwner, bytes: Uint8Array): Promise<Uint8Array> {
    const envelope = parseEnvelope(bytes);
    if (envelope === undefined)
      throw failed(owner, "the blob is not an encryption envelope of a known version");
    let dataKey: Uint8Array;
    try {
      dataKey = await this.#keys.get(envelope.keyId, envelope.wrapped, this.#resolver);
    } catch (error) {
      throw failed(
        owner,
        `the data key under key id '${envelope.keyId}' could not be unwrapped (unknown key id, or the wrong key)`,
        error,
      );
    }
    const plaintext = openAt(envelope, dataKey, this.#binding(owner), owner.property);
    if (plaintext === undefined)
      throw failed(
        owner,
        "the blob does not verify under its key and place (tampered with, or copied from another blob, column or table)",
      );
    return plaintext;
  }

  #binding(owner: SealedBlobOwner): Buffer {
    return rowBinding({
      table: this.#logicalTable(owner.table),
      partitionKey: BLOB_BINDING,
      rowKey: owner.blob,
    });
  }
}

function failed(owner: SealedBlobOwner, reason: string, cause?: unknown): EncryptionError {
  return new EncryptionError(
    {
      column: owner.column,
      table: owner.table,
      partitionKey: owner.partitionKey,
      rowKey: owner.rowKey,
      reason: `large value '${owner.blob}': ${reason}`,
    },
    { cause },
  );
}

/** Writing an encrypted large value without keys: refused before any request, as for any encrypted column. */
export function blobKeysMissing(model: string, column: string): ValidationError {
  return new ValidationError(
    "encryption-keys",
    `${model} has encrypted columns (${column}): give the TableContext { encryption: { keys } }`,
    { field: "encryption" },
  );
}
