import { DelegatingStore } from "../../store/delegating-store.js";
import type {
  TableStore,
  TransactionAction,
  WireEntity,
  WriteMode,
  WriteResult,
} from "../../store/table-store.js";
import { limitViolation } from "../../util/limit-violation.js";
import type { StoreLimits } from "../../util/store-limits.js";
import { assertWithinLimits } from "./backend-limits.js";

/**
 * Transactions' rows already checked against these limits where they were planned (each row as it
 * is sent: `assertValidTransaction`), keyed by the very array handed to the store. A store in the
 * stack that adds or changes rows (the change feed, sealing) sends a new array, which is checked.
 */
const checkedRows = new WeakMap<readonly TransactionAction[], StoreLimits>();

/**
 * Records that every row of `actions` passed `limits` already, so the store stack does not walk them
 * again (a 100-row transaction's rows were checked twice). Only for rows that are not changed after.
 */
export function markRowsChecked(actions: readonly TransactionAction[], limits: StoreLimits): void {
  checkedRows.set(actions, limits);
}

/**
 * A store whose writes are checked against its backend's limits before they are sent, so every
 * write path (plain, indexed, transactions, intents, copies, summaries) refuses them alike with a
 * `ValidationError`; reads pass straight through. It sits in every context's store stack: the
 * check runs on every row sent, so it allocates nothing and names the place only when a row fails,
 * and a refused write is a rejected promise like any failed request.
 */
export class LimitCheckedStore extends DelegatingStore {
  readonly #limits: StoreLimits;

  constructor(inner: TableStore, limits: StoreLimits) {
    super(inner);
    this.#limits = limits;
  }

  // The writes go to `inner` directly: this store adds no `send` wrapping to pass them through.
  override insert(table: string, entity: WireEntity): Promise<WriteResult> {
    const refused = this.#refusal({ kind: "insert", entity }, table);
    return refused === undefined ? this.inner.insert(table, entity) : Promise.reject(refused);
  }

  override upsert(table: string, entity: WireEntity, mode: WriteMode): Promise<WriteResult> {
    const refused = this.#refusal({ kind: "upsert", entity, mode }, table);
    return refused === undefined ? this.inner.upsert(table, entity, mode) : Promise.reject(refused);
  }

  override update(table: string, entity: WireEntity, mode: WriteMode, ifMatch: string): Promise<WriteResult> {
    const refused = this.#refusal({ kind: "update", entity, mode, ifMatch }, table);
    return refused === undefined ? this.inner.update(table, entity, mode, ifMatch) : Promise.reject(refused);
  }

  override delete(table: string, partitionKey: string, rowKey: string, ifMatch: string): Promise<boolean> {
    const refused = this.#refusal({ kind: "delete", partitionKey, rowKey, ifMatch }, table);
    return refused === undefined
      ? this.inner.delete(table, partitionKey, rowKey, ifMatch)
      : Promise.reject(refused);
  }

  override submitTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]> {
    if (checkedRows.get(actions) === this.#limits)
      return this.inner.submitTransaction(table, partitionKey, actions);
    for (let index = 0; index < actions.length; index++) {
      const refused = this.#refusal(actions[index] as TransactionAction, table, index);
      if (refused !== undefined) return Promise.reject(refused);
    }
    return this.inner.submitTransaction(table, partitionKey, actions);
  }

  /** The `ValidationError` refusing the row, if it breaks a limit (named by table and operation). */
  #refusal(action: TransactionAction, table: string, index?: number): unknown {
    if (limitViolation(this.#limits, action) === undefined) return undefined;
    try {
      assertWithinLimits(
        this.#limits,
        action,
        index === undefined ? `table ${table}` : `table ${table}, transaction operation ${index}`,
      );
    } catch (error) {
      return error;
    }
    return undefined;
  }
}
