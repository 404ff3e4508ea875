import { createRequire } from "node:module";
import type * as OpenTelemetryModule from "@opentelemetry/api";

/** The `@opentelemetry/api` module, when installed. */
export type OpenTelemetryApi = typeof OpenTelemetryModule;

/** What loading `@opentelemetry/api` gave: the module, or why there is none. */
export type OpenTelemetryLoad =
  | { readonly api: OpenTelemetryApi; readonly failure?: undefined }
  /** Not installed: tracing is off, and that is no news (an optional peer dependency). */
  | { readonly api: null; readonly failure?: undefined }
  /** Installed (it resolves) but it threw while loading: tracing is off, and the context says so. */
  | { readonly api: null; readonly failure: string };

/** `undefined` until the first load, then its outcome. */
let loaded: OpenTelemetryLoad | undefined;

/**
 * `@opentelemetry/api` if installed (an optional peer dependency), loaded once on the first context's
 * construction: the package entry never imports it, so tablekit runs without it. Loaded synchronously
 * (its CommonJS build), so a context's first call is traced like the others; the API keeps its
 * registered providers on `globalThis`, so this copy sees the ones the application registered through
 * its own `import`.
 */
export function loadOpenTelemetry(): OpenTelemetryLoad {
  if (loaded === undefined) {
    // A require() beside this file: `__filename` in the CommonJS bundle, `import.meta.url` in the ES
    // module one. Not `typeof require`: esbuild's ES module output defines a `__require` shim that is
    // always a function there and throws on every call.
    const load = createRequire(typeof __filename === "string" ? __filename : import.meta.url);
    let path: string | undefined;
    try {
      path = load.resolve("@opentelemetry/api");
    } catch {
      loaded = { api: null };
    }
    if (path !== undefined) {
      try {
        loaded = { api: load(path) as OpenTelemetryApi };
      } catch (error) {
        const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
        loaded = {
          api: null,
          failure: `@opentelemetry/api is installed but could not be loaded (${reason}): no spans or metrics`,
        };
      }
    }
  }
  return loaded as OpenTelemetryLoad;
}
