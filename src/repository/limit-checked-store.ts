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
import type { StoreLimits } from "../util/store-limits.js";
import { assertWithinLimits } from "./backend-limits.js";

/**
 * A store whose writes are checked against its backend's limits before they are sent, so every
 * write path (plain, indexed, transactions, intents) refuses them alike with a `ValidationError`.
 * Used only for backends whose limits are stricter than the Table service rules tablekit checks
 * anyway (the Cosmos DB Table API); reads pass straight through.
 */
export class LimitCheckedStore implements TableStore {
  readonly #inner: TableStore;
  readonly #limits: StoreLimits;

  constructor(inner: TableStore, limits: StoreLimits) {
    this.#inner = inner;
    this.#limits = limits;
  }

  get name(): string {
    return this.#inner.name;
  }

  get capabilities(): StoreCapabilities {
    return this.#inner.capabilities;
  }

  createTable(table: string): Promise<void> {
    return this.#inner.createTable(table);
  }

  deleteTable(table: string): Promise<void> {
    return this.#inner.deleteTable(table);
  }

  listTables(prefix?: string): Promise<string[]> {
    return this.#inner.listTables(prefix);
  }

  getEntity(
    table: string,
    partitionKey: string,
    rowKey: string,
    select?: readonly string[],
  ): Promise<StoredEntity | undefined> {
    return this.#inner.getEntity(table, partitionKey, rowKey, select);
  }

  queryPage(table: string, query: StoreQuery): Promise<StorePage> {
    return this.#inner.queryPage(table, query);
  }

  async insert(table: string, entity: WireEntity): Promise<WriteResult> {
    this.#check({ kind: "insert", entity }, table);
    return this.#inner.insert(table, entity);
  }

  async upsert(table: string, entity: WireEntity, mode: WriteMode): Promise<WriteResult> {
    this.#check({ kind: "upsert", entity, mode }, table);
    return this.#inner.upsert(table, entity, mode);
  }

  async update(table: string, entity: WireEntity, mode: WriteMode, ifMatch: string): Promise<WriteResult> {
    this.#check({ kind: "update", entity, mode, ifMatch }, table);
    return this.#inner.update(table, entity, mode, ifMatch);
  }

  async delete(table: string, partitionKey: string, rowKey: string, ifMatch: string): Promise<boolean> {
    this.#check({ kind: "delete", partitionKey, rowKey, ifMatch }, table);
    return this.#inner.delete(table, partitionKey, rowKey, ifMatch);
  }

  async submitTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]> {
    actions.forEach((action, index) => {
      this.#check(action, `${table}, transaction operation ${index}`);
    });
    return this.#inner.submitTransaction(table, partitionKey, actions);
  }

  #check(action: TransactionAction, where: string): void {
    assertWithinLimits(this.#limits, action, `table ${where}`);
  }
}
