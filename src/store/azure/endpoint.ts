import { ValidationError } from "../../errors.js";
import { redactSecrets } from "../../util/redact-secrets.js";

/** Parses a table service endpoint URL, failing with a `ValidationError` that never shows a SAS signature. */
export function parseEndpoint(url: string): URL {
  try {
    return new URL(url);
  } catch {
    // The URL constructor's own error echoes the input; this message is redacted instead.
    throw new ValidationError("endpoint", `Invalid Azure Table endpoint URL: '${redactSecrets(url)}'`);
  }
}

/** True for hosts that never leave the machine: localhost, 127.0.0.0/8 and ::1. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return (
    host === "localhost" ||
    host.endsWith(".localhost") ||
    /^127(\.\d{1,3}){3}$/.test(host) ||
    host === "[::1]" ||
    host === "::1"
  );
}

/** True when the endpoint is the Cosmos DB Table API, which does not return results sorted by key. */
export function isCosmosHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return (
    host.endsWith(".table.cosmos.azure.com") ||
    host.endsWith(".table.cosmosdb.azure.com") ||
    host.endsWith("documents.azure.com")
  );
}

/**
 * The Cosmos DB emulator's Table endpoint port: its documented connection string is
 * `TableEndpoint=http://localhost:8902/` (Azurite's Table port is 10002).
 */
export const COSMOS_EMULATOR_TABLE_PORT = "8902";

/** True when the URL is the Cosmos DB Table API: a Cosmos host, or the emulator's Table port on a loopback host. */
export function isCosmosEndpoint(endpoint: URL): boolean {
  if (isCosmosHost(endpoint.hostname)) return true;
  return isLoopbackHost(endpoint.hostname) && endpoint.port === COSMOS_EMULATOR_TABLE_PORT;
}
