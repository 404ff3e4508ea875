import type { TableStore } from "../store/table-store.js";
import { loadOpenTelemetry } from "./open-telemetry.js";
import { Telemetry } from "./telemetry.js";
import { traceContext } from "./traced-calls.js";
import { TracedStore } from "./traced-store.js";

/** What a `TableContext` wires in when tracing is on. */
export interface ContextTelemetry {
  /** The retry policy's observer: retries as span events, attempt numbers on request spans. */
  readonly retries: Telemetry;
  /** Wraps the context's store (innermost) so each request is a CLIENT span. */
  readonly instrument: (store: TableStore) => TableStore;
  /** The context itself with a span around each call and around the repositories it hands out. */
  readonly trace: <C extends object>(context: C) => C;
}

/**
 * The telemetry of a new `TableContext`: `undefined` with `tracing: false`, or when
 * `@opentelemetry/api` is not installed (known after the first context's attempt to load it).
 */
export function contextTelemetry(tracing: boolean | undefined): ContextTelemetry | undefined {
  const telemetry = Telemetry.open(tracing);
  if (telemetry === undefined) return undefined;
  return {
    retries: telemetry,
    instrument: (store) => new TracedStore(store, telemetry),
    trace: (context) => traceContext(context, telemetry),
  };
}

/**
 * Why a context that asked for tracing has none although `@opentelemetry/api` is installed (it
 * threw while loading), for the context to report once as a `warning` event; `undefined` otherwise.
 */
export function telemetryWarning(tracing: boolean | undefined): string | undefined {
  return tracing === false ? undefined : loadOpenTelemetry().failure;
}
