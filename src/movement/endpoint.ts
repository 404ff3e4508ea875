import type { NamedKeyCredential } from "@azure/core-auth";
import {
  createDefaultHttpClient,
  createPipelineRequest,
  type HttpClient,
  type Pipeline,
  type PipelineResponse,
} from "@azure/core-rest-pipeline";
import { TableServiceClient } from "@azure/data-tables";
import { StoreError } from "../errors.js";
import { parseConnectionString } from "../store/azure/connection-string.js";
import { isLoopbackHost, parseEndpoint } from "../store/azure/endpoint.js";
import { sanitizedCause } from "../store/azure/sanitized-cause.js";
import { markDoubles } from "../util/double-marks.js";
import { connectionStringSecrets, redactSecrets } from "../util/redact-secrets.js";
import { type BatchAnswer, batchBody, readBatchAnswer } from "./batch.js";
import { type Row, rowFromJson } from "./typed-row.js";

/** A request about to be sent again, and why (the CLI prints it from the first retry on). */
export interface RetryNotice {
  /** The request, e.g. `GET /Tables` or `$batch`. */
  what: string;
  /** The endpoint's origin (scheme, host and port). */
  endpoint: string;
  /** What went wrong: a status and service code, or a network error's code. */
  reason: string;
  /** The attempt that failed (1 for the first). */
  attempt: number;
  maxAttempts: number;
  delayMs: number;
}

export interface TableEndpointOptions {
  /** Per-request timeout (default 60 s). */
  timeoutMs?: number | undefined;
  /** Told before each retry. */
  onRetry?: ((notice: RetryNotice) => void) | undefined;
}

/** What a query reads: an OData filter and the properties to return (keys and Timestamp always). */
export interface ReadOptions {
  filter?: string | undefined;
  select?: readonly string[] | undefined;
}

/** The answer to a `$batch`, and whether an earlier attempt of it may have been applied (its answer lost). */
export type BatchOutcome = BatchAnswer & { maybeApplied: boolean };

const SERVICE_VERSION = "2019-02-02";
const MINIMAL = "application/json;odata=minimalmetadata";
/** Statuses worth another attempt: throttling, timeouts, server errors. */
const TRANSIENT = new Set([408, 429, 500, 502, 503, 504]);
const MAX_ATTEMPTS = 8;

/**
 * One account's Table endpoint, spoken to directly (raw JSON rows, hand-built `$batch` bodies) through
 * the pipeline of `@azure/data-tables` (authentication by account key or SAS, user agent, agent): the
 * SDK's own entity mapping would turn DateTime into `Date` (milliseconds) and lose the other digits.
 */
export class TableEndpoint {
  readonly url: string;
  readonly #pipeline: Pipeline;
  readonly #http: HttpClient;
  readonly #allowInsecure: boolean;
  readonly #timeoutMs: number;
  readonly #onRetry: ((notice: RetryNotice) => void) | undefined;
  /** The connection string's secret values: scrubbed from every error this endpoint throws. */
  readonly #secrets: readonly string[];

  static fromConnectionString(connectionString: string, options: TableEndpointOptions = {}): TableEndpoint {
    const { url, credential } = parseConnectionString(connectionString);
    return new TableEndpoint(url, credential as NamedKeyCredential, connectionString, options);
  }

  private constructor(
    url: string,
    credential: NamedKeyCredential,
    connectionString: string,
    options: TableEndpointOptions,
  ) {
    this.#secrets = connectionStringSecrets(connectionString);
    const endpoint = parseEndpoint(url);
    // http:// only to this machine (Azurite, `tablekit serve`): credentials would travel in clear.
    this.#allowInsecure = isLoopbackHost(endpoint.hostname);
    if (endpoint.protocol === "http:" && !this.#allowInsecure) {
      throw new StoreError(
        `the endpoint ${redactSecrets(endpoint.origin)} uses http:// on another host; use https://`,
      );
    }
    this.url = url.replace(/\/$/, "");
    const client = new TableServiceClient(this.url, credential, {
      allowInsecureConnection: this.#allowInsecure,
      retryOptions: { maxRetries: 0 },
      userAgentOptions: { userAgentPrefix: "tablekit-cli" },
    });
    this.#pipeline = client.pipeline;
    // The rows are read from the text (see double-marks.ts): no parse by the pipeline.
    this.#pipeline.removePolicy({ name: "deserializationPolicy" });
    this.#http = createDefaultHttpClient();
    this.#timeoutMs = options.timeoutMs ?? 60_000;
    this.#onRetry = options.onRetry;
  }

  /** The names of every table, in the service's order. */
  async listTables(): Promise<string[]> {
    const names: string[] = [];
    let next: string | undefined;
    do {
      const query = next === undefined ? "" : `?NextTableName=${encodeURIComponent(next)}`;
      const response = await this.#send("GET", `${this.url}/Tables${query}`, MINIMAL);
      const body = JSON.parse(response.bodyAsText ?? "{}") as { value?: Array<{ TableName: string }> };
      for (const t of body.value ?? []) names.push(t.TableName);
      next = response.headers.get("x-ms-continuation-nexttablename") ?? undefined;
    } while (next);
    return names;
  }

  /** Whether the table exists (a read of at most one row: 404 when it does not). */
  async tableExists(table: string): Promise<boolean> {
    const url = `${this.url}/${encodeURIComponent(table)}()?$top=1&$select=PartitionKey`;
    const response = await this.#send("GET", url, MINIMAL, { accept: [404] });
    return response.status !== 404;
  }

  /** Creates the table; succeeds if it exists. */
  async createTable(table: string): Promise<void> {
    const response = await this.#send("POST", `${this.url}/Tables`, MINIMAL, {
      body: JSON.stringify({ TableName: table }),
      contentType: "application/json",
      accept: [409],
    });
    if (response.status === 409 && errorCode(response) !== "TableAlreadyExists") {
      throw requestError(response, `create table ${table}`);
    }
  }

  /** The table's rows, page by page (one request each), in the service's order. */
  async *pages(table: string, options: ReadOptions = {}): AsyncGenerator<Row[]> {
    let params = "";
    if (options.filter !== undefined) params += `&$filter=${encodeURIComponent(options.filter)}`;
    if (options.select !== undefined && options.select.length > 0) {
      const names = new Set(["PartitionKey", "RowKey", "Timestamp", ...options.select]);
      params += `&$select=${encodeURIComponent([...names].join(","))}`;
    }
    let continuation = "";
    do {
      const query = (params + continuation).slice(1);
      const url = `${this.url}/${encodeURIComponent(table)}()${query === "" ? "" : `?${query}`}`;
      const response = await this.#send("GET", url, MINIMAL);
      const body = JSON.parse(markDoubles(response.bodyAsText ?? "{}")) as { value?: unknown[] };
      const rows = (body.value ?? []).map((json) => rowFromJson(json, true));
      yield rows;
      const nextPartitionKey = response.headers.get("x-ms-continuation-nextpartitionkey");
      const nextRowKey = response.headers.get("x-ms-continuation-nextrowkey");
      continuation = nextPartitionKey
        ? `&NextPartitionKey=${encodeURIComponent(nextPartitionKey)}${nextRowKey ? `&NextRowKey=${encodeURIComponent(nextRowKey)}` : ""}`
        : "";
    } while (continuation !== "");
  }

  /** The rows of one partition between two RowKeys (inclusive). */
  async rowsBetween(table: string, partitionKey: string, first: string, last: string): Promise<Row[]> {
    const q = (text: string) => `'${text.replaceAll("'", "''")}'`;
    const filter = `PartitionKey eq ${q(partitionKey)} and RowKey ge ${q(first)} and RowKey le ${q(last)}`;
    const rows: Row[] = [];
    for await (const page of this.pages(table, { filter })) rows.push(...page);
    return rows;
  }

  /**
   * Submits one entity group transaction of `parts` (see batch.ts), retrying throttling, server errors
   * and lost connections. `maybeApplied`: an attempt's answer was lost, so the service may have applied it.
   */
  async submitBatch(parts: readonly string[]): Promise<BatchOutcome> {
    const { contentType, body } = batchBody(parts);
    let maybeApplied = false;
    for (let attempt = 1; ; attempt++) {
      let response: PipelineResponse;
      try {
        response = await this.#sendOnce("POST", `${this.url}/$batch`, "application/json", body, contentType);
      } catch (error) {
        const failure = this.#networkError(error, "$batch");
        if (attempt >= MAX_ATTEMPTS || !retriable(failure)) throw failure;
        // The connection failed mid-request: the service may have applied the changeset.
        maybeApplied = true;
        await this.#backoff("$batch", failure.serviceCode ?? "network error", attempt);
        continue;
      }
      if (TRANSIENT.has(response.status)) {
        // A 500 or a timeout may come after the changeset was applied.
        if (response.status !== 429 && response.status !== 503) maybeApplied = true;
        if (attempt >= MAX_ATTEMPTS) throw this.#requestError(response, "$batch");
        await this.#backoff("$batch", statusOf(response), attempt);
        continue;
      }
      if (response.status !== 202) {
        // The whole request refused (e.g. 400 for a malformed body, 413 for a large one).
        return {
          ok: false,
          status: response.status,
          code: errorCode(response),
          message: errorMessage(response),
          index: undefined,
          maybeApplied,
        };
      }
      return { ...readBatchAnswer(response.bodyAsText ?? "", parts.length), maybeApplied };
    }
  }

  async #send(
    method: "GET" | "POST",
    url: string,
    accept: string,
    options: { body?: string; contentType?: string; accept?: number[] } = {},
  ): Promise<PipelineResponse> {
    const what = `${method} ${decodeURIComponent(new URL(url).pathname)}`;
    for (let attempt = 1; ; attempt++) {
      let response: PipelineResponse;
      try {
        response = await this.#sendOnce(method, url, accept, options.body, options.contentType);
      } catch (error) {
        const failure = this.#networkError(error, what);
        if (attempt >= MAX_ATTEMPTS || !retriable(failure)) throw failure;
        await this.#backoff(what, failure.serviceCode ?? "network error", attempt);
        continue;
      }
      if (response.status >= 200 && response.status < 300) return response;
      if (options.accept?.includes(response.status)) return response;
      if (TRANSIENT.has(response.status) && attempt < MAX_ATTEMPTS) {
        await this.#backoff(what, statusOf(response), attempt);
        continue;
      }
      throw this.#requestError(response, what);
    }
  }

  /** Tells the listener what is retried and why, then waits the attempt's back-off. */
  #backoff(what: string, reason: string, attempt: number): Promise<void> {
    const delayMs = Math.min(100 * 2 ** (attempt - 1), 5_000);
    const endpoint = redactSecrets(new URL(this.url).origin, this.#secrets);
    this.#onRetry?.({ what, endpoint, reason, attempt, maxAttempts: MAX_ATTEMPTS, delayMs });
    return new Promise((resolve) => setTimeout(resolve, delayMs));
  }

  /** A request that got no answer, as a StoreError that names the endpoint and never a secret. */
  #networkError(error: unknown, what: string): StoreError {
    const code = (error as { code?: unknown } | undefined)?.code;
    const serviceCode = typeof code === "string" && code !== "" ? code : undefined;
    const origin = redactSecrets(new URL(this.url).origin, this.#secrets);
    const text = error instanceof Error ? error.message : String(error);
    const reason =
      serviceCode === "ENOTFOUND"
        ? `the host name does not resolve (ENOTFOUND); check the connection string's endpoint`
        : redactSecrets(text, this.#secrets);
    return new StoreError(`${what} to ${origin} failed: ${reason}`, {
      ...(serviceCode === undefined ? {} : { serviceCode }),
      cause: sanitizedCause(error, (t) => redactSecrets(t, this.#secrets)),
    });
  }

  #requestError(response: PipelineResponse, what: string): StoreError {
    const error = requestError(response, what);
    const message = redactSecrets(error.message, this.#secrets);
    if (message === error.message) return error;
    return new StoreError(message, {
      statusCode: response.status,
      ...(error.serviceCode ? { serviceCode: error.serviceCode } : {}),
    });
  }

  #sendOnce(
    method: "GET" | "POST",
    url: string,
    accept: string,
    body?: string,
    contentType?: string,
  ): Promise<PipelineResponse> {
    const request = createPipelineRequest({
      url,
      method,
      allowInsecureConnection: this.#allowInsecure,
      timeout: this.#timeoutMs,
      ...(body === undefined ? {} : { body }),
    });
    request.headers.set("Accept", accept);
    request.headers.set("x-ms-version", SERVICE_VERSION);
    request.headers.set("DataServiceVersion", "3.0");
    request.headers.set("MaxDataServiceVersion", "3.0;NetFx");
    if (contentType !== undefined) request.headers.set("Content-Type", contentType);
    return this.#pipeline.sendRequest(this.#http, request);
  }
}

/** A network failure worth another attempt: not a host name that does not resolve (it will not start to). */
function retriable(failure: StoreError): boolean {
  return failure.serviceCode !== "ENOTFOUND";
}

function statusOf(response: PipelineResponse): string {
  return `${response.status} ${errorCode(response)}`.trim();
}

function errorCode(response: PipelineResponse): string {
  const header = response.headers.get("x-ms-error-code");
  if (header) return header;
  try {
    return (
      (JSON.parse(response.bodyAsText ?? "") as { "odata.error"?: { code?: string } })["odata.error"]?.code ??
      ""
    );
  } catch {
    return "";
  }
}

function errorMessage(response: PipelineResponse): string {
  try {
    const error = (
      JSON.parse(response.bodyAsText ?? "") as { "odata.error"?: { message?: { value?: string } } }
    )["odata.error"];
    return (error?.message?.value ?? "").split("\n")[0]!;
  } catch {
    return (response.bodyAsText ?? "").slice(0, 200);
  }
}

function requestError(response: PipelineResponse, what: string): StoreError {
  const code = errorCode(response);
  return new StoreError(`${what} failed: ${response.status} ${code} ${errorMessage(response)}`.trim(), {
    statusCode: response.status,
    ...(code ? { serviceCode: code } : {}),
  });
}
