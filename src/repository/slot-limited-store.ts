import type {
  StoreCapabilities,
  StoredEntity,
  StorePage,
  StoreQuery,
  TableStore,
  TransactionAction,
  WireEntity,
  WriteMode,
  WriteResult,
} from "../store/table-store.js";
import type { RequestSlots } from "./request-slots.js";

/**
 * A store each of whose requests waits for one of the context's slots (`maxConcurrentRequests`).
 * The cap sits on single store calls, not on operations: a retry's sleep and the read-back after a
 * lost answer happen between calls, so they hold no slot and cannot deadlock waiting for one.
 */
export class SlotLimitedStore implements TableStore {
  readonly #inner: TableStore;
  readonly #slots: RequestSlots;

  constructor(inner: TableStore, slots: RequestSlots) {
    this.#inner = inner;
    this.#slots = slots;
  }

  get name(): string {
    return this.#inner.name;
  }

  get capabilities(): StoreCapabilities {
    return this.#inner.capabilities;
  }

  createTable(table: string): Promise<void> {
    return this.#slots.run(() => this.#inner.createTable(table));
  }

  deleteTable(table: string): Promise<void> {
    return this.#slots.run(() => this.#inner.deleteTable(table));
  }

  getEntity(
    table: string,
    partitionKey: string,
    rowKey: string,
    select?: readonly string[],
  ): Promise<StoredEntity | undefined> {
    return this.#slots.run(() => this.#inner.getEntity(table, partitionKey, rowKey, select));
  }

  queryPage(table: string, query: StoreQuery): Promise<StorePage> {
    return this.#slots.run(() => this.#inner.queryPage(table, query));
  }

  insert(table: string, entity: WireEntity): Promise<WriteResult> {
    return this.#slots.run(() => this.#inner.insert(table, entity));
  }

  upsert(table: string, entity: WireEntity, mode: WriteMode): Promise<WriteResult> {
    return this.#slots.run(() => this.#inner.upsert(table, entity, mode));
  }

  update(table: string, entity: WireEntity, mode: WriteMode, ifMatch: string): Promise<WriteResult> {
    return this.#slots.run(() => this.#inner.update(table, entity, mode, ifMatch));
  }

  delete(table: string, partitionKey: string, rowKey: string, ifMatch: string): Promise<boolean> {
    return this.#slots.run(() => this.#inner.delete(table, partitionKey, rowKey, ifMatch));
  }

  submitTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]> {
    return this.#slots.run(() => this.#inner.submitTransaction(table, partitionKey, actions));
  }
}
