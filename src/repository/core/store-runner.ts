import { ValidationError } from "../../errors.js";
import type { TableStore } from "../../store/table-store.js";
import type { StateScope } from "../../util/scoped-state.js";
import type { StoreLimits } from "../../util/store-limits.js";
import { limitsOf } from "../pipeline/backend-limits.js";
import { EncryptedRowTypes } from "../pipeline/encryption/encrypted-row-types.js";
import { EncryptingStore } from "../pipeline/encryption/encrypting-store.js";
import type { KeyResolver } from "../pipeline/encryption/key-resolver.js";
import { LimitCheckedStore } from "../pipeline/limit-checked-store.js";
import { PacedStore } from "../pipeline/pacing/paced-store.js";
import type { Pacer } from "../pipeline/pacing/pacer.js";
import { PeriodTableNames, PeriodTableStore } from "../pipeline/period-table-store.js";
import { RequestSlots } from "../pipeline/request-slots.js";
import type { AttemptContext, RetryPolicy } from "../pipeline/retry-policy.js";
import { SlotLimitedStore } from "../pipeline/slot-limited-store.js";
import type { TableKitEvent, TableKitEventListener } from "./table-kit-event.js";

/** One scope token per (store, prefix): contexts on the same tables share what they know of an instance. */
const scopes = new WeakMap<TableStore, Map<string, StateScope>>();

function scopeOf(store: TableStore, prefix: string): StateScope {
  const byPrefix = scopes.get(store) ?? new Map<string, StateScope>();
  scopes.set(store, byPrefix);
  const scope = byPrefix.get(prefix) ?? Object.freeze({ prefix });
  byPrefix.set(prefix, scope);
  return scope;
}

/** Sends store requests through the retry policy and reports them to the context's listener. */
export class StoreRunner {
  readonly store: TableStore;
  readonly retry: RetryPolicy;
  /** The backend's limits (Azure Table storage's unless the store declares its own). */
  readonly limits: StoreLimits;
  /** The store requests go to: checked against stricter backend limits first (see limit-checked-store.ts). */
  readonly #target: TableStore;
  readonly #listener: TableKitEventListener | undefined;
  readonly #tablePrefix: string;
  /** Where tracked ETags and copies of instances read or written through this runner are valid. */
  readonly scope: StateScope;
  /** The period tables (`Logs{at:month}`) of the entities used: their first write creates them. */
  readonly periodTables: PeriodTableNames;
  /** Seals and opens encrypted columns on every request (see encrypting-store.ts). */
  readonly encryption: EncryptingStore;
  /** Which rows hold encrypted columns; the context records the models it uses here. */
  readonly encryptedTypes: EncryptedRowTypes;
  /** The clock intents are dated and aged by, in milliseconds (the context's, when it was given one). */
  now: () => number = Date.now;

  constructor(
    store: TableStore,
    retry: RetryPolicy,
    listener: TableKitEventListener | undefined,
    tablePrefix = "",
    maxConcurrentRequests?: number,
    pacer?: Pacer,
    keys?: KeyResolver,
    instrument?: (store: TableStore) => TableStore,
  ) {
    this.store = store;
    this.retry = retry;
    this.limits = limitsOf(store);
    // Innermost: a request's span (telemetry) times the service call, not its wait for a slot or pace.
    const sent = instrument === undefined ? store : instrument(store);
    // Every row is checked as sent (copies, summaries and intents too), on every backend.
    const checked = new LimitCheckedStore(sent, this.limits);
    // Every request reaches the store through #target, so a cap there covers them all.
    const slotted =
      maxConcurrentRequests === undefined
        ? checked
        : new SlotLimitedStore(checked, new RequestSlots(maxConcurrentRequests));
    // Pacing comes first: a request waiting for its pace must not hold one of the concurrency slots.
    const paced = pacer === undefined ? slotted : new PacedStore(slotted, pacer);
    // Limits see the sealed rows, and sealing (a key service call) holds no request slot.
    this.encryptedTypes = new EncryptedRowTypes(tablePrefix);
    this.encryption = new EncryptingStore(paced, this.encryptedTypes, keys);
    // Outermost: a period table's creation and the write sent again (already sealed) are each paced and slotted.
    this.periodTables = new PeriodTableNames(tablePrefix);
    this.#target = new PeriodTableStore(this.encryption, this.periodTables);
    this.#listener = listener;
    this.#tablePrefix = tablePrefix;
    this.scope = scopeOf(store, tablePrefix);
  }

  /** The physical name of an entity's table. */
  tableName(table: string): string {
    const name = this.#tablePrefix + table;
    if (name.length > 63) {
      throw new ValidationError(
        "table-name",
        `table name '${name}' (prefix '${this.#tablePrefix}' + '${table}') is longer than the service's 63 characters`,
      );
    }
    return name;
  }

  /** Runs one store request, retrying transient faults. */
  run<T>(
    operation: string,
    table: string,
    request: (store: TableStore, attempt: AttemptContext) => Promise<T>,
  ): Promise<T> {
    const listener = this.#listener;
    const target = this.#target;
    if (!listener) return this.retry.run((attempt) => request(target, attempt));
    return this.retry.run(
      (attempt) => {
        this.emit({ type: "request", operation, table, attempt: attempt.attempt });
        return request(target, attempt);
      },
      ({ attempt, delayMs, error }) =>
        this.emit({ type: "retry", operation, table, attempt, delayMs, cause: error }),
    );
  }

  /** Reports an event; a failing listener never breaks the operation. */
  emit(event: TableKitEvent): void {
    if (!this.#listener) return;
    try {
      this.#listener(event);
    } catch {
      // Observability must not change behaviour.
    }
  }
}
