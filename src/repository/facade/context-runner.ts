import { ValidationError } from "../../errors.js";
import type { TableStore } from "../../store/table-store.js";
import { contextTelemetry, telemetryWarning } from "../../telemetry/context-telemetry.js";
import type { StateScope } from "../../util/scoped-state.js";
import type { StoreLimits } from "../../util/store-limits.js";
import { currentChangeReason } from "../core/change-reason.js";
import { limitsOf } from "../pipeline/backend-limits.js";
import { blindIndexOf } from "../pipeline/encryption/blind-index.js";
import { EncryptedRowTypes } from "../pipeline/encryption/encrypted-row-types.js";
import { EncryptingStore } from "../pipeline/encryption/encrypting-store.js";
import { assertEncryptionOptions } from "../pipeline/encryption/key-resolver.js";
import { FeedDirectory } from "../pipeline/feed/feed-directory.js";
import { FeedTables } from "../pipeline/feed/feed-tables.js";
import { FeedingStore } from "../pipeline/feed/feeding-store.js";
import { LimitCheckedStore } from "../pipeline/limit-checked-store.js";
import { PacedStore } from "../pipeline/pacing/paced-store.js";
import { Pacer } from "../pipeline/pacing/pacer.js";
import { readThroughput } from "../pipeline/pacing/throughput-options.js";
import { PeriodTableNames, PeriodTableStore } from "../pipeline/period-table-store.js";
import { DEFAULT_MAX_CONCURRENT_REQUESTS, RequestSlots } from "../pipeline/request-slots.js";
import { defaultSleep, RetryPolicy, type Sleep } from "../pipeline/retry-policy.js";
import { SlotLimitedStore } from "../pipeline/slot-limited-store.js";
import type { TableContextOptions } from "./context-options.js";

/** How the pacer reports its pace (the context emits it as a `throughput` event). */
export type PaceReport = ConstructorParameters<typeof Pacer>[2];

/** One scope token per (store, prefix): contexts on the same tables share what they know of an instance. */
const scopes = new WeakMap<TableStore, Map<string, StateScope>>();

function scopeOf(store: TableStore, prefix: string): StateScope {
  const byPrefix = scopes.get(store) ?? new Map<string, StateScope>();
  scopes.set(store, byPrefix);
  const scope = byPrefix.get(prefix) ?? Object.freeze({ prefix });
  byPrefix.set(prefix, scope);
  return scope;
}

/** The store stack of a context and the pieces of it handed out to what uses them (the runner is built on `target`). */
export interface ContextStack {
  /** The store every request is sent to, wrapped in the pipeline. */
  target: TableStore;
  retry: RetryPolicy;
  prefix: string;
  scope: StateScope;
  limits: StoreLimits;
  encryption: EncryptingStore;
  encryptedTypes: EncryptedRowTypes;
  periodTables: PeriodTableNames;
  /** The change-fed tables and the directory of their partitions (pipeline/feed/). */
  feedTables: FeedTables;
  feedDirectory: FeedDirectory;
  /** Waits outside requests (change feed polls): the context's `sleep`, or real time. */
  sleep: Sleep;
  telemetry: ReturnType<typeof contextTelemetry>;
  /** Why there is no telemetry although `@opentelemetry/api` is installed (reported as a `warning` event). */
  telemetryWarning: string | undefined;
}

/**
 * The request path of a context from its options, each checked before any request: retries, the
 * table prefix, pacing, encryption keys and telemetry, and the store wrapped in limit checks, request
 * slots, pacing, encryption and period-table creation (pipeline/).
 */
export function composeStack(options: TableContextOptions, report: PaceReport): ContextStack {
  const retry = new RetryPolicy(
    options.retry === false ? { retries: 0 } : options.retry,
    options.sleep,
    options.random,
    options.now,
  );
  const prefix = options.tablePrefix ?? "";
  if (prefix !== "" && !/^[A-Za-z][A-Za-z0-9]*$/.test(prefix)) {
    throw new ValidationError(
      "table-prefix",
      `tablePrefix '${prefix}' must be letters and digits, starting with a letter`,
    );
  }
  const throughput = options.throughput === undefined ? undefined : readThroughput(options.throughput);
  const pacer =
    throughput === undefined || (throughput.perPartition === undefined && throughput.perAccount === undefined)
      ? undefined
      : new Pacer(
          throughput,
          { now: options.now ?? (() => performance.now()), sleep: options.sleep ?? defaultSleep },
          report,
        );
  if (options.encryption !== undefined) assertEncryptionOptions(options.encryption);
  const telemetry = contextTelemetry(options.tracing);
  retry.observer = telemetry?.retries;
  const store = options.store;
  const limits = limitsOf(store);
  // Innermost: a request's span (telemetry) times the service call, not its wait for a slot or pace.
  const sent = telemetry?.instrument === undefined ? store : telemetry.instrument(store);
  // Every row is checked as sent (copies, summaries and intents too), on every backend.
  const checked = new LimitCheckedStore(sent, limits);
  // Every request reaches the store through the runner's target, so a cap there covers them all.
  const slotted = new SlotLimitedStore(
    checked,
    new RequestSlots(options.maxConcurrentRequests ?? DEFAULT_MAX_CONCURRENT_REQUESTS),
  );
  // Pacing comes first: a request waiting for its pace must not hold one of the concurrency slots.
  const paced = pacer === undefined ? slotted : new PacedStore(slotted, pacer);
  // The change feed sees sealed rows (it copies ciphertext as it is) and its extra rows are checked and paced.
  const feedTables = new FeedTables(prefix);
  const feedDirectory = new FeedDirectory(prefix);
  const feeding = new FeedingStore(paced, {
    tables: feedTables,
    directory: feedDirectory,
    limits,
    now: options.now ?? Date.now,
    reason: currentChangeReason,
  });
  // Limits see the sealed rows, and sealing (a key service call) holds no request slot.
  const encryptedTypes = new EncryptedRowTypes(prefix);
  const blindIndex = options.encryption === undefined ? undefined : blindIndexOf(options.encryption);
  const encryption = new EncryptingStore(feeding, encryptedTypes, options.encryption?.keys, blindIndex);
  // Outermost: a period table's creation and the write sent again (already sealed) are each paced and slotted.
  const periodTables = new PeriodTableNames(prefix);
  const target = new PeriodTableStore(encryption, periodTables);
  return {
    target,
    retry,
    prefix,
    scope: scopeOf(store, prefix),
    limits,
    encryption,
    encryptedTypes,
    periodTables,
    feedTables,
    feedDirectory,
    sleep: options.sleep ?? defaultSleep,
    telemetry,
    telemetryWarning: telemetryWarning(options.tracing),
  };
}
