import { Agent as HttpAgent } from "node:http";
import type { TableServiceClientOptions } from "@azure/data-tables";
import { ValidationError } from "../../errors.js";
import { MAX_TIMER_MS } from "../../util/long-timeout.js";
import { redactSecrets } from "../../util/redact-secrets.js";
import { AZURE_TABLE_LIMITS, COSMOS_TABLE_LIMITS } from "../../util/store-limits.js";
import type { BlobStore, StoreCapabilities } from "../table-store.js";
import {
  type AzureCredential,
  type AzureStoreOptions,
  DEFAULT_REQUEST_TIMEOUT_MS,
} from "./azure-store-options.js";
import { isCosmosEndpoint, isLoopbackHost, parseEndpoint } from "./endpoint.js";
import { LazyAzureBlobs } from "./lazy-blobs.js";

/** What `AzureStore` derives from its URL, credential and options, once, at construction. */
export interface AzureStoreSettings {
  /** The service's origin (scheme, host and port; no path, SAS or key). */
  readonly endpoint: string;
  readonly allowInsecureConnection: boolean;
  /** The per-request timeout in milliseconds; 0 when disabled. */
  readonly timeoutMs: number;
  /** Exact secret values to scrub from messages. */
  readonly secrets: readonly string[];
  readonly clientOptions: TableServiceClientOptions;
  readonly blobs: BlobStore | undefined;
  /** Typed reads ask for `odata=nometadata` payloads (see nometadata-rows.ts). */
  readonly nometadata: boolean;
  readonly capabilities: StoreCapabilities;
}

/** Validates `AzureStore`'s options (`ValidationError` before any request) and derives its settings. */
export function resolveAzureStoreSettings(
  url: string,
  credential: AzureCredential,
  options: AzureStoreOptions,
): AzureStoreSettings {
  const endpoint = parseEndpoint(url);
  const allowInsecureConnection = options.allowInsecureConnection ?? isLoopbackHost(endpoint.hostname);
  if (endpoint.protocol === "http:" && !allowInsecureConnection) {
    throw new ValidationError(
      "insecure-connection",
      `AzureStore: the endpoint ${redactSecrets(endpoint.origin)} uses http://, which would send credentials ` +
        "unencrypted. Use https://, or pass { allowInsecureConnection: true } (the default only for loopback hosts).",
    );
  }
  if (options.agent !== undefined && !(options.agent instanceof HttpAgent)) {
    throw new ValidationError("agent", "AzureStore: agent must be an http.Agent or https.Agent");
  }
  const timeoutMs = requestTimeoutOf(options);
  const secrets = secretsOf(url, credential);
  const clientOptions = sdkClientOptions(options, allowInsecureConnection);
  const blobs = blobStoreOf(options, credential, timeoutMs, secrets);
  const cosmos = isCosmosEndpoint(endpoint);
  if (options.metadata !== undefined && options.metadata !== "none" && options.metadata !== "minimal") {
    throw new ValidationError(
      "metadata",
      `AzureStore: metadata must be "none" or "minimal", got ${String(options.metadata)}`,
    );
  }
  return {
    endpoint: endpoint.origin,
    allowInsecureConnection,
    timeoutMs,
    secrets,
    clientOptions,
    blobs,
    // The ETag rule of nometadata rows (nometadata-rows.ts) is verified on Azure Table storage's
    // protocol (Azurite) only: the Cosmos DB Table API keeps minimal metadata.
    nometadata: options.metadata !== "minimal" && !cosmos,
    capabilities: capabilitiesOf(endpoint, cosmos),
  };
}

/**
 * The per-request timeout in milliseconds (0 when disabled: 0 or Infinity); a negative or NaN one is
 * refused, and so is a finite one longer than a Node timer can wait (`MAX_TIMER_MS`): the SDK arms one
 * timer of this length per request, and Node would fire it after 1 ms, aborting every request at once.
 */
function requestTimeoutOf(options: AzureStoreOptions): number {
  const timeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  if (Number.isNaN(timeout) || timeout < 0) {
    throw new ValidationError("request-timeout", `AzureStore: requestTimeoutMs must be >= 0, got ${timeout}`);
  }
  if (Number.isFinite(timeout) && timeout > MAX_TIMER_MS) {
    throw new ValidationError(
      "request-timeout",
      `AzureStore: requestTimeoutMs must be at most ${MAX_TIMER_MS} (the longest a Node timer waits), got ${timeout}; pass Infinity or 0 for no timeout`,
    );
  }
  return timeout > 0 && Number.isFinite(timeout) ? timeout : 0;
}

/** The SDK client's options: tablekit's user agent, no SDK retries unless asked, the given HTTP client or agent. */
function sdkClientOptions(
  options: AzureStoreOptions,
  allowInsecureConnection: boolean,
): TableServiceClientOptions {
  return {
    allowInsecureConnection,
    // tablekit has its own retry layer; see AzureStoreOptions.sdkRetries.
    retryOptions: { maxRetries: options.sdkRetries ?? 0 },
    userAgentOptions: { userAgentPrefix: "tablekit" },
    ...(options.httpClient === undefined ? {} : { httpClient: options.httpClient }),
    // The pipeline's agent policy sets it on every request; the default HTTP client honours it.
    ...(options.agent === undefined ? {} : { agent: options.agent }),
  };
}

/** The blob store of large values, when a blob endpoint is given (http:// only where allowed, as for the table endpoint). */
function blobStoreOf(
  options: AzureStoreOptions,
  credential: AzureCredential,
  timeoutMs: number,
  secrets: readonly string[],
): BlobStore | undefined {
  if (options.blobEndpoint === undefined) return undefined;
  const blobEndpoint = parseEndpoint(options.blobEndpoint);
  if (
    blobEndpoint.protocol === "http:" &&
    !(options.allowInsecureConnection ?? isLoopbackHost(blobEndpoint.hostname))
  ) {
    throw new ValidationError(
      "insecure-connection",
      `AzureStore: the blob endpoint ${redactSecrets(blobEndpoint.origin)} uses http://; use https://, or pass { allowInsecureConnection: true }`,
    );
  }
  return new LazyAzureBlobs(options.blobEndpoint, credential, { timeoutMs, secrets });
}

/** Sorted results and limits by service (the Cosmos DB Table API's differ), and the URL batches are sized on. */
function capabilitiesOf(endpoint: URL, cosmos: boolean): StoreCapabilities {
  return {
    sortedResults: !cosmos,
    limits: {
      ...(cosmos ? COSMOS_TABLE_LIMITS : AZURE_TABLE_LIMITS),
      // Batches are sized on the request lines this endpoint gives them (no query: never a SAS).
      accountUrl: `${endpoint.protocol}//${endpoint.host}${endpoint.pathname}`,
    },
  };
}

/** Exact secret values to scrub from messages: the account key, the SAS token and its signature. */
function secretsOf(url: string, credential: AzureCredential): string[] {
  const secrets: string[] = [];
  const candidate = credential as { key?: unknown; signature?: unknown };
  if (typeof candidate.key === "string") secrets.push(candidate.key);
  if (typeof candidate.signature === "string") {
    secrets.push(candidate.signature);
    const sig = new URLSearchParams(candidate.signature).get("sig");
    if (sig) secrets.push(sig, encodeURIComponent(sig));
  }
  const urlSig = new URLSearchParams(url.split("?")[1] ?? "").get("sig");
  if (urlSig) secrets.push(urlSig, encodeURIComponent(urlSig));
  return secrets;
}
