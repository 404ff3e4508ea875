import { EncryptionError, ValidationError } from "../../errors.js";
import { DelegatingStore } from "../../store/delegating-store.js";
import type {
  PropertyTypes,
  StoredEntity,
  StorePage,
  StoreQuery,
  TableStore,
  TransactionAction,
  WireEntity,
  WireValue,
  WriteMode,
  WriteResult,
} from "../../store/table-store.js";
import { propertyValueBytes } from "../../util/entity-size.js";
import { ServiceLimits } from "../../util/service-limits.js";
import type { EdmType } from "../../wire/wire-entity.js";
import { DataKeyCache } from "./data-key-cache.js";
import type { EncryptedColumns, EncryptedRowTypes } from "./encrypted-row-types.js";
import {
  DATA_KEY_BYTES,
  MAX_WRAPPED_KEY_BYTES,
  openAt,
  parseEnvelope,
  rowBinding,
  type SealingKey,
  sealAt,
} from "./envelope.js";
import { assertKeyId, type KeyResolver } from "./key-resolver.js";
import { randomView } from "./random-pool.js";
import { bytesToValue, valueToBytes } from "./value-bytes.js";

/** Unwrapped data keys kept per context (a few KiB): enough for the rows of a page read twice. */
const DATA_KEY_CACHE_SIZE = 1024;
/** Rows of one page opened at once (each may ask the key resolver to unwrap). */
const OPEN_CONCURRENCY = 16;

/**
 * Client-side encryption as a store in front of the context's store: every write (plain, indexed,
 * bulk, transactions, `db.dynamic`, repair) seals the encrypted columns of the rows it sends, and
 * every read opens them, so nothing above it sees ciphertext and no write path can send plaintext.
 * Each entity write gets a fresh data key, wrapped by the resolver's current key; see envelope.ts for
 * the stored format. Without a resolver, writes of rows with encrypted columns are refused
 * (`ValidationError`, nothing sent) and reads return the ciphertext as it is stored.
 */
export class EncryptingStore extends DelegatingStore {
  readonly #resolver: KeyResolver | undefined;
  readonly #types: EncryptedRowTypes;
  readonly #keys = new DataKeyCache(DATA_KEY_CACHE_SIZE);
  /** The sealed form of a wire entity already sent once: a retry resends the same bytes. */
  readonly #sealed = new WeakMap<WireEntity, { table: string; plain: WireEntity; sealed: WireEntity }>();
  /** The key ids each opened row's values were under (for `db.reencrypt`). */
  readonly #keyIds = new WeakMap<StoredEntity, ReadonlySet<string>>();

  constructor(inner: TableStore, types: EncryptedRowTypes, resolver: KeyResolver | undefined) {
    super(inner);
    this.#types = types;
    this.#resolver = resolver;
  }

  /** The key ids of the encrypted values of a row this store opened (empty for rows with none). */
  keyIdsOf(row: StoredEntity): ReadonlySet<string> {
    return this.#keyIds.get(row) ?? new Set();
  }

  /** The key new writes are sealed under; `undefined` without a resolver. */
  get currentKeyId(): string | undefined {
    return this.#resolver?.currentKeyId;
  }

  /**
   * The wire entity with its encrypted columns sealed for its row in `table`, for copies of a write
   * kept elsewhere before it is applied (the eventual-transaction log): plaintext is never at rest.
   * Without a resolver, a row with encrypted columns is a `ValidationError` (nothing is sent).
   */
  sealCopy(table: string, wire: WireEntity): Promise<WireEntity> {
    return this.#seal(table, wire);
  }

  /** What `sealCopy` sealed, in clear again (the write through this store seals it afresh). */
  async openCopy(table: string, wire: WireEntity): Promise<WireEntity> {
    const stored = { ...wire, etag: "" } as StoredEntity;
    if (!this.#opens(table, stored)) return wire;
    const { etag: _etag, ...opened } = await this.#open(table, stored);
    return opened as WireEntity;
  }

  /** The encrypted columns of a row of this table, if any (see `EncryptedRowTypes`). */
  encryptedColumnsOf(table: string, row: WireEntity): EncryptedColumns | undefined {
    return this.#types.lookup(table, row);
  }

  override async getEntity(
    table: string,
    partitionKey: string,
    rowKey: string,
    select?: readonly string[],
    types?: PropertyTypes,
  ): Promise<StoredEntity | undefined> {
    const row = await super.getEntity(table, partitionKey, rowKey, select, types);
    return row === undefined || !this.#opens(table, row) ? row : this.#open(table, row);
  }

  override async queryPage(table: string, query: StoreQuery): Promise<StorePage> {
    const page = await super.queryPage(table, query);
    const items = page.items;
    // Most pages hold no encrypted rows: return them untouched, without a promise per row.
    if (!items.some((row) => this.#opens(table, row))) return page;
    const opened: StoredEntity[] = new Array(items.length);
    for (let start = 0; start < items.length; start += OPEN_CONCURRENCY) {
      const chunk = items.slice(start, start + OPEN_CONCURRENCY);
      const done = await Promise.all(chunk.map((row) => this.#open(table, row)));
      for (let i = 0; i < done.length; i++) opened[start + i] = done[i] as StoredEntity;
    }
    return page.continuation ? { items: opened, continuation: page.continuation } : { items: opened };
  }

  override async insert(table: string, entity: WireEntity): Promise<WriteResult> {
    return super.insert(table, await this.#seal(table, entity));
  }

  override async upsert(table: string, entity: WireEntity, mode: WriteMode): Promise<WriteResult> {
    return super.upsert(table, await this.#seal(table, entity), mode);
  }

  override async update(
    table: string,
    entity: WireEntity,
    mode: WriteMode,
    ifMatch: string,
  ): Promise<WriteResult> {
    return super.update(table, await this.#seal(table, entity), mode, ifMatch);
  }

  override async submitTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]> {
    const sealed = await Promise.all(
      actions.map(async (action): Promise<TransactionAction> => {
        if (action.kind === "delete") return action;
        const entity = await this.#seal(table, action.entity);
        return entity === action.entity ? action : { ...action, entity };
      }),
    );
    return super.submitTransaction(table, partitionKey, sealed);
  }

  /** Whether reading this row decrypts something (a resolver, and a model with encrypted columns). */
  #opens(table: string, row: StoredEntity): boolean {
    return this.#resolver !== undefined && this.#types.lookup(table, row) !== undefined;
  }

  async #seal(table: string, wire: WireEntity): Promise<WireEntity> {
    const encrypted = this.#types.lookup(table, wire);
    if (encrypted === undefined) return wire;
    const present = encrypted.columns.filter(
      (c) => wire[c.property] !== undefined && wire[c.property] !== null,
    );
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
    if (earlier !== undefined && earlier.table === table && sameProperties(earlier.plain, wire))
      return earlier.sealed;
    const key = await this.#freshKey(resolver, table, wire, present);
    const sealed: WireEntity = { ...wire };
    const row = rowBinding({
      table: this.#types.logicalTable(table),
      partitionKey: wire.partitionKey,
      rowKey: wire.rowKey,
    });
    for (const column of present) {
      const plaintext = valueToBytes(wire[column.property] as WireValue) as Uint8Array;
      const envelope = sealAt(key, row, column.property, plaintext);
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
    this.#sealed.set(wire, { table, plain: { ...wire }, sealed });
    return sealed;
  }

  /** A fresh data key for one entity write, wrapped by the resolver's current key. */
  async #freshKey(
    resolver: KeyResolver,
    table: string,
    wire: WireEntity,
    columns: EncryptedColumns["columns"],
  ): Promise<SealingKey> {
    const keyId = resolver.currentKeyId;
    assertKeyId(keyId, "encryption.keys.currentKeyId");
    const dataKey = Buffer.from(randomView(DATA_KEY_BYTES));
    const fail = (reason: string, cause?: unknown): never => {
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
    };
    let wrapped: Uint8Array;
    try {
      // A copy: the resolver must not be able to change the key the values are sealed with.
      wrapped = await resolver.wrapKey(keyId, new Uint8Array(dataKey));
    } catch (error) {
      return fail(`the key resolver could not wrap the data key under key id '${keyId}'`, error);
    }
    if (
      !(wrapped instanceof Uint8Array) ||
      wrapped.byteLength === 0 ||
      wrapped.byteLength > MAX_WRAPPED_KEY_BYTES
    ) {
      return fail(`wrapKey under key id '${keyId}' must return 1 to ${MAX_WRAPPED_KEY_BYTES} bytes`);
    }
    this.#keys.put(keyId, wrapped, dataKey);
    return { keyId, wrapped, dataKey };
  }

  async #open(table: string, row: StoredEntity): Promise<StoredEntity> {
    const resolver = this.#resolver;
    if (resolver === undefined) return row;
    const encrypted = this.#types.lookup(table, row);
    if (encrypted === undefined) return row;
    let opened: StoredEntity | undefined;
    let binding: Buffer | undefined;
    const keyIds = new Set<string>();
    // The columns of one write share their wrapped key: unwrap (or look up) once per row.
    let last: { keyId: string; wrapped: Uint8Array; dataKey: Uint8Array } | undefined;
    for (const column of encrypted.columns) {
      const stored = row[column.property];
      if (stored === undefined || stored === null) continue;
      const fail = (reason: string, cause?: unknown): never => {
        throw new EncryptionError(
          { column: column.field, table, partitionKey: row.partitionKey, rowKey: row.rowKey, reason },
          { cause },
        );
      };
      const bytes = binaryOf(stored);
      if (bytes === undefined) return fail("the stored value is not encrypted (expected a Binary envelope)");
      const envelope = parseEnvelope(bytes);
      if (envelope === undefined)
        return fail("the stored value is not an encryption envelope of a known version");
      const { keyId, wrapped } = envelope;
      let dataKey: Uint8Array;
      if (last !== undefined && last.keyId === keyId && Buffer.compare(last.wrapped, wrapped) === 0) {
        dataKey = last.dataKey;
      } else {
        try {
          dataKey = await this.#keys.get(keyId, wrapped, () => unwrap(resolver, keyId, wrapped));
        } catch (error) {
          return fail(
            `the data key under key id '${keyId}' could not be unwrapped (unknown key id, or the wrong key)`,
            error,
          );
        }
        last = { keyId, wrapped, dataKey };
      }
      binding ??= rowBinding({
        table: this.#types.logicalTable(table),
        partitionKey: row.partitionKey,
        rowKey: row.rowKey,
      });
      const plaintext = openAt(envelope, dataKey, binding, column.property);
      if (plaintext === undefined) {
        return fail(
          "the value does not verify under its key and place (tampered with, or copied from another row, column or table)",
        );
      }
      let value: WireValue;
      try {
        value = bytesToValue(plaintext);
      } catch (error) {
        return fail("the decrypted value has an unknown type", error);
      }
      opened ??= { ...row };
      opened[column.property] = value;
      keyIds.add(keyId);
    }
    if (opened === undefined) return row;
    this.#keyIds.set(opened, keyIds);
    return opened;
  }
}

async function unwrap(resolver: KeyResolver, keyId: string, wrapped: Uint8Array): Promise<Uint8Array> {
  const key = await resolver.unwrapKey(keyId, wrapped);
  if (!(key instanceof Uint8Array) || key.byteLength !== DATA_KEY_BYTES)
    throw new ValidationError("data-key", `unwrapKey must return ${DATA_KEY_BYTES} bytes`);
  return key;
}

/** True when a wire entity still holds what it held when it was sealed (it may have been edited since). */
function sameProperties(before: WireEntity, now: WireEntity): boolean {
  let count = 0;
  for (const name in now) {
    if (before[name] !== now[name]) return false;
    count++;
  }
  return count === Object.keys(before).length;
}

/** The bytes of a stored Binary value in any of the SDK's shapes. */
function binaryOf(value: WireValue): Uint8Array | undefined {
  if (value instanceof Uint8Array) return value;
  if (typeof value === "object" && value !== null && !(value instanceof Date) && value.type === "Binary")
    return Buffer.from(String(value.value), "base64");
  return undefined;
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
