import { ValidationError } from "../errors.js";
import type { TableStore } from "../store/table-store.js";
import type { AttemptContext, RetryPolicy } from "./retry-policy.js";
import type { TableKitEvent, TableKitEventListener } from "./table-kit-event.js";

/** Sends store requests through the retry policy and reports them to the context's listener. */
export class StoreRunner {
  readonly store: TableStore;
  readonly retry: RetryPolicy;
  readonly #listener: TableKitEventListener | undefined;
  readonly #tablePrefix: string;

  constructor(
    store: TableStore,
    retry: RetryPolicy,
    listener: TableKitEventListener | undefined,
    tablePrefix = "",
  ) {
    this.store = store;
    this.retry = retry;
    this.#listener = listener;
    this.#tablePrefix = tablePrefix;
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
    if (!listener) return this.retry.run((attempt) => request(this.store, attempt));
    return this.retry.run(
      (attempt) => {
        this.emit({ type: "request", operation, table, attempt: attempt.attempt });
        return request(this.store, attempt);
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
