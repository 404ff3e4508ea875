import type { EntityClass } from "../../schema/entity-model.js";
import type { TableStore } from "../../store/table-store.js";
import type { TableKitEventListener } from "../core/table-kit-event.js";
import type { EncryptionOptions } from "../pipeline/encryption/key-resolver.js";
import type { ThroughputOptions } from "../pipeline/pacing/throughput-options.js";
import type { RetryOptions, Sleep } from "../pipeline/retry-policy.js";

/** Options of a `TableContext`. */
export interface TableContextOptions {
  /** Where entities live: `new MemoryStore()` or `AzureStore.fromConnectionString(…)`. */
  store: TableStore;
  /**
   * Retries of transient faults (408, 429, 500, 503, timeouts, resets, 409 TableBeingDeleted); `false`
   * disables them. The defaults (retries for 60 s from the first attempt, no retry count, 0.5–20 s
   * jittered exponential delays, Retry-After waited as given within the window) ride out at least 30 s
   * of faults: see `RetryOptions`.
   */
  retry?: RetryOptions | false | undefined;
  /** Hears requests, retries and batch outcomes, e.g. for logging or metrics. */
  onEvent?: TableKitEventListener | undefined;
  /**
   * Prepended to every table name (letters and digits, starting with a letter), e.g. per environment
   * or per test run; the result must still be a valid table name.
   */
  tablePrefix?: string | undefined;
  /**
   * At most this many store requests in flight for the whole context (a positive integer; default
   * 100, the connection limit the Table storage performance checklist sets for .NET clients):
   * queries, writes, bulk writes and index work alike wait for a slot in arrival order, and a retry's
   * backoff holds no slot. A hash-bucket fan-out reads at most 32 buckets at a time within it.
   */
  maxConcurrentRequests?: number | undefined;
  /**
   * Client-side pacing in entities per second, off by default: `{ perPartition: 2000, perAccount: 20000 }`
   * are the service's targets. A batch counts its operations, a query page its rows; the pace starts
   * at half the limit, doubles each quiet second up to it, and halves on a 503/429 answer (see README).
   */
  throughput?: ThroughputOptions | undefined;
  /**
   * Client-side encryption of `@Column({ encrypt: true })` columns: `{ keys }` is a key resolver
   * (`localKeys({ k1: key }, "k1")`, or one backed by Azure Key Vault). Required by entities with
   * encrypted columns.
   */
  encryption?: EncryptionOptions | undefined;
  /**
   * OpenTelemetry spans and metrics when `@opentelemetry/api` is installed (default on; `false` turns
   * them off): a span per call, a CLIENT span per request (see docs/opentelemetry.md).
   */
  tracing?: boolean | undefined;
  /** @internal The clock retries and pacing sleep on (tests inject one). */
  sleep?: Sleep | undefined;
  /** @internal The random source of backoff jitter (tests inject a seeded one). */
  random?: (() => number) | undefined;
  /**
   * The clock (milliseconds since the epoch, default `Date.now`) that expiry, change-feed retention,
   * leases and intents read; the pacer's too when given (it defaults to the monotonic
   * `performance.now`). Tests may inject one (with `sleep` for a virtual clock).
   */
  now?: (() => number) | undefined;
}

/** Options of `db.repair`. */
export interface RepairAllOptions {
  /**
   * Leave intents younger than this alone (default 0: replay all). A running writer's intent is
   * indistinguishable from a crashed one's: next to live writers, give their longest write time.
   */
  minIntentAgeMs?: number | undefined;
  /**
   * Entity classes to register first. Repair finds index intents and indexed steps of eventual
   * transactions only for classes this context has seen (a repository, `ensureTables`,
   * `eventually` or this list): their copies derive from the class.
   */
  entities?: readonly EntityClass[] | undefined;
}
