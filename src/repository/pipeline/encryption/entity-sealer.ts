import { EncryptionError, ValidationError } from "../../../errors.js";
import type { ColumnModel } from "../../../schema/entity-model.js";
import type { WireEntity, WireValue } from "../../../store/table-store.js";
import { propertyValueBytes } from "../../../util/entity-size.js";
import { ServiceLimits } from "../../../util/service-limits.js";
import type { EdmType } from "../../../wire/wire-entity.js";
import { type BlindIndex, missingBlindIndexKey } from "./blind-index.js";
import type { DataKeyCache } from "./data-key-cache.js";
import type { EncryptedColumns, EncryptedRowTypes } from "./encrypted-row-types.js";
import { DATA_KEY_BYTES, MAX_WRAPPED_KEY_BYTES, RowSealer, rowBinding, type SealingKey } from "./envelope.js";
import { assertKeyId, type KeyResolver } from "./key-resolver.js";
import { randomView } from "./random-pool.js";
import { valueToBytes } from "./value-bytes.js";

/**
 * Writes whose sealed form is kept for a retry (the most recent ones): enough for the requests in
 * flight. A retry of an older one is sealed afresh, which is as correct (a new data key, the same
 * plaintext; read-backs compare plaintext), only one more wrap. Not a WeakMap: one ephemeron per
 * write made every young-generation GC slower (about a fifth of an encrypted round trip).
 */
const SEALED_WRITES_KEPT = 256;

/**
 * Seals the encrypted columns of the entities `EncryptingStore` writes: a fresh data key per write,
 * wrapped by the resolver's current key (see envelope.ts for the stored format). Without a resolver,
 * a row with encrypted columns is a `ValidationError` (nothing is sent).
 */
export class EntitySealer {
  readonly #types: EncryptedRowTypes;
  readonly #resolver: KeyResolver | undefined;
  readonly #keys: DataKeyCache;
  readonly #blind: BlindIndex | undefined;
  /** The sealed form of a wire entity sent recently: a retry resends the same bytes (no second wrap). */
  readonly #sealed = new Map<WireEntity, SealedWrite>();

  /** `keys`: the data keys this sealer wraps are put there, for reads of the rows it wrote. */
  /** `blind`: the blind values of blind-indexed columns are computed beside their ciphertext. */
  constructor(
    types: EncryptedRowTypes,
    resolver: KeyResolver | undefined,
    keys: DataKeyCache,
    blind?: BlindIndex,
  ) {
    this.#types = types;
    this.#resolver = resolver;
    this.#keys = keys;
    this.#blind = blind;
  }

  /**
   * The row as it is sent: its encrypted columns sealed. Synchronous when the resolver wraps
   * synchronously (local keys): no promise, no extra turn of the event loop per write.
   */
  seal(table: string, wire: WireEntity): WireEntity | Promise<WireEntity> {
    const encrypted = this.#types.lookup(table, wire);
    if (encrypted === undefined) return wire;
    const present: ColumnModel[] = [];
    for (const column of encrypted.columns) {
      const value = wire[column.property];
      if (value !== undefined && value !== null) present.push(column);
    }
    if (present.length === 0) return wire;
    const resolver = this.#resolver;
    const { model } = encrypted;
    if (resolver === undefined) {
      throw new ValidationError(
        "encryption-keys",
        `${model.name} has encrypted columns (${encrypted.columns.map((c) => c.field).join(", ")}): give the TableContext { encryption: { keys } }`,
        { field: "encryption" },
      );
    }
    const earlier = this.#sealed.get(wire);
    if (earlier !== undefined && earlier.table === table && unchangedSince(earlier, wire))
      return earlier.sealed;
    const keyId = resolver.currentKeyId;
    assertKeyId(keyId, "encryption.keys.currentKeyId");
    const dataKey = Buffer.from(randomView(DATA_KEY_BYTES));
    let wrapped: Uint8Array | PromiseLike<Uint8Array>;
    try {
      // A copy: the resolver must not be able to change the key the values are sealed with.
      wrapped = resolver.wrapKey(keyId, new Uint8Array(dataKey));
    } catch (error) {
      return sealFailed(table, wire, present, wrapFailure(keyId), error);
    }
    if (isPromiseLike(wrapped)) {
      return Promise.resolve(wrapped).then(
        (key) => this.#sealWith(table, wire, model, present, keyId, key, dataKey),
        (error: unknown) => sealFailed(table, wire, present, wrapFailure(keyId), error),
      );
    }
    return this.#sealWith(table, wire, model, present, keyId, wrapped, dataKey);
  }

  /** `#sealRow` once the resolver has wrapped the write's data key (checked here). */
  #sealWith(
    table: string,
    wire: WireEntity,
    model: EncryptedColumns["model"],
    present: EncryptedColumns["columns"],
    keyId: string,
    wrapped: Uint8Array,
    dataKey: Uint8Array,
  ): WireEntity {
    if (
      !(wrapped instanceof Uint8Array) ||
      wrapped.byteLength === 0 ||
      wrapped.byteLength > MAX_WRAPPED_KEY_BYTES
    ) {
      return sealFailed(
        table,
        wire,
        present,
        `wrapKey under key id '${keyId}' must return 1 to ${MAX_WRAPPED_KEY_BYTES} bytes`,
      );
    }
    this.#keys.put(keyId, wrapped, dataKey);
    return this.#sealRow(table, wire, model, present, { keyId, wrapped, dataKey });
  }

  /** Seals the present encrypted columns of one write under its fresh key, and checks the sizes. */
  #sealRow(
    table: string,
    wire: WireEntity,
    model: EncryptedColumns["model"],
    present: EncryptedColumns["columns"],
    key: SealingKey,
  ): WireEntity {
    const sealed: WireEntity = { ...wire };
    const added = addBlindValues(sealed, model, present, this.#blind);
    const sealer = new RowSealer(
      key,
      rowBinding({
        table: this.#types.logicalTable(table),
        partitionKey: wire.partitionKey,
        rowKey: wire.rowKey,
      }),
    );
    for (const column of present) {
      const plaintext = valueToBytes(wire[column.property] as WireValue) as Uint8Array;
      const envelope = sealer.seal(column.property, plaintext);
      if (envelope.byteLength > ServiceLimits.maxBinaryBytes) {
        throw new ValidationError(
          "encrypted-size",
          `${model.name}.${column.field}: the encrypted value is ${envelope.byteLength} bytes; a Binary property holds at most ${ServiceLimits.maxBinaryBytes} (64 KiB), and encryption adds the key header, IV and tag (a string counts 1-3 bytes per character as UTF-8)`,
          { field: column.field },
        );
      }
      sealed[column.property] = envelope;
    }
    const size = entityBytes(sealed);
    if (size > ServiceLimits.maxEntityBytes) {
      throw new ValidationError(
        "entity-size",
        `${model.name}: entity is ${size} bytes once encrypted; the service allows at most ${ServiceLimits.maxEntityBytes} bytes (1 MiB)`,
      );
    }
    this.#sealed.set(wire, {
      table,
      sealed,
      columns: present,
      plain: present.map((c) => wire[c.property]),
      added,
    });
    if (this.#sealed.size > SEALED_WRITES_KEPT)
      this.#sealed.delete(this.#sealed.keys().next().value as WireEntity);
    return sealed;
  }
}

/**
 * Puts the blind values of the present blind-indexed columns beside them (from their plaintext, before
 * it is sealed); resolves how many properties that added. Without a blind-index key it refuses.
 */
function addBlindValues(
  sealed: WireEntity,
  model: EncryptedColumns["model"],
  present: readonly ColumnModel[],
  blind: BlindIndex | undefined,
): number {
  let added = 0;
  for (const column of present) {
    const index = column.blindIndex;
    if (index === undefined) continue;
    if (blind === undefined) throw missingBlindIndexKey(model);
    if (!(index.property in sealed)) added++;
    sealed[index.property] = blind.stored(model, column, sealed[column.property]);
  }
  return added;
}

function wrapFailure(keyId: string): string {
  return `the key resolver could not wrap the data key under key id '${keyId}'`;
}

function sealFailed(
  table: string,
  wire: WireEntity,
  columns: readonly ColumnModel[],
  reason: string,
  cause?: unknown,
): never {
  throw new EncryptionError(
    {
      column: columns.map((c) => c.field).join(", "),
      table,
      partitionKey: wire.partitionKey,
      rowKey: wire.rowKey,
      reason,
    },
    { cause },
  );
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

/** A write sealed once: what was sent, and the plaintext of its sealed columns then. */
interface SealedWrite {
  table: string;
  sealed: WireEntity;
  columns: readonly ColumnModel[];
  plain: readonly (WireValue | undefined)[];
  /** Properties the sealed form has and the entity had not (blind values). */
  added: number;
}

/**
 * True when a wire entity still holds what it held when it was sealed (it may have been edited
 * since): every property the same as sent, or, for a sealed column, as its plaintext then.
 */
function unchangedSince(earlier: SealedWrite, now: WireEntity): boolean {
  const { sealed, columns, plain, added } = earlier;
  let count = 0;
  for (const name in now) {
    count++;
    const value = now[name];
    if (sealed[name] === value) continue;
    const at = columns.findIndex((column) => column.property === name);
    if (at < 0 || plain[at] !== value) return false;
  }
  return count + added === Object.keys(sealed).length;
}

/** The service's size of a wire entity (see entity-size.ts), as the sealed row will be stored. */
function entityBytes(wire: WireEntity): number {
  let size = 4 + (wire.partitionKey.length + wire.rowKey.length) * 2;
  for (const name in wire) {
    if (name === "partitionKey" || name === "rowKey") continue;
    const value = wire[name];
    if (value === undefined || value === null) continue;
    size += 8 + name.length * 2 + valueBytes(value);
  }
  return size;
}

function valueBytes(value: Exclude<WireValue, null>): number {
  switch (typeof value) {
    case "string":
      return propertyValueBytes("String", value.length);
    case "boolean":
      return propertyValueBytes("Boolean", 0);
    case "number":
      return propertyValueBytes(Number.isInteger(value) ? "Int32" : "Double", 0);
    case "bigint":
      return propertyValueBytes("Int64", 0);
    default:
      break;
  }
  if (value instanceof Date) return propertyValueBytes("DateTime", 0);
  if (value instanceof Uint8Array) return propertyValueBytes("Binary", value.byteLength);
  const type: EdmType = value.type;
  const text = String(value.value);
  return propertyValueBytes(type, type === "Binary" ? Math.floor((text.length * 3) / 4) : text.length);
}
