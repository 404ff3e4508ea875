import { ValidationError } from "../../errors.js";
import { changeFedModels } from "../../schema/entity-model.js";
import type { TableStore } from "../../store/table-store.js";
import type { StateScope } from "../../util/scoped-state.js";
import type { StoreLimits } from "../../util/store-limits.js";
import type { BlindIndex } from "../pipeline/encryption/blind-index.js";
import type { BlobSealer } from "../pipeline/encryption/blob-sealing.js";
import type { FeedExplainer } from "../pipeline/feed/feed-requests.js";
import { withRequestAttempt } from "../pipeline/request-attempt.js";
import type { AttemptContext, RetryPolicy } from "../pipeline/retry-policy.js";
import type {
  Backend,
  Backoff,
  BlindIndexing,
  BlobSealing,
  Clock,
  FeedExplaining,
  LargeValueSupport,
  Limited,
  PeriodTableLookup,
  Requests,
  Scoped,
  TableNaming,
} from "./requests.js";
import type { TableKitEvent, TableKitEventListener } from "./table-kit-event.js";

/**
 * Sends store requests through the retry policy and reports them to the context's listener: the one
 * object that plays the roles of requests.ts for a context. Only the composition (table-context.ts)
 * names it; everything else is given the roles it uses.
 */
export class StoreRunner
  implements
    Requests,
    TableNaming,
    Scoped,
    Limited,
    Clock,
    Backoff,
    PeriodTableLookup,
    Backend,
    BlobSealing,
    BlindIndexing,
    LargeValueSupport,
    FeedExplaining
{
  readonly retry: RetryPolicy;
  readonly limits: StoreLimits;
  /** The store requests go to: the composed stack (limits, slots, pacing, encryption, period tables). */
  readonly #target: TableStore;
  readonly #listener: TableKitEventListener | undefined;
  readonly #tablePrefix: string;
  readonly scope: StateScope;
  readonly periodTables: { has(table: string): boolean };
  readonly backend: Pick<TableStore, "name" | "capabilities" | "blobs">;
  /** The encryption layer's sealer of encrypted large values (with the context's keys). */
  readonly blobSealer: BlobSealer | undefined;
  /** The blind values of blind-indexed columns (with the context's `blindIndexKey`). */
  readonly blindIndex: BlindIndex | undefined;
  readonly largeValues: LargeValueSupport["largeValues"];
  /** The clock intents are dated and aged by, in milliseconds (the context's, when it was given one). */
  now: () => number = Date.now;
  /** The context's change feed, for explained plans (set by the context that composed the stack). */
  feed: FeedExplainer | undefined = undefined;

  constructor(
    target: TableStore,
    retry: RetryPolicy,
    listener: TableKitEventListener | undefined,
    tablePrefix: string,
    scope: StateScope,
    limits: StoreLimits,
    periodTables: { has(table: string): boolean },
    backend: Pick<TableStore, "name" | "capabilities" | "blobs">,
    blobSealer?: BlobSealer,
    blindIndex?: BlindIndex,
  ) {
    this.blobSealer = blobSealer;
    this.blindIndex = blindIndex;
    this.retry = retry;
    this.limits = limits;
    this.#target = target;
    this.#listener = listener;
    this.#tablePrefix = tablePrefix;
    this.scope = scope;
    this.periodTables = periodTables;
    this.backend = backend;
    this.largeValues = {
      store: backend.name,
      blobs: backend.blobs !== undefined,
      canSeal: blobSealer !== undefined,
    };
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
    // One token for every attempt: the change feed tells a resend of a committed write by it. Made
    // only when a change-fed class is defined (the only reader; checked per attempt, as before).
    let token: object | undefined;
    const send = (attempt: AttemptContext) => {
      if (changeFedModels().length === 0) return request(target, attempt);
      token ??= {};
      return withRequestAttempt({ request: token, possiblyApplied: attempt.possiblyApplied }, () =>
        request(target, attempt),
      );
    };
    if (!listener) return this.retry.run(send);
    return this.retry.run(
      (attempt) => {
        this.emit({ type: "request", operation, table, attempt: attempt.attempt });
        return send(attempt);
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
