import { StoreError } from "../../../errors.js";
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
import { classifyFault } from "../retry-policy.js";
import type { Pacer } from "./pacer.js";
import { pinnedPartition } from "./pinned-partition.js";

/**
 * A store whose entity requests wait for the context's pace (throughput): a batch costs its operations,
 * a point read or single write one entity, a query page the rows it returns (charged once the page
 * arrives; at least one, so an empty page still counts as a request). Table requests (create, delete,
 * list) are not paced. Each attempt of a retried request is paced and charged again, and a throttle
 * answer to any attempt lowers the pace.
 */
export class PacedStore extends DelegatingStore {
  readonly #pacer: Pacer;

  constructor(inner: TableStore, pacer: Pacer) {
    super(inner);
    this.#pacer = pacer;
  }

  override getEntity(
    table: string,
    partitionKey: string,
    rowKey: string,
    select?: readonly string[],
    types?: PropertyTypes,
  ): Promise<StoredEntity | undefined> {
    return this.#paced(table, partitionKey, 1, () =>
      this.inner.getEntity(table, partitionKey, rowKey, select, types),
    );
  }

  override queryPage(table: string, query: StoreQuery): Promise<StorePage> {
    const partitionKey = pinnedPartition(query.filter);
    return this.#paced(
      table,
      partitionKey,
      0,
      () => this.inner.queryPage(table, query),
      (page) => Math.max(1, page.items.length),
    );
  }

  override insert(table: string, entity: WireEntity): Promise<WriteResult> {
    return this.#paced(table, entity.partitionKey, 1, () => this.inner.insert(table, entity));
  }

  override upsert(table: string, entity: WireEntity, mode: WriteMode): Promise<WriteResult> {
    return this.#paced(table, entity.partitionKey, 1, () => this.inner.upsert(table, entity, mode));
  }

  override update(table: string, entity: WireEntity, mode: WriteMode, ifMatch: string): Promise<WriteResult> {
    return this.#paced(table, entity.partitionKey, 1, () => this.inner.update(table, entity, mode, ifMatch));
  }

  override delete(table: string, partitionKey: string, rowKey: string, ifMatch: string): Promise<boolean> {
    return this.#paced(table, partitionKey, 1, () => this.inner.delete(table, partitionKey, rowKey, ifMatch));
  }

  override submitTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]> {
    return this.#paced(table, partitionKey, actions.length, () =>
      this.inner.submitTransaction(table, partitionKey, actions),
    );
  }

  async #paced<T>(
    table: string,
    partitionKey: string | undefined,
    cost: number,
    send: () => Promise<T>,
    chargeAfter?: (result: T) => number,
  ): Promise<T> {
    const ticket = await this.#pacer.admit(table, partitionKey, cost);
    let result: T;
    try {
      result = await send();
    } catch (error) {
      ticket.failed(throttleOf(error));
      throw error;
    }
    ticket.done(chargeAfter ? chargeAfter(result) : 0);
    return result;
  }
}

/**
 * Whether an answer asks the client to slow down, and for what: 503 ServerBusy and 500 OperationTimedOut
 * are Azure Table storage's answers above its targets (the performance checklist names both), 429 the
 * Cosmos DB Table API's. A 503 whose message says "over the account limit" is about the account.
 */
export function throttleOf(error: unknown): "partition" | "account" | undefined {
  if (!(error instanceof StoreError)) return undefined;
  const throttled =
    classifyFault(error) === "throttled" ||
    (error.statusCode === 500 && error.serviceCode === "OperationTimedOut");
  if (!throttled) return undefined;
  return /account limit/i.test(error.message) ? "account" : "partition";
}
