import { DelegatingStore } from "../../store/delegating-store.js";
import type { TableStore } from "../../store/table-store.js";
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
}
