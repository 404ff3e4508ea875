import { EncryptionError, ValidationError } from "../../../errors.js";
import type { ColumnModel } from "../../../schema/entity-model.js";
import { DelegatingStore } from "../../../store/delegating-store.js";
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
} from "../../../store/table-store.js";
import { propertyValueBytes } from "../../../util/entity-size.js";
import { ServiceLimits } from "../../../util/service-limits.js";
import type { EdmType } from "../../../wire/wire-entity.js";
import { BlobSealer } from "./blob-sealing.js";
import { DataKeyCache } from "./data-key-cache.js";
import type { EncryptedColumns, EncryptedRowTypes } from "./encrypted-row-types.js";
import {
  DATA_KEY_BYTES,
  MAX_WRAPPED_KEY_BYTES,
  openAt,
  type ParsedEnvelope,
  parseEnvelope,
  RowSealer,
  rowBinding,
  type SealingKey,
} from "./envelope.js";
import { assertKeyId, type KeyResolver } from "./key-resolver.js";
import { randomView } from "./random-pool.js";
import { bytesToValue, valueToBytes } from "./value-bytes.js";

/** Unwrapped data keys kept per context (a few KiB): enough for the rows of a page read twice. */
const DATA_KEY_CACHE_SIZE = 1024;
/**
 * Writes whose sealed form is kept for a retry (the most recent ones): enough for the requests in
 * flight. A retry of an older one is sealed afresh, which is as correct (a new data key, the same
 * plaintext; read-backs compare plaintext), only one more wrap. Not a WeakMap: one ephemeron per
 * write made every young-generation GC slower (about a fifth of an encrypted round trip).
 */
const SEALED_WRITES_KEPT = 256;
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
  /** The sealed form of a wire entity sent recently: a retry resends the same bytes (no second wrap). */
  readonly #sealed = new Map<WireEntity, SealedWrite>();
  /** The key ids each opened row's values were under (for `db.reencrypt`). */
  readonly #keyIds = new WeakMap<StoredEntity, ReadonlySet<string>>();
  #blobSealer: BlobSealer | undefined;

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
  async sealCopy(table: string, wire: WireEntity): Promise<WireEntity> {
    return this.#seal(table, wire);
  }

  /** What `sealCopy` sealed, in clear again (the write through this store seals it afresh). */
  async openCopy(table: string, wire: WireEntity): Promise<WireEntity> {
    const stored = { ...wire, etag: "" } as StoredEntity;
    if (!this.#opens(table, stored)) return wire;
    const { etag: _etag, ...opened } = await this.#open(table, stored);
    return opened as WireEntity;
  }

  /** Seals and opens the blobs of encrypted large columns; `undefined` without a resolver. */
  get blobSealer(): BlobSealer | undefined {
    const resolver = this.#resolver;
    if (resolver === undefined) return undefined;
    this.#blobSealer ??= new BlobSealer(resolver, this.#keys, (table) => this.#types.logicalTable(table));
    return this.#blobSealer;
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
    return row === undefined ? row : this.#open(table, row);
  }

  override async queryPage(table: string, query: StoreQuery): Promise<StorePage> {
    const page = await super.queryPage(table, query);
    const items = page.items;
    // Most pages hold no encrypted rows: return them untouched.
    if (!items.some((row) => this.#opens(table, row))) return page;
    const opened: StoredEntity[] = new Array(items.length);
    for (let start = 0; start < items.length; start += OPEN_CONCURRENCY) {
      const end = Math.min(start + OPEN_CONCURRENCY, items.length);
      let waiting = false;
      for (let i = start; i < end; i++) {
        const done = this.#open(table, items[i] as StoredEntity);
        if (done instanceof Promise) waiting = true;
        opened[i] = done as StoredEntity;
      }
      // Only rows whose keys a resolver is still unwrapping wait; at most a chunk of them at once.
      if (waiting) {
        const done = await Promise.all(opened.slice(start, end));
        for (let i = start; i < end; i++) opened[i] = done[i - start] as StoredEntity;
      }
    }
    return page.continuation ? { items: opened, continuation: page.continuation } : { items: opened };
  }

  override async insert(table: string, entity: WireEntity): Promise<WriteResult> {
    const sealed = this.#seal(table, entity);
    return super.insert(table, sealed instanceof Promise ? await sealed : sealed);
  }

  override async upsert(table: string, entity: WireEntity, mode: WriteMode): Promise<WriteResult> {
    const sealed = this.#seal(table, entity);
    return super.upsert(table, sealed instanceof Promise ? await sealed : sealed, mode);
  }

  override async update(
    table: string,
    entity: WireEntity,
    mode: WriteMode,
    ifMatch: string,
  ): Promise<WriteResult> {
    const sealed = this.#seal(table, entity);
    return super.update(table, sealed instanceof Promise ? await sealed : sealed, mode, ifMatch);
  }

  override async submitTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]> {
    let waiting = false;
    const sealed = actions.map((action): TransactionAction | Promise<TransactionAction> => {
      if (action.kind === "delete") return action;
      const entity = this.#seal(table, action.entity);
      if (entity instanceof Promise) {
        waiting = true;
        return entity.then((e) => (e === action.entity ? action : { ...action, entity: e }));
      }
      return entity === action.entity ? action : { ...action, entity };
    });
    return super.submitTransaction(
      table,
      partitionKey,
      waiting ? await Promise.all(sealed) : (sealed as TransactionAction[]),
    );
  }

  /** Whether reading this row decrypts something (a resolver, and a model with encrypted columns). */
  #opens(table: string, row: StoredEntity): boolean {
    return this.#resolver !== undefined && this.#types.lookup(table, row) !== undefined;
  }

  /**
   * The row as it is sent: its encrypted columns sealed. Synchronous when the resolver wraps
   * synchronously (local keys): no promise, no extra turn of the event loop per write.
   */
  #seal(table: string, wire: WireEntity): WireEntity | Promise<WireEntity> {
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
    this.#sealed.set(wire, { table, sealed, columns: present, plain: present.map((c) => wire[c.property]) });
    if (this.#sealed.size > SEALED_WRITES_KEPT)
      this.#sealed.delete(this.#sealed.keys().next().value as WireEntity);
    return sealed;
  }

  /**
   * The row with its encrypted columns in clear. Synchronous when every data key is cached or the
   * resolver unwraps synchronously; otherwise the unwraps run first (the columns of a write share
   * one), then the values are opened.
   */
  #open(table: string, row: StoredEntity): StoredEntity | Promise<StoredEntity> {
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

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

function unwrapFailure(keyId: string): string {
  return `the data key under key id '${keyId}' could not be unwrapped (unknown key id, or the wrong key)`;
}

/** A write sealed once: what was sent, and the plaintext of its sealed columns then. */
interface SealedWrite {
  table: string;
  sealed: WireEntity;
  columns: readonly ColumnModel[];
  plain: readonly (WireValue | undefined)[];
}

/**
 * True when a wire entity still holds what it held when it was sealed (it may have been edited
 * since): every property the same as sent, or, for a sealed column, as its plaintext then.
 */
function unchangedSince(earlier: SealedWrite, now: WireEntity): boolean {
  const { sealed, columns, plain } = earlier;
  let count = 0;
  for (const name in now) {
    count++;
    const value = now[name];
    if (sealed[name] === value) continue;
    const at = columns.findIndex((column) => column.property === name);
    if (at < 0 || plain[at] !== value) return false;
  }
  return count === Object.keys(sealed).length;
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
