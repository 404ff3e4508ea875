import type { TableStore } from "../../src/store/table-store.js";
import { STORE_METHODS, type StoreMethod, type StoreRequest, StoreWrapper } from "./store-wrapper.js";

export type { StoreMethod } from "./store-wrapper.js";

/** One recorded call: which method, on which table. */
export interface StoreCall {
  method: StoreMethod;
  table: string;
}

/** Wraps a `TableStore` and counts every call per method, so tests can assert how many requests were made. */
export class CountingStore extends StoreWrapper {
  /** Calls per method. */
  readonly calls: Record<StoreMethod, number> = emptyCounts();
  /** Every call in order. */
  readonly log: StoreCall[] = [];
  /** The most entities any `queryPage` call returned. */
  largestPage = 0;

  constructor(inner: TableStore) {
    super(inner);
  }

  /** Total calls of every method since creation or the last `reset()`. */
  get requests(): number {
    return this.log.length;
  }

  /** Forgets every recorded call. */
  reset(): void {
    this.log.length = 0;
    this.largestPage = 0;
    for (const method of STORE_METHODS) this.calls[method] = 0;
  }

  protected override async around<T>({ method, table }: StoreRequest, send: () => Promise<T>): Promise<T> {
    this.calls[method] += 1;
    this.log.push({ method, table });
    const result = await send();
    if (method === "queryPage") {
      this.largestPage = Math.max(this.largestPage, (result as { items: unknown[] }).items.length);
    }
    return result;
  }
}

function emptyCounts(): Record<StoreMethod, number> {
  return Object.fromEntries(STORE_METHODS.map((method) => [method, 0])) as Record<StoreMethod, number>;
}
