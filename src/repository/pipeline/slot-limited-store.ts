import { DelegatingStore } from "../../store/delegating-store.js";
import type {
  TableStore,
  TransactionAction,
  WireEntity,
  WriteMode,
  WriteResult,
} from "../../store/table-store.js";
import type { RequestSlots } from "./request-slots.js";

/**
 * A store each of whose requests waits for one of the context's slots (`maxConcurrentRequests`).
 * The cap sits on single store calls, not on operations: a retry's sleep and the read-back after a
 * lost answer happen between calls, so they hold no slot and cannot deadlock waiting for one.
 */
export class SlotLimitedStore extends DelegatingStore {
  readonly #slots: RequestSlots;

  constructor(inner: TableStore, slots: RequestSlots) {
    super(inner);
    this.#slots = slots;
  }

  protected override send<T>(request: () => Promise<T>): Promise<T> {
    return this.#slots.run(request);
  }

  // The writes take a free slot at once and go to `inner` directly (no closure, no async frame);
  // only when every slot is taken do they queue through `send`.
  override insert(table: string, entity: WireEntity): Promise<WriteResult> {
    if (!this.#slots.tryTake()) return super.insert(table, entity);
    let sent: Promise<WriteResult>;
    try {
      sent = this.inner.insert(table, entity);
    } catch (error) {
      sent = Promise.reject(error);
    }
    return this.#slots.releaseWhenSettled(sent);
  }

  override upsert(table: string, entity: WireEntity, mode: WriteMode): Promise<WriteResult> {
    if (!this.#slots.tryTake()) return super.upsert(table, entity, mode);
    let sent: Promise<WriteResult>;
    try {
      sent = this.inner.upsert(table, entity, mode);
    } catch (error) {
      sent = Promise.reject(error);
    }
    return this.#slots.releaseWhenSettled(sent);
  }

  override update(table: string, entity: WireEntity, mode: WriteMode, ifMatch: string): Promise<WriteResult> {
    if (!this.#slots.tryTake()) return super.update(table, entity, mode, ifMatch);
    let sent: Promise<WriteResult>;
    try {
      sent = this.inner.update(table, entity, mode, ifMatch);
    } catch (error) {
      sent = Promise.reject(error);
    }
    return this.#slots.releaseWhenSettled(sent);
  }

  override delete(table: string, partitionKey: string, rowKey: string, ifMatch: string): Promise<boolean> {
    if (!this.#slots.tryTake()) return super.delete(table, partitionKey, rowKey, ifMatch);
    let sent: Promise<boolean>;
    try {
      sent = this.inner.delete(table, partitionKey, rowKey, ifMatch);
    } catch (error) {
      sent = Promise.reject(error);
    }
    return this.#slots.releaseWhenSettled(sent);
  }

  override submitTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]> {
    if (!this.#slots.tryTake()) return super.submitTransaction(table, partitionKey, actions);
    let sent: Promise<WriteResult[]>;
    try {
      sent = this.inner.submitTransaction(table, partitionKey, actions);
    } catch (error) {
      sent = Promise.reject(error);
    }
    return this.#slots.releaseWhenSettled(sent);
  }
}
