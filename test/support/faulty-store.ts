/**
 * Fault injection at the store port: `FaultyStore` wraps any `TableStore` and fails chosen calls the
 * way the Table service and the network do. `FaultPlan` (also used by the HTTP fault proxy) decides
 * which call fails and how: per request, from a hash of (seed, method, request identity, attempt number),
 * so the same requests meet the same faults whatever order concurrency delivers them in; or
 * deterministically ("fault the next N calls of method X with kind K").
 */
import { StoreError, TransactionError } from "../../src/errors.js";
import type { TableStore } from "../../src/store/table-store.js";
import { hashToUnit } from "./seeded-random.js";
import { STORE_METHODS, type StoreMethod, type StoreRequest, StoreWrapper } from "./store-wrapper.js";

export { seededRandom } from "./seeded-random.js";

export { STORE_METHODS } from "./store-wrapper.js";

/**
 * How a faulted request fails:
 * - `busy`: 503 ServerBusy; `busyRetryAfter`: the same with a Retry-After of one second;
 * - `internal`: 500 InternalError; `timeout`: 408;
 * - `reset`: the connection drops before the request reaches the service (nothing applied);
 * - `lost`: the service applies the request, then the connection drops before the answer arrives;
 * - `badRequest` (400), `forbidden` (403), `tooLarge` (413): final answers, never in the default mix.
 */
export type FaultKind =
  | "busy"
  | "busyRetryAfter"
  | "internal"
  | "timeout"
  | "reset"
  | "lost"
  | "badRequest"
  | "forbidden"
  | "tooLarge";

/** The transient kinds, mixed by default when faulting at random. */
export const TRANSIENT_FAULTS: readonly FaultKind[] = [
  "busy",
  "busyRetryAfter",
  "internal",
  "timeout",
  "reset",
  "lost",
];

export const ALL_FAULT_KINDS: readonly FaultKind[] = [
  ...TRANSIENT_FAULTS,
  "badRequest",
  "forbidden",
  "tooLarge",
];

/** The Retry-After a `busyRetryAfter` fault carries (the service sends whole seconds). */
export const RETRY_AFTER_SECONDS = 1;

/** What a hook hears about a fault. */
export interface FaultEvent {
  method: StoreMethod;
  kind: FaultKind;
}

/** Runs when a deterministic fault fires; for `lost`, after the request was applied and before the loss. */
export type FaultHook = (event: FaultEvent) => void | Promise<void>;

/** "Fault the next `count` requests of `method` with `kind`." */
export interface FaultRule {
  /** Which requests (default: any). */
  method?: StoreMethod | readonly StoreMethod[];
  kind: FaultKind;
  /** How many matching requests to fault (default 1). */
  count?: number;
  onFault?: FaultHook;
}

export interface FaultPlanOptions {
  /** Seed of the per-request decisions (default 1). */
  seed?: number;
  /** Probability of faulting a request at random (default 0). */
  rate?: number;
  /**
   * Random faults one request identity meets at most (default 3): its later attempts always pass.
   * With a retry budget of at least this many retries, exhausting the retries is impossible.
   */
  maxFaultsPerRequest?: number;
  /** Kinds to pick from at random, uniformly, or weighted (default: every transient kind, equally). */
  mix?: readonly FaultKind[] | Partial<Record<FaultKind, number>>;
  /** Methods random faults apply to (default: all). Deterministic rules ignore this. */
  methods?: readonly StoreMethod[];
}

/** A decision for one request. */
export interface FaultDecision {
  kind: FaultKind;
  onFault?: FaultHook;
}

/** Decides which requests fail and how, and counts requests (per method) and faults (per kind). */
export class FaultPlan {
  #seed: number;
  #rate: number;
  readonly #maxFaultsPerRequest: number;
  /** Attempts seen per (method, identity): the attempt number is part of each decision. */
  readonly #attempts = new Map<string, number>();
  #mix: Array<[FaultKind, number]> = [];
  #mixTotal = 0;
  #methods: ReadonlySet<StoreMethod> | undefined;
  readonly #rules: Array<Required<Pick<FaultRule, "kind" | "count">> & FaultRule> = [];
  readonly requestsByMethod: Record<StoreMethod, number> = zeroes(STORE_METHODS);
  readonly faults: Record<FaultKind, number> = zeroes(ALL_FAULT_KINDS);
  /** Faults per method and kind, e.g. `faultsByMethod.submitTransaction.lost`. */
  readonly faultsByMethod: Record<StoreMethod, Record<FaultKind, number>> = Object.fromEntries(
    STORE_METHODS.map((method) => [method, zeroes(ALL_FAULT_KINDS)]),
  ) as Record<StoreMethod, Record<FaultKind, number>>;

  constructor(options: FaultPlanOptions = {}) {
    this.#seed = options.seed ?? 1;
    this.#maxFaultsPerRequest = options.maxFaultsPerRequest ?? 3;
    this.#rate = 0;
    this.setRate(options.rate ?? 0);
    this.setMix(options.mix ?? TRANSIENT_FAULTS);
    this.#methods = options.methods && new Set(options.methods);
  }

  /** Requests seen (faulted or not). */
  get requests(): number {
    return Object.values(this.requestsByMethod).reduce((sum, n) => sum + n, 0);
  }

  /** Faults injected, of every kind. */
  get totalFaults(): number {
    return Object.values(this.faults).reduce((sum, n) => sum + n, 0);
  }

  /** Deterministic rules not yet used up. */
  get pendingRules(): number {
    return this.#rules.reduce((sum, rule) => sum + rule.count, 0);
  }

  get seed(): number {
    return this.#seed;
  }

  get rate(): number {
    return this.#rate;
  }

  setRate(rate: number): void {
    if (!(rate >= 0 && rate <= 1)) throw new RangeError(`fault rate must be within [0, 1], got ${rate}`);
    this.#rate = rate;
  }

  setMix(mix: readonly FaultKind[] | Partial<Record<FaultKind, number>>): void {
    const entries: Array<[FaultKind, number]> = Array.isArray(mix)
      ? (mix as readonly FaultKind[]).map((kind) => [kind, 1])
      : (Object.entries(mix) as Array<[FaultKind, number]>).filter(([, weight]) => weight > 0);
    if (entries.length === 0) throw new RangeError("the fault mix needs at least one kind");
    this.#mix = entries;
    this.#mixTotal = entries.reduce((sum, [, weight]) => sum + weight, 0);
  }

  setSeed(seed: number): void {
    this.#seed = seed;
    this.#attempts.clear();
  }

  /** Faults the next `count` requests of `method` (any method when absent) with `kind`. */
  faultNext(rule: FaultRule): void {
    this.#rules.push({ ...rule, count: rule.count ?? 1 });
  }

  /** Drops every deterministic rule not yet used. */
  clearRules(): void {
    this.#rules.length = 0;
  }

  /** Forgets the counts. */
  resetCounts(): void {
    for (const method of STORE_METHODS) {
      this.requestsByMethod[method] = 0;
      for (const kind of ALL_FAULT_KINDS) this.faultsByMethod[method][kind] = 0;
    }
    for (const kind of ALL_FAULT_KINDS) this.faults[kind] = 0;
  }

  /**
   * Counts a request of `method` and decides whether (and how) it fails. `identity` names the request
   * apart from its table (whose name is random per run), e.g. its keys: the decision depends only on the
   * seed, the method, the identity and how many times that identity was seen before.
   */
  decide(method: StoreMethod, identity = ""): FaultDecision | undefined {
    this.requestsByMethod[method] += 1;
    const decision = this.#pick(method, identity);
    if (decision) {
      this.faults[decision.kind] += 1;
      this.faultsByMethod[method][decision.kind] += 1;
    }
    return decision;
  }

  #pick(method: StoreMethod, identity: string): FaultDecision | undefined {
    const index = this.#rules.findIndex((rule) => matches(rule.method, method));
    if (index >= 0) {
      const rule = this.#rules[index]!;
      rule.count -= 1;
      if (rule.count <= 0) this.#rules.splice(index, 1);
      return rule.onFault ? { kind: rule.kind, onFault: rule.onFault } : { kind: rule.kind };
    }
    if (this.#rate === 0 || (this.#methods && !this.#methods.has(method))) return undefined;
    const request = `${method}\u0001${identity}`;
    const attempt = (this.#attempts.get(request) ?? 0) + 1;
    this.#attempts.set(request, attempt);
    if (attempt > this.#maxFaultsPerRequest) return undefined;
    if (hashToUnit(this.#seed, request, attempt, "fault?") >= this.#rate) return undefined;
    let point = hashToUnit(this.#seed, request, attempt, "kind") * this.#mixTotal;
    for (const [kind, weight] of this.#mix) {
      point -= weight;
      if (point < 0) return { kind };
    }
    return { kind: this.#mix[this.#mix.length - 1]![0] };
  }
}

function matches(wanted: FaultRule["method"], method: StoreMethod): boolean {
  if (wanted === undefined) return true;
  return typeof wanted === "string" ? wanted === method : wanted.includes(method);
}

function zeroes<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>;
}

/** The error a dropped connection gives at the port: a `StoreError` with code ECONNRESET and no status. */
export function connectionReset(method: StoreMethod): StoreError {
  return new StoreError(`injected fault: ${method}: socket hang up`, { serviceCode: "ECONNRESET" });
}

/** The `StoreError` the service's answer for `kind` becomes at the port (not for `reset`/`lost`). */
export function serviceFault(kind: FaultKind, method: StoreMethod): StoreError {
  const fail = (statusCode: number, serviceCode: string, extra: { retryAfterMs?: number } = {}) =>
    new StoreError(`injected fault: ${method}: ${statusCode} ${serviceCode}`, {
      statusCode,
      serviceCode,
      ...extra,
    });
  switch (kind) {
    case "busy":
      return fail(503, "ServerBusy");
    case "busyRetryAfter":
      return fail(503, "ServerBusy", { retryAfterMs: RETRY_AFTER_SECONDS * 1000 });
    case "internal":
      return fail(500, "InternalError");
    case "timeout":
      return fail(408, "Timeout");
    case "badRequest":
      return fail(400, "InvalidInput");
    case "forbidden":
      return fail(403, "AuthorizationFailure");
    case "tooLarge":
      return fail(413, "RequestBodyTooLarge");
    case "reset":
    case "lost":
      return connectionReset(method);
  }
}

/**
 * A `TableStore` that injects faults in front of another store (e.g. `MemoryStore`). A `reset` fails
 * before the inner store is called; a `lost` calls it, waits for it to finish (success or not), runs the
 * rule's hook, and then fails with the reset, so the caller cannot know the request was applied.
 */
export class FaultyStore extends StoreWrapper {
  readonly plan: FaultPlan;

  constructor(inner: TableStore, plan: FaultPlan | FaultPlanOptions = {}) {
    super(inner);
    this.plan = plan instanceof FaultPlan ? plan : new FaultPlan(plan);
  }

  protected override around<T>(
    { method, table, partitionKey, identity }: StoreRequest,
    send: () => Promise<T>,
  ): Promise<T> {
    const transaction = method === "submitTransaction" && partitionKey !== undefined;
    return this.#call(method, identity, send, transaction ? { table, partitionKey } : undefined);
  }

  async #call<T>(
    method: StoreMethod,
    identity: string,
    send: () => Promise<T>,
    transaction?: { table: string; partitionKey: string },
  ): Promise<T> {
    const decision = this.plan.decide(method, identity);
    if (decision === undefined) return send();
    const { kind, onFault } = decision;
    if (kind === "lost") {
      // Applied, whatever its outcome; only the answer is lost.
      await send().catch(() => undefined);
      await onFault?.({ method, kind });
      throw connectionReset(method);
    }
    await onFault?.({ method, kind });
    const fault = serviceFault(kind, method);
    // Like the service (and AzureStore): a batch's final 4xx answer is a failed transaction, charged to operation 0.
    if (transaction && fault.statusCode !== undefined && fault.statusCode < 500 && fault.statusCode !== 408) {
      throw new TransactionError(
        {
          index: 0,
          ...transaction,
          statusCode: fault.statusCode,
          ...(fault.serviceCode === undefined ? {} : { serviceCode: fault.serviceCode }),
          message: fault.message,
        },
        { cause: fault },
      );
    }
    throw fault;
  }
}
