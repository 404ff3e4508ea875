import { DelegatingStore } from "../../store/delegating-store.js";
import type {
  TableStore,
  TransactionAction,
  WireEntity,
  WriteMode,
  WriteResult,
} from "../../store/table-store.js";
import type { StoreLimits } from "../../util/store-limits.js";
import { assertWithinLimits } from "./backend-limits.js";

/**
 * A store whose writes are checked against its backend's limits before they are sent, so every
 * write path (plain, indexed, transactions, intents) refuses them alike with a `ValidationError`.
 * Used only for backends whose limits are stricter than the Table service rules tablekit checks
 * anyway (the Cosmos DB Table API); reads pass straight through.
 */
export class LimitCheckedStore extends DelegatingStore {
  readonly #limits: StoreLimits;

  constructor(inner: TableStore, limits: StoreLimits) {
    super(inner);
    this.#limits = limits;
  }

  override async insert(table: string, entity: WireEntity): Promise<WriteResult> {
    this.#check({ kind: "insert", entity }, table);
    return super.insert(table, entity);
  }

  override async upsert(table: string, entity: WireEntity, mode: WriteMode): Promise<WriteResult> {
    this.#check({ kind: "upsert", entity, mode }, table);
    return super.upsert(table, entity, mode);
  }

  override async update(
    table: string,
    entity: WireEntity,
    mode: WriteMode,
    ifMatch: string,
  ): Promise<WriteResult> {
    this.#check({ kind: "update", entity, mode, ifMatch }, table);
    return super.update(table, entity, mode, ifMatch);
  }

  override async delete(
    table: string,
    partitionKey: string,
    rowKey: string,
    ifMatch: string,
  ): Promise<boolean> {
    this.#check({ kind: "delete", partitionKey, rowKey, ifMatch }, table);
    return super.delete(table, partitionKey, rowKey, ifMatch);
  }

  override async submitTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]> {
    actions.forEach((action, index) => {
      this.#check(action, `${table}, transaction operation ${index}`);
    });
    return super.submitTransaction(table, partitionKey, actions);
  }

  #check(action: TransactionAction, where: string): void {
    assertWithinLimits(this.#limits, action, `table ${where}`);
  }
}
