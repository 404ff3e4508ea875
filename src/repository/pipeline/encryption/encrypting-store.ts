import { DelegatingStore } from "../../../store/delegating-store.js";
import type {
  PropertyTypes,
  StoredEntity,
  StorePage,
  StoreQuery,
  TableStore,
  TransactionAction,
  WireEntity,
  WriteMode,
  WriteResult,
} from "../../../store/table-store.js";
import type { BlindIndex } from "./blind-index.js";
import { BlobSealer } from "./blob-sealing.js";
import { DataKeyCache } from "./data-key-cache.js";
import type { EncryptedColumns, EncryptedRowTypes } from "./encrypted-row-types.js";
import { EntityOpener } from "./entity-opener.js";
import { EntitySealer } from "./entity-sealer.js";
import type { KeyResolver } from "./key-resolver.js";

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
  /** Unwrapped data keys, shared by sealing and opening: a row read after its write finds its key. */
  readonly #keys = new DataKeyCache(DATA_KEY_CACHE_SIZE);
  readonly #sealer: EntitySealer;
  readonly #opener: EntityOpener;
  #blobSealer: BlobSealer | undefined;

  /** The blind values of blind-indexed columns (`undefined` without `encryption.blindIndexKey`). */
  readonly blindIndex: BlindIndex | undefined;

  constructor(
    inner: TableStore,
    types: EncryptedRowTypes,
    resolver: KeyResolver | undefined,
    blindIndex?: BlindIndex,
  ) {
    super(inner);
    this.#types = types;
    this.#resolver = resolver;
    this.blindIndex = blindIndex;
    this.#sealer = new EntitySealer(types, resolver, this.#keys, blindIndex);
    this.#opener = new EntityOpener(types, resolver, this.#keys);
  }

  /** The key ids of the encrypted values of a row this store opened (empty for rows with none). */
  keyIdsOf(row: StoredEntity): ReadonlySet<string> {
    return this.#opener.keyIdsOf(row);
  }

  /** Seals and opens the blobs of encrypted large columns; `undefined` without a resolver. */
  get blobSealer(): BlobSealer | undefined {
    const resolver = this.#resolver;
    if (resolver === undefined) return undefined;
    this.#blobSealer ??= new BlobSealer(resolver, this.#keys, (table) => this.#types.logicalTable(table));
    return this.#blobSealer;
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
    return this.#sealer.seal(table, wire);
  }

  /** What `sealCopy` sealed, in clear again (the write through this store seals it afresh). */
  async openCopy(table: string, wire: WireEntity): Promise<WireEntity> {
    const stored = { ...wire, etag: "" } as StoredEntity;
    if (!this.#opener.opens(table, stored)) return wire;
    const { etag: _etag, ...opened } = await this.#opener.open(table, stored);
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
    if (row === undefined) return row;
    if (row.partitionKey !== undefined && row.rowKey !== undefined) return this.#opener.open(table, row);
    // A $select without the keys returns none (table-store.ts); the values are bound to them all the same.
    const opened: Partial<StoredEntity> = await this.#opener.open(table, { ...row, partitionKey, rowKey });
    if (row.partitionKey === undefined) delete opened.partitionKey;
    if (row.rowKey === undefined) delete opened.rowKey;
    return opened as StoredEntity;
  }

  override async queryPage(table: string, query: StoreQuery): Promise<StorePage> {
    const page = await super.queryPage(table, query);
    const items = page.items;
    // Most pages hold no encrypted rows: return them untouched.
    if (!items.some((row) => this.#opener.opens(table, row))) return page;
    const opened: StoredEntity[] = new Array(items.length);
    for (let start = 0; start < items.length; start += OPEN_CONCURRENCY) {
      const end = Math.min(start + OPEN_CONCURRENCY, items.length);
      let waiting = false;
      for (let i = start; i < end; i++) {
        const done = this.#opener.open(table, items[i] as StoredEntity);
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

  // Writes go to `inner` once sealed (this store adds no `send` wrapping); a row with nothing to seal
  // goes on as it is, with no extra promise, and a refusal is a rejected promise.
  override insert(table: string, entity: WireEntity): Promise<WriteResult> {
    const sealed = this.#sealNow(table, entity);
    return sealed instanceof Promise
      ? sealed.then((wire) => this.inner.insert(table, wire))
      : this.inner.insert(table, sealed);
  }

  override upsert(table: string, entity: WireEntity, mode: WriteMode): Promise<WriteResult> {
    const sealed = this.#sealNow(table, entity);
    return sealed instanceof Promise
      ? sealed.then((wire) => this.inner.upsert(table, wire, mode))
      : this.inner.upsert(table, sealed, mode);
  }

  override update(table: string, entity: WireEntity, mode: WriteMode, ifMatch: string): Promise<WriteResult> {
    const sealed = this.#sealNow(table, entity);
    return sealed instanceof Promise
      ? sealed.then((wire) => this.inner.update(table, wire, mode, ifMatch))
      : this.inner.update(table, sealed, mode, ifMatch);
  }

  override submitTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]> {
    // Most transactions seal nothing: then the actions go on as given, with no copy.
    let sealed: Array<TransactionAction | Promise<TransactionAction>> | undefined;
    let waiting = false;
    try {
      for (let index = 0; index < actions.length; index++) {
        const action = actions[index] as TransactionAction;
        if (action.kind === "delete") {
          if (sealed !== undefined) sealed[index] = action;
          continue;
        }
        const entity = this.#sealer.seal(table, action.entity);
        if (entity === action.entity) {
          if (sealed !== undefined) sealed[index] = action;
          continue;
        }
        sealed ??= actions.slice(0, index);
        if (entity instanceof Promise) {
          waiting = true;
          sealed[index] = entity.then((e) => (e === action.entity ? action : { ...action, entity: e }));
        } else sealed[index] = { ...action, entity };
      }
    } catch (error) {
      return Promise.reject(error);
    }
    if (sealed === undefined) return this.inner.submitTransaction(table, partitionKey, actions);
    if (!waiting) return this.inner.submitTransaction(table, partitionKey, sealed as TransactionAction[]);
    return Promise.all(sealed).then((all) => this.inner.submitTransaction(table, partitionKey, all));
  }

  /**
   * The row sealed (see the sealer): at once unless a resolver is still unwrapping a key, so a row
   * with nothing to seal costs no closure and no promise; a refusal is a rejected promise.
   */
  #sealNow(table: string, wire: WireEntity): WireEntity | Promise<WireEntity> {
    try {
      return this.#sealer.seal(table, wire);
    } catch (error) {
      return Promise.reject(error);
    }
  }
}
