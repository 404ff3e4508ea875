import { createRequire } from "node:module";
import type * as OpenTelemetryModule from "@opentelemetry/api";

/** The `@opentelemetry/api` module, when installed. */
export type OpenTelemetryApi = typeof OpenTelemetryModule;

/** `undefined` until the first load, then the module or `null` (not installed). */
let loaded: OpenTelemetryApi | null | undefined;

/**
 * `@opentelemetry/api` if installed (an optional peer dependency), loaded once on the first context's
 * construction: the package entry never imports it, so tablekit runs without it. Loaded synchronously
 * (its CommonJS build), so a context's first call is traced like the others; the API keeps its
 * registered providers on `globalThis`, so this copy sees the ones the application registered through
 * its own `import`.
 */
export function loadOpenTelemetry(): OpenTelemetryApi | null {
  if (loaded === undefined) {
    try {
      // The CommonJS bundle has `require`; the ES module build makes one.
      const load = typeof require === "function" ? require : createRequire(import.meta.url);
      loaded = load("@opentelemetry/api") as OpenTelemetryApi;
    } catch {
      loaded = null;
    }
  }
  return loaded;
}
