import { getEntityModel } from "../schema/entity-model.js";
import type { OpenCall, Telemetry } from "./telemetry.js";

/** Methods of repositories, index lookups and sources that are one call each: one span around the promise. */
const CALLS = new Set<PropertyKey>([
  "insert",
  "upsert",
  "update",
  "delete",
  "patch",
  "mutate",
  "bulkInsert",
  "bulkUpsert",
  "bulkDelete",
  "get",
  "getMany",
  "getOrThrow",
  "summary",
  "ensureTable",
]);
/** Methods of a context that are one call each; the table is the entity class's, when the first argument is one. */
const CONTEXT_CALLS = new Set<PropertyKey>([
  "transaction",
  "eventually",
  "ensureTables",
  "repair",
  "reencrypt",
  "tablesOf",
  "dropTables",
  "verifyIndexes",
  "repairIndexes",
  "verifySummaries",
  "repairSummaries",
  "repairLargeValues",
]);
/** Methods of a lazy query that run it: the span covers the run, named after the method that made the query. */
const RUNS = new Set<PropertyKey>(["page", "toArray", "first"]);
/** Methods whose result is another traced surface (a period's repository, an index, a multi-entity source). */
const SURFACES = new Set<PropertyKey>(["repository", "period", "index", "dynamic", "query"]);
/** The traced proxy of each surface already handed out: `db.repository(E)` stays one object. */
const proxies = new WeakMap<object, object>();

type Method = (...args: unknown[]) => unknown;

/**
 * The repository (or index lookup, dynamic repository, multi-entity source) with a span around each
 * call and around each run of the queries it builds. A proxy, so the object keeps its class and its
 * private state: every method runs on the original object.
 */
export function traceRepository<R extends object>(
  repository: R,
  telemetry: Telemetry,
  parentTable?: string,
): R {
  return traced(repository, (name, method, target) => {
    const operation = String(name);
    if (CALLS.has(name))
      return (...args) =>
        telemetry.tracing
          ? telemetry.call(
              operation,
              tableOf(target) ?? parentTable,
              () => method.apply(target, args) as Promise<unknown>,
            )
          : method.apply(target, args);
    if (name === "find" || name === "latest" || name === "scan" || SURFACES.has(name))
      return (...args) =>
        traceResult(method.apply(target, args), operation, tableOf(target) ?? parentTable, telemetry);
    return undefined;
  });
}

/** The context with a span around each of its calls; the repositories it hands out are traced by it too. */
export function traceContext<C extends object>(context: C, telemetry: Telemetry): C {
  return traced(context, (name, method, target) => {
    const operation = String(name);
    if (CONTEXT_CALLS.has(name))
      return (...args) =>
        telemetry.tracing
          ? telemetry.call(
              operation,
              entityTable(args[0]),
              () => method.apply(target, args) as Promise<unknown>,
            )
          : method.apply(target, args);
    if (SURFACES.has(name))
      return (...args) => traceResult(method.apply(target, args), operation, undefined, telemetry);
    return undefined;
  });
}

/** A lazy query whose runs (`page`, `toArray`, `first`, iteration) are each a call span `tablekit.<operation> <table>`. */
function traceQuery<Q extends object>(
  query: Q,
  operation: string,
  table: string | undefined,
  telemetry: Telemetry,
): Q {
  return traced(query, (name, method, target) => {
    if (RUNS.has(name))
      return (...args) =>
        telemetry.tracing
          ? telemetry.call(operation, table, () => method.apply(target, args) as Promise<unknown>)
          : method.apply(target, args);
    if (name === Symbol.asyncIterator)
      return () =>
        traceIteration(method.apply(target, []) as AsyncIterator<unknown>, operation, table, telemetry);
    // Builders (`where`, `select`, `take`, …) return a new query: traced the same way.
    return (...args) => traceResult(method.apply(target, args), operation, table, telemetry);
  });
}

/** An iteration of a query: one span from the first `next` to the last (or to `return`/`throw`). */
function traceIteration(
  iterator: AsyncIterator<unknown>,
  operation: string,
  table: string | undefined,
  telemetry: Telemetry,
): AsyncIterableIterator<unknown> {
  let open: OpenCall | undefined;
  let state: "idle" | "open" | "ended" = "idle";
  const finish = (failed?: { error: unknown }) => {
    if (state === "open" && open !== undefined) telemetry.end(open, failed);
    state = "ended";
  };
  const step = async (run: () => Promise<IteratorResult<unknown>>): Promise<IteratorResult<unknown>> => {
    if (state === "idle") {
      open = telemetry.begin(operation, table);
      state = "open";
    }
    try {
      const result = await (open === undefined ? run() : telemetry.within(open, run));
      if (result.done) finish();
      return result;
    } catch (error) {
      finish({ error });
      throw error;
    }
  };
  return {
    next: (...args: [] | [unknown]) => step(() => iterator.next(...args)),
    return: (value?: unknown) =>
      step(() => iterator.return?.(value) ?? Promise.resolve({ done: true as const, value })).finally(() =>
        finish(),
      ),
    throw: (error?: unknown) =>
      step(() => iterator.throw?.(error) ?? Promise.reject(error)).finally(() => finish()),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/** A method's result, traced when it is a query (has `toArray`) or another surface with calls. */
function traceResult(
  result: unknown,
  operation: string,
  table: string | undefined,
  telemetry: Telemetry,
): unknown {
  if (typeof result !== "object" || result === null || result instanceof Promise) return result;
  if (typeof (result as { toArray?: unknown }).toArray === "function")
    // A query made while no tracer provider is registered stays the plain query: no proxy per builder step.
    return telemetry.tracing ? traceQuery(result, operation, table, telemetry) : result;
  let proxy = proxies.get(result);
  if (proxy === undefined) {
    // An index lookup has no table of its own to name: its entity's.
    proxy = traceRepository(result, telemetry, table);
    proxies.set(result, proxy);
  }
  return proxy;
}

/**
 * A proxy whose methods run on the original object (private fields stay reachable); `wrap` decides
 * per method name, `undefined` meaning the method as is. Wrapped methods are made once per name.
 */
function traced<O extends object>(
  original: O,
  wrap: (name: PropertyKey, method: Method, target: O) => Method | undefined,
): O {
  const methods = new Map<PropertyKey, Method>();
  return new Proxy(original, {
    get(target, name) {
      const value = Reflect.get(target, name, target) as unknown;
      if (typeof value !== "function" || name === "constructor") return value;
      let method = methods.get(name);
      if (method === undefined) {
        method = wrap(name, value as Method, target) ?? (value as Method).bind(target);
        methods.set(name, method);
      }
      return method;
    },
  });
}

/**
 * The table a repository-like object names in its spans: the entity's declared table (without the
 * context's `tablePrefix`, so span names stay few), else its `table`. Requests carry the physical name.
 */
function tableOf(target: object): string | undefined {
  const declared = (target as { model?: { table?: unknown } }).model?.table;
  if (typeof declared === "string") return declared;
  const table = (target as { table?: unknown }).table;
  return typeof table === "string" ? table : undefined;
}

/** The table of an entity class given as a context call's first argument. */
function entityTable(argument: unknown): string | undefined {
  if (typeof argument !== "function") return undefined;
  try {
    return getEntityModel(argument as new () => object).table;
  } catch {
    return undefined;
  }
}
