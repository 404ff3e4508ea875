import type { Agent as HttpAgent } from "node:http";
import type { NamedKeyCredential, SASCredential, TokenCredential } from "@azure/core-auth";
import type { HttpClient } from "@azure/core-rest-pipeline";

/** Options of `AzureStore`. */
export interface AzureStoreOptions {
  /**
   * Allow `http://` endpoints. Default: true for loopback hosts (localhost, 127.0.0.0/8, ::1, which covers
   * `UseDevelopmentStorage=true`), false otherwise: then an `http://` endpoint is refused at construction.
   */
  allowInsecureConnection?: boolean | undefined;
  /**
   * Per-request timeout in milliseconds (default 30,000); `0` or `Infinity` disables it. At most
   * 2,147,483,647 (about 24.8 days, the longest a Node timer waits); a longer one is refused.
   */
  requestTimeoutMs?: number | undefined;
  /**
   * The Node `http.Agent` (or `https.Agent`, for an `https://` endpoint) every table request goes through,
   * e.g. `new https.Agent({ keepAlive: true, maxSockets: 50 })` to bound and reuse connections;
   * the SDK's own HTTP client stays. Default: the SDK's shared keep-alive agent.
   */
  agent?: HttpAgent | undefined;
  /** The HTTP client the SDK sends requests with (e.g. to inject faults in tests). */
  httpClient?: HttpClient | undefined;
  /**
   * Retries inside the SDK's own pipeline (default 0). tablekit retries at a higher level, so the SDK's
   * retries are off unless asked for: two layers would multiply attempts and hide failures.
   */
  sdkRetries?: number | undefined;
  /**
   * The payload format of typed reads (repositories' get, find, scan, index reads). `"none"` (the
   * default) asks for JSON without type annotations (`odata=nometadata`, about 30% fewer bytes) and
   * types the values by the entity model; `"minimal"` keeps the annotated format. The Cosmos DB Table
   * API always uses minimal metadata. Untyped reads (`db.dynamic`, `db.query(A, B)`) always do.
   */
  metadata?: "none" | "minimal" | undefined;
  /**
   * The Blob service endpoint of the same account (e.g. `https://account.blob.core.windows.net`), where
   * large entity values (`@Column({ large: true })`) are kept, with the same credential. Default: none
   * (an entity with a large column is then refused); `fromConnectionString` takes it from the string.
   */
  blobEndpoint?: string | undefined;
}

/** Default per-request timeout. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** The credentials `AzureStore` accepts: Microsoft Entra ID, account key, or SAS. */
export type AzureCredential = TokenCredential | NamedKeyCredential | SASCredential;
