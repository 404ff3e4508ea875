import { EncryptionError } from "../../../errors.js";
import type { ColumnModel } from "../../../schema/entity-model.js";
import type { StoredEntity, WireValue } from "../../../store/table-store.js";
import type { DataKeyCache } from "./data-key-cache.js";
import type { EncryptedRowTypes } from "./encrypted-row-types.js";
import { openAt, type ParsedEnvelope, parseEnvelope, rowBinding } from "./envelope.js";
import type { KeyResolver } from "./key-resolver.js";
import { bytesToValue } from "./value-bytes.js";

/**
 * Opens the encrypted columns of the rows `EncryptingStore` reads, and remembers the key ids each
 * opened row's values were under (for `db.reencrypt`). Without a resolver, rows stay as stored.
 */
export class EntityOpener {
  readonly #types: EncryptedRowTypes;
  readonly #resolver: KeyResolver | undefined;
  readonly #keys: DataKeyCache;
  /** The key ids each opened row's values were under (for `db.reencrypt`). */
  readonly #keyIds = new WeakMap<StoredEntity, ReadonlySet<string>>();

  /** `keys`: the cache of unwrapped data keys, shared with the sealer. */
  constructor(types: EncryptedRowTypes, resolver: KeyResolver | undefined, keys: DataKeyCache) {
    this.#types = types;
    this.#resolver = resolver;
    this.#keys = keys;
  }

  /** The key ids of the encrypted values of a row this opener opened (empty for rows with none). */
  keyIdsOf(row: StoredEntity): ReadonlySet<string> {
    return this.#keyIds.get(row) ?? new Set();
  }

  /** Whether reading this row decrypts something (a resolver, and a model with encrypted columns). */
  opens(table: string, row: StoredEntity): boolean {
    return this.#resolver !== undefined && this.#types.lookup(table, row) !== undefined;
  }

  /**
   * The row with its encrypted columns in clear. Synchronous when every data key is cached or the
   * resolver unwraps synchronously; otherwise the unwraps run first (the columns of a write share
   * one), then the values are opened.
   */
  open(table: string, row: StoredEntity): StoredEntity | Promise<StoredEntity> {
    const resolver = this.#resolver;
    if (resolver === undefined) return row;
    const encrypted = this.#types.lookup(table, row);
    if (encrypted === undefined) return row;
    const sealed: SealedValue[] = [];
    for (const column of encrypted.columns) {
      const stored = row[column.property];
      if (stored === undefined || stored === null) continue;
      const bytes = binaryOf(stored);
      if (bytes === undefined) {
        return openFailed(
          table,
          row,
          column,
          "the stored value is not encrypted (expected a Binary envelope)",
        );
      }
      const envelope = parseEnvelope(bytes);
      if (envelope === undefined) {
        return openFailed(
          table,
          row,
          column,
          "the stored value is not an encryption envelope of a known version",
        );
      }
      sealed.push({ column, envelope, dataKey: EMPTY_KEY });
    }
    let waiting = false;
    for (let i = 0; i < sealed.length; i++) {
      const value = sealed[i] as SealedValue;
      // The columns of one write share their wrapped key: unwrap (or look up) once per row.
      const previous = sealed[i - 1];
      if (previous?.envelope.header.equals(value.envelope.header)) {
        value.dataKey = previous.dataKey;
        continue;
      }
      const { keyId, wrapped } = value.envelope;
      let dataKey: Uint8Array | Promise<Uint8Array>;
      try {
        dataKey = this.#keys.get(keyId, wrapped, resolver);
      } catch (error) {
        // Unwraps already under way settle unobserved: their failure is not this row's answer.
        for (const earlier of sealed) if (earlier.dataKey instanceof Promise) earlier.dataKey.catch(() => {});
        return openFailed(table, row, value.column, unwrapFailure(keyId), error);
      }
      if (dataKey instanceof Promise) {
        waiting = true;
        dataKey = dataKey.catch((error: unknown) =>
          openFailed(table, row, value.column, unwrapFailure(keyId), error),
        );
      }
      value.dataKey = dataKey;
    }
    if (sealed.length === 0) return row;
    if (!waiting) return this.#openValues(table, row, sealed);
    return Promise.all(sealed.map((value) => value.dataKey)).then((keys) => {
      for (let i = 0; i < keys.length; i++) (sealed[i] as SealedValue).dataKey = keys[i] as Uint8Array;
      return this.#openValues(table, row, sealed);
    });
  }

  /** Decrypts the values of a row, their data keys at hand. */
  #openValues(table: string, row: StoredEntity, sealed: readonly SealedValue[]): StoredEntity {
    const opened: StoredEntity = { ...row };
    const binding = rowBinding({
      table: this.#types.logicalTable(table),
      partitionKey: row.partitionKey,
      rowKey: row.rowKey,
    });
    const keyIds = new Set<string>();
    for (const { column, envelope, dataKey } of sealed) {
      const plaintext = openAt(envelope, dataKey as Uint8Array, binding, column.property);
      if (plaintext === undefined) {
        return openFailed(
          table,
          row,
          column,
          "the value does not verify under its key and place (tampered with, or copied from another row, column or table)",
        );
      }
      let value: WireValue;
      try {
        value = bytesToValue(plaintext);
      } catch (error) {
        return openFailed(table, row, column, "the decrypted value has an unknown type", error);
      }
      opened[column.property] = value;
      // Its blind value is the store's business, as the ciphertext is: above this store a row reads
      // as it was written (lost-answer and copy checks compare what was sent with what is read).
      if (column.blindIndex !== undefined) delete opened[column.blindIndex.property];
      keyIds.add(envelope.keyId);
    }
    this.#keyIds.set(opened, keyIds);
    return opened;
  }
}

/** One encrypted value of a row being opened: its envelope and its data key (or the unwrap under way). */
interface SealedValue {
  column: ColumnModel;
  envelope: ParsedEnvelope;
  dataKey: Uint8Array | Promise<Uint8Array>;
}

/** A placeholder until a value's data key is looked up. */
const EMPTY_KEY = new Uint8Array(0);

function openFailed(
  table: string,
  row: StoredEntity,
  column: ColumnModel,
  reason: string,
  cause?: unknown,
): never {
  throw new EncryptionError(
    { column: column.field, table, partitionKey: row.partitionKey, rowKey: row.rowKey, reason },
    { cause },
  );
}

function unwrapFailure(keyId: string): string {
  return `the data key under key id '${keyId}' could not be unwrapped (unknown key id, or the wrong key)`;
}

/** The bytes of a stored Binary value in any of the SDK's shapes. */
function binaryOf(value: WireValue): Uint8Array | undefined {
  if (value instanceof Uint8Array) return value;
  if (typeof value === "object" && value !== null && !(value instanceof Date) && value.type === "Binary")
    return Buffer.from(String(value.value), "base64");
  return undefined;
}
