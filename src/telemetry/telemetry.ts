import type {
  Attributes,
  Context,
  ContextAPI,
  Histogram,
  Meter,
  MeterProvider,
  ProxyTracerProvider,
  Span,
  Tracer,
  TracerProvider,
} from "@opentelemetry/api";
import { StoreError, TableKitError } from "../errors.js";
import { redactSecrets } from "../util/redact-secrets.js";
import { loadOpenTelemetry, type OpenTelemetryApi } from "./open-telemetry.js";

/**
 * `db.system.name` of every request: the semantic conventions list no value for Azure Table storage,
 * so this one is tablekit's (API.md, "NestJS and OpenTelemetry").
 */
export const DB_SYSTEM = "azure.tables";
/** The instrumentation scope of tablekit's spans and metrics. */
const SCOPE = "tablekit";
/** OpenTelemetry's numeric codes, kept here so nothing needs the module before it is loaded. */
const SPAN_KIND_INTERNAL = 0;
const SPAN_KIND_CLIENT = 2;
const STATUS_ERROR = 2;

/** Where a store's requests go: `server.address` and `server.port` of its spans. */
export interface ServerAddress {
  readonly "server.address": string;
  readonly "server.port"?: number;
}

/** A call span opened for a lazy call (a query run by `page`, `toArray` or iteration). */
export interface OpenCall {
  readonly span: Span;
  readonly context: Context;
}

/**
 * The spans and metrics of one `TableContext`: a span per repository or context call, a CLIENT
 * span per service request under it, retries as events, and the `db.client.operation.duration`
 * histogram. Made only when `@opentelemetry/api` is installed; cheap while no provider is registered.
 */
export class Telemetry {
  readonly #api: OpenTelemetryApi;
  readonly #tracer: Tracer;
  /** The global proxy's delegate while no tracer provider is registered. */
  readonly #noTracer: TracerProvider;
  readonly #noMeter: Meter;
  #meters: MeterProvider | undefined;
  /** The histogram of the current meter provider, `undefined` while none is registered. */
  #duration: Histogram | undefined;

  /** The telemetry of a new context: none with `tracing: false` or without `@opentelemetry/api`. */
  static open(tracing: boolean | undefined): Telemetry | undefined {
    if (tracing === false) return undefined;
    const { api } = loadOpenTelemetry();
    return api === null ? undefined : new Telemetry(api);
  }

  private constructor(api: OpenTelemetryApi) {
    this.#api = api;
    // A ProxyTracer: spans go to whatever provider is registered when each one starts.
    this.#tracer = api.trace.getTracer(SCOPE);
    this.#noTracer = new api.ProxyTracerProvider().getDelegate();
    this.#noMeter = api.createNoopMeter();
  }

  /**
   * Whether a tracer provider is registered now (checked per call, so one registered later counts):
   * without one, calls and requests run as they are, with no span, context or allocation.
   */
  get tracing(): boolean {
    const provider = this.#api.trace.getTracerProvider() as Partial<ProxyTracerProvider>;
    const delegate = provider.getDelegate?.() ?? provider;
    // By name too: another copy of the API (a bundle) has its own no-op singleton.
    return delegate !== this.#noTracer && delegate.constructor?.name !== "NoopTracerProvider";
  }

  /** Whether a request sent now is recorded (a span or a duration): a tracer or a meter provider is registered. */
  get recording(): boolean {
    return this.tracing || this.#histogram() !== undefined;
  }

  /** The duration histogram of the meter provider registered now, if any. */
  #histogram(): Histogram | undefined {
    // The metrics API has no proxy provider: pick up one registered after this context was made.
    const meters = this.#api.metrics.getMeterProvider();
    if (meters !== this.#meters) {
      this.#meters = meters;
      const meter = meters.getMeter(SCOPE);
      this.#duration =
        meter === this.#noMeter
          ? undefined
          : meter.createHistogram("db.client.operation.duration", {
              description: "Duration of database client operations.",
              unit: "s",
            });
    }
    return this.#duration;
  }

  /** Runs one service request in a CLIENT span, and records its duration. */
  request<T>(
    operation: string,
    collection: string,
    server: ServerAddress | undefined,
    send: () => Promise<T>,
    system: string = DB_SYSTEM,
  ): Promise<T> {
    const tracing = this.tracing;
    const histogram = this.#histogram();
    if (!tracing && histogram === undefined) return send();
    const api = this.#api;
    const parent = api.context.active();
    const attempt = (parent.getValue(ATTEMPT) as number | undefined) ?? 1;
    const attributes: Attributes = {
      "db.system.name": system,
      "db.collection.name": collection,
      "db.operation.name": operation,
      ...server,
    };
    const span = tracing
      ? this.#tracer.startSpan(
          `${operation} ${collection}`,
          { kind: SPAN_KIND_CLIENT, attributes: { ...attributes, "tablekit.retry_count": attempt - 1 } },
          parent,
        )
      : undefined;
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    // The SDK's own spans (its instrumentation registered) nest under this one.
    const sent = span === undefined ? send() : runIn(api.context, api.trace.setSpan(parent, span), send);
    return sent.then(
      (result) => {
        histogram?.record(seconds(), attributes);
        span?.end();
        return result;
      },
      (error: unknown) => {
        const type = errorType(error);
        histogram?.record(seconds(), { ...attributes, "error.type": type });
        if (span !== undefined) fail(span, error, type);
        throw error;
      },
    );
  }

  /** Runs one tablekit call (`tablekit.<operation> <table>`) with the requests it sends as children. */
  call<T>(operation: string, table: string | undefined, run: () => Promise<T>): Promise<T> {
    if (!this.tracing) return run();
    const open = this.#open(operation, table);
    let running: Promise<T>;
    try {
      running = runIn(this.#api.context, open.context, run);
    } catch (error) {
      fail(open.span, error, errorType(error));
      throw error;
    }
    return running.then(
      (result) => {
        open.span.end();
        return result;
      },
      (error: unknown) => {
        fail(open.span, error, errorType(error));
        throw error;
      },
    );
  }

  /** Opens a call span without running anything in it (lazy calls); none while no tracer provider is registered. */
  begin(operation: string, table: string | undefined): OpenCall | undefined {
    if (!this.tracing) return undefined;
    return this.#open(operation, table);
  }

  #open(operation: string, table: string | undefined): OpenCall {
    const api = this.#api;
    const parent = api.context.active();
    const span = this.#tracer.startSpan(
      table === undefined ? `tablekit.${operation}` : `tablekit.${operation} ${table}`,
      {
        kind: SPAN_KIND_INTERNAL,
        attributes:
          table === undefined
            ? { "tablekit.operation": operation }
            : { "tablekit.operation": operation, "tablekit.table": table },
      },
      parent,
    );
    return { span, context: api.trace.setSpan(parent, span) };
  }

  /** Runs `run` inside an open call's context. */
  within<T>(open: OpenCall, run: () => Promise<T>): Promise<T> {
    return runIn(this.#api.context, open.context, run);
  }

  /** Ends an open call span, with error status when `error` is given. */
  end(open: OpenCall, failed?: { error: unknown }): void {
    if (failed === undefined) open.span.end();
    else fail(open.span, failed.error, errorType(failed.error));
  }

  /** A retry of the current request: an event on the call's span (the failed attempt's span has ended). */
  onRetry(decision: { attempt: number; delayMs: number; error: unknown }): void {
    const span = this.#api.trace.getActiveSpan();
    span?.addEvent("tablekit.retry", {
      "tablekit.retry.attempt": decision.attempt + 1,
      "tablekit.retry.delay_ms": decision.delayMs,
      "error.type": errorType(decision.error),
    });
  }

  /** Runs a request's attempt after the first, so its CLIENT span carries its number. */
  runAttempt<T>(attempt: number, run: () => Promise<T>): Promise<T> {
    if (!this.tracing) return run();
    const contexts = this.#api.context;
    return runIn(contexts, contexts.active().setValue(ATTEMPT, attempt), run);
  }
}

/** The context key of an attempt's number (a symbol made like `createContextKey` does). */
const ATTEMPT = Symbol.for("tablekit.attempt");

function runIn<T>(contexts: ContextAPI, context: Context, run: () => Promise<T>): Promise<T> {
  return contexts.with(context, run);
}

/** A low-cardinality `error.type`: the HTTP status or service code of a store error, else the class. */
function errorType(error: unknown): string {
  if (error instanceof StoreError) return String(error.statusCode ?? error.serviceCode ?? error.code);
  if (error instanceof TableKitError) return error.code;
  return error instanceof Error ? error.name : "_OTHER";
}

function fail(span: Span, error: unknown, type: string): void {
  span.setAttribute("error.type", type);
  if (error instanceof StoreError && error.statusCode !== undefined)
    span.setAttribute("db.response.status_code", String(error.statusCode));
  // The span leaves the process: an error's text goes out redacted, like every error tablekit makes.
  const message = redactSecrets(error instanceof Error ? error.message : String(error));
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    span.recordException({
      name: error.name,
      message,
      ...(typeof code === "string" || typeof code === "number" ? { code } : {}),
      ...(error.stack === undefined ? {} : { stack: redactSecrets(error.stack) }),
    });
  }
  span.setStatus({ code: STATUS_ERROR, message });
  span.end();
}
