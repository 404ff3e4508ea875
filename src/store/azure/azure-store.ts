import { Agent as HttpAgent } from "node:http";
import {
  isNamedKeyCredential,
  type NamedKeyCredential,
  type SASCredential,
  type TokenCredential,
} from "@azure/core-auth";
import {
  createDefaultHttpClient,
  createPipelineRequest,
  type HttpClient,
  type PipelineResponse,
  RestError,
} from "@azure/core-rest-pipeline";
import {
  generateTableSas,
  type TransactionAction as SdkTransactionAction,
  TableClient,
  TableServiceClient,
  type TableServiceClientOptions,
} from "@azure/data-tables";
import { EntityNotFoundError, StoreError, TransactionError, ValidationError } from "../../errors.js";
import { AZURE_TABLE_LIMITS, COSMOS_TABLE_LIMITS } from "../../util/store-limits.js";
import type {
  BlobStore,
  PropertyTypes,
  StoreCapabilities,
  StoreContinuation,
  StoredEntity,
  StorePage,
  StoreQuery,
  TableSasIssuer,
  TableSasRequest,
  TableStore,
  TransactionAction,
  WireEntity,
  WriteMode,
  WriteResult,
} from "../table-store.js";
import { type AzureErrorContext, translateAzureError } from "./azure-errors.js";
import { type AzureStoreOptions, DEFAULT_REQUEST_TIMEOUT_MS } from "./azure-store-options.js";
import { parseConnectionString } from "./connection-string.js";
import { fromSdkContinuationToken, toSdkContinuationToken } from "./continuation-token.js";
import { isCosmosEndpoint, isLoopbackHost, parseEndpoint } from "./endpoint.js";
import { LazyAzureBlobs } from "./lazy-blobs.js";
import { asSelected, nometadataRowReader } from "./nometadata-rows.js";
import { redactSecrets } from "./redact-secrets.js";
import { fromSdkPointEntity, fromSdkQueryEntity, toSdkEntity } from "./sdk-entity.js";
import {
  deleteEtagsPending,
  expectDeleteEtags,
  transactionDeleteEtagPolicy,
} from "./transaction-delete-etags.js";

export type { AzureStoreOptions } from "./azure-store-options.js";

/** SDK options of a point operation. */
interface PointOptions {
  requestOptions?: { timeout: number };
}

/** The credentials `AzureStore` accepts: Microsoft Entra ID, account key, or SAS. */
export type AzureCredential = TokenCredential | NamedKeyCredential | SASCredential;

/** The `TableStore` for Azure Table Storage, Azurite and the Cosmos DB Table API, through `@azure/data-tables`. */
export class AzureStore implements TableStore, TableSasIssuer {
  readonly name = "azure";
  readonly capabilities: StoreCapabilities;
  /** The account's blobs (large entity values), when a blob endpoint is known. */
  readonly blobs: BlobStore | undefined;
  /** The service's origin (scheme, host and port; no path, SAS or key), for telemetry. */
  readonly endpoint: string;

  readonly #url: string;
  readonly #credential: AzureCredential;
  readonly #clientOptions: TableServiceClientOptions;
  readonly #timeoutMs: number;
  /** Options of every point operation: the pipeline's own per-request timeout (see #runPoint). */
  readonly #pointOptions: PointOptions;
  readonly #secrets: readonly string[];
  readonly #clients = new Map<string, TableClient>();
  #service: TableServiceClient | undefined;
  /** Typed reads ask for `odata=nometadata` payloads (see nometadata-rows.ts). */
  readonly #nometadata: boolean;
  /** The HTTP client of the typed reads, sent through the table client's own pipeline. */
  #http: HttpClient | undefined;
  readonly #customHttp: HttpClient | undefined;
  readonly #allowInsecure: boolean;

  /**
   * Connects with an account-key or SAS connection string, or `UseDevelopmentStorage=true`; the blob
   * endpoint (for large values) comes from its `BlobEndpoint` unless `options.blobEndpoint` is given.
   */
  static fromConnectionString(connectionString: string, options: AzureStoreOptions = {}): AzureStore {
    const { url, credential, blobUrl } = parseConnectionString(connectionString);
    const blob = options.blobEndpoint === undefined && blobUrl !== undefined ? { blobEndpoint: blobUrl } : {};
    return new AzureStore(url, credential, { ...options, ...blob });
  }

  constructor(url: string, credential: AzureCredential, options: AzureStoreOptions = {}) {
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
    const timeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    if (Number.isNaN(timeout) || timeout < 0) {
      throw new ValidationError(
        "request-timeout",
        `AzureStore: requestTimeoutMs must be >= 0, got ${timeout}`,
      );
    }
    this.#url = url;
    this.endpoint = endpoint.origin;
    this.#credential = credential;
    this.#timeoutMs = timeout > 0 && Number.isFinite(timeout) ? timeout : 0;
    this.#pointOptions = this.#timeoutMs > 0 ? { requestOptions: { timeout: this.#timeoutMs } } : {};
    this.#secrets = secretsOf(url, credential);
    this.#clientOptions = {
      allowInsecureConnection,
      // tablekit has its own retry layer; see AzureStoreOptions.sdkRetries.
      retryOptions: { maxRetries: options.sdkRetries ?? 0 },
      userAgentOptions: { userAgentPrefix: "tablekit" },
      ...(options.httpClient === undefined ? {} : { httpClient: options.httpClient }),
      // The pipeline's agent policy sets it on every request; the default HTTP client honours it.
      ...(options.agent === undefined ? {} : { agent: options.agent }),
    };
    if (options.blobEndpoint !== undefined) {
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
    }
    this.blobs =
      options.blobEndpoint === undefined
        ? undefined
        : new LazyAzureBlobs(options.blobEndpoint, credential, {
            timeoutMs: this.#timeoutMs,
            secrets: this.#secrets,
          });
    const cosmos = isCosmosEndpoint(endpoint);
    if (options.metadata !== undefined && options.metadata !== "none" && options.metadata !== "minimal") {
      throw new ValidationError(
        "metadata",
        `AzureStore: metadata must be "none" or "minimal", got ${String(options.metadata)}`,
      );
    }
    // The ETag rule of nometadata rows (nometadata-rows.ts) is verified on Azure Table storage's
    // protocol (Azurite) only: the Cosmos DB Table API keeps minimal metadata.
    this.#nometadata = options.metadata !== "minimal" && !cosmos;
    this.#customHttp = options.httpClient;
    this.#allowInsecure = allowInsecureConnection;
    this.capabilities = {
      sortedResults: !cosmos,
      limits: {
        ...(cosmos ? COSMOS_TABLE_LIMITS : AZURE_TABLE_LIMITS),
        // Batches are sized on the request lines this endpoint gives them (no query: never a SAS).
        accountUrl: `${endpoint.protocol}//${endpoint.host}${endpoint.pathname}`,
      },
    };
  }

  /**
   * A SAS token for one table limited to one partition (and an optional inclusive RowKey range), signed
   * locally with the account key (`generateTableSas`; nothing is sent). A store connected with a SAS or
   * a Microsoft Entra ID token has no key to sign with: `ValidationError`.
   */
  tableSas(table: string, request: TableSasRequest): string {
    const credential = this.#credential;
    if (!isNamedKeyCredential(credential)) {
      throw new ValidationError(
        "sas-credential",
        "AzureStore: a SAS is signed with the account key; this store was connected with a SAS or a token credential (use an account-key connection string)",
      );
    }
    const permissions = request.permissions;
    return generateTableSas(table, credential, {
      permissions: {
        query: permissions.includes("r"),
        add: permissions.includes("a"),
        update: permissions.includes("u"),
        delete: permissions.includes("d"),
      },
      expiresOn: request.expiresOn,
      ...(request.startsOn === undefined ? {} : { startsOn: request.startsOn }),
      startPartitionKey: request.partitionKey,
      endPartitionKey: request.partitionKey,
      ...(request.rowKeys === undefined
        ? {}
        : { startRowKey: request.rowKeys.start, endRowKey: request.rowKeys.end }),
    });
  }

  async createTable(table: string): Promise<void> {
    const client = this.#client(table);
    // The SDK already treats 409 TableAlreadyExists as success.
    await this.#runPoint({ operation: "createTable", table }, (options) => client.createTable(options));
  }

  async deleteTable(table: string): Promise<void> {
    const client = this.#client(table);
    // The SDK already treats 404 as success.
    await this.#runPoint({ operation: "deleteTable", table }, (options) => client.deleteTable(options));
  }

  async listTables(prefix = ""): Promise<string[]> {
    // TableServiceClient's overloads take one credential kind each; at runtime it accepts all of them.
    this.#service ??= new TableServiceClient(
      this.#url,
      this.#credential as NamedKeyCredential,
      this.#clientOptions,
    );
    const service = this.#service;
    const filter = tableNamePrefixFilter(prefix);
    return this.#runWhole({ operation: "listTables", table: prefix }, async (abortSignal) => {
      const names: string[] = [];
      const tables = service.listTables({
        abortSignal,
        ...(filter === undefined ? {} : { queryOptions: { filter } }),
      });
      for await (const table of tables) {
        if (table.name?.startsWith(prefix)) names.push(table.name);
      }
      return names.sort();
    });
  }

  async getEntity(
    table: string,
    partitionKey: string,
    rowKey: string,
    select?: readonly string[],
    types?: PropertyTypes,
  ): Promise<StoredEntity | undefined> {
    const client = this.#client(table);
    if (types !== undefined && this.#nometadata) {
      const entity = await this.#getNometadata(client, table, partitionKey, rowKey, select, types);
      // `null`: a value the model cannot type; read the row again with its type annotations.
      if (entity !== null) return entity && asSelected(entity, select);
    }
    try {
      const options =
        select !== undefined && select.length > 0
          ? { ...this.#pointOptions, queryOptions: { select: select as string[] } }
          : this.#pointOptions;
      const entity = await this.#runPoint({ operation: "getEntity", table, partitionKey, rowKey }, () =>
        client.getEntity(partitionKey, rowKey, options),
      );
      return fromSdkPointEntity(entity);
    } catch (error) {
      if (error instanceof EntityNotFoundError) return undefined;
      throw error;
    }
  }

  async queryPage(table: string, query: StoreQuery): Promise<StorePage> {
    const client = this.#client(table);
    if (query.types !== undefined && this.#nometadata) {
      const page = await this.#queryNometadata(client, table, query, query.types);
      // Too many rows the model cannot type: the whole page again with type annotations.
      if (page !== undefined) {
        for (const item of page.items) asSelected(item, query.select);
        return page;
      }
    }
    return this.#queryMinimal(client, table, query);
  }

  /** One query page through the SDK, with minimal metadata (type annotations). */
  async #queryMinimal(client: TableClient, table: string, query: StoreQuery): Promise<StorePage> {
    const select =
      query.select !== undefined && query.select.length > 0 ? (query.select as string[]) : undefined;
    const page = await this.#runWhole({ operation: "queryPage", table }, async (abortSignal) => {
      const pages = client
        .listEntities({
          abortSignal,
          queryOptions: {
            ...(query.filter === undefined ? {} : { filter: query.filter }),
            ...(select === undefined ? {} : { select }),
          },
        })
        .byPage({
          ...(query.top === undefined ? {} : { maxPageSize: query.top }),
          ...(query.continuation ? { continuationToken: toSdkContinuationToken(query.continuation) } : {}),
        });
      return (await pages.next()).value;
    });
    if (page === undefined) return { items: [] };
    // A fresh array: the SDK's page also carries a `continuationToken` property.
    const items: StoredEntity[] = new Array(page.length);
    for (let i = 0; i < page.length; i++) items[i] = fromSdkQueryEntity(page[i] as Record<string, unknown>);
    const continuation = fromSdkContinuationToken(page.continuationToken);
    return continuation === undefined ? { items } : { items, continuation };
  }

  async insert(table: string, entity: WireEntity): Promise<WriteResult> {
    const client = this.#client(table);
    const context = {
      operation: "insert",
      table,
      partitionKey: entity.partitionKey,
      rowKey: entity.rowKey,
    } as const;
    const response = await this.#runPoint(context, (options) =>
      client.createEntity(toSdkEntity(entity), options),
    );
    return { etag: response.etag ?? "" };
  }

  async upsert(table: string, entity: WireEntity, mode: WriteMode): Promise<WriteResult> {
    const client = this.#client(table);
    const context = {
      operation: "upsert",
      table,
      partitionKey: entity.partitionKey,
      rowKey: entity.rowKey,
    } as const;
    const response = await this.#runPoint(context, (options) =>
      client.upsertEntity(toSdkEntity(entity), sdkMode(mode), options),
    );
    return { etag: response.etag ?? "" };
  }

  async update(table: string, entity: WireEntity, mode: WriteMode, ifMatch: string): Promise<WriteResult> {
    const client = this.#client(table);
    const context = {
      operation: "update",
      table,
      partitionKey: entity.partitionKey,
      rowKey: entity.rowKey,
    } as const;
    const response = await this.#runPoint(context, (options) =>
      client.updateEntity(toSdkEntity(entity), sdkMode(mode), { ...options, etag: ifMatch }),
    );
    return { etag: response.etag ?? "" };
  }

  async delete(table: string, partitionKey: string, rowKey: string, ifMatch: string): Promise<boolean> {
    const client = this.#client(table);
    try {
      await this.#runPoint({ operation: "delete", table, partitionKey, rowKey }, (options) =>
        client.deleteEntity(partitionKey, rowKey, { ...options, etag: ifMatch }),
      );
      return true;
    } catch (error) {
      if (error instanceof EntityNotFoundError) return false;
      throw error;
    }
  }

  async submitTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]> {
    // Rejected before any request, with the errors the service (and MemoryStore) give for them.
    if (actions.length === 0) {
      throw new TransactionError({
        index: 0,
        table,
        partitionKey,
        statusCode: 400,
        serviceCode: "InvalidInput",
        message: "a transaction needs at least one operation",
      });
    }
    const client = this.#client(table);
    const sdkActions: SdkTransactionAction[] = new Array(actions.length);
    let deleteEtags: Map<number, string> | undefined;
    for (let index = 0; index < actions.length; index++) {
      const action = actions[index]!;
      const actionPartitionKey = action.kind === "delete" ? action.partitionKey : action.entity.partitionKey;
      if (actionPartitionKey !== partitionKey) {
        throw new TransactionError({
          index,
          table,
          partitionKey,
          rowKey: action.kind === "delete" ? action.rowKey : action.entity.rowKey,
          statusCode: 400,
          serviceCode: "CommandsInBatchActOnDifferentPartitions",
          message: `all operations must use PartitionKey '${partitionKey}', this one uses '${actionPartitionKey}'`,
        });
      }
      switch (action.kind) {
        case "insert":
          sdkActions[index] = ["create", toSdkEntity(action.entity)];
          break;
        case "upsert":
          sdkActions[index] = ["upsert", toSdkEntity(action.entity), sdkMode(action.mode)];
          break;
        case "update":
          sdkActions[index] = [
            "update",
            toSdkEntity(action.entity),
            sdkMode(action.mode),
            { etag: action.ifMatch },
          ];
          break;
        case "delete":
          sdkActions[index] = ["delete", { partitionKey: action.partitionKey, rowKey: action.rowKey }];
          if (/[\r\n]/.test(action.ifMatch)) {
            // It is pasted into the raw batch body: a line break would inject headers.
            throw new ValidationError("etag", `Transaction operation ${index} has an ETag with a line break`);
          }
          if (action.ifMatch !== "*") {
            deleteEtags ??= new Map();
            deleteEtags.set(index, action.ifMatch);
          }
          break;
      }
    }
    const context: AzureErrorContext = { operation: "submitTransaction", table, partitionKey, actions };
    const response = await this.#runWhole(context, async (abortSignal) => {
      if (deleteEtags !== undefined) expectDeleteEtags(abortSignal, actions.length, deleteEtags);
      const result = await client.submitTransaction(sdkActions, { abortSignal });
      if (deleteEtags !== undefined && deleteEtagsPending(abortSignal)) {
        // Cannot happen unless the SDK changed how it sends batches; never let it pass silently.
        throw new StoreError(
          "Internal error: the conditional deletes of a transaction were sent without their ETags",
        );
      }
      return result;
    });
    const results: WriteResult[] = new Array(actions.length);
    // Deletes have no ETag: their result carries "".
    for (let i = 0; i < actions.length; i++) results[i] = { etag: response.subResponses[i]?.etag ?? "" };
    return results;
  }

  /** A point read with `odata=nometadata`; `null` when a value does not fit the model. */
  async #getNometadata(
    client: TableClient,
    table: string,
    partitionKey: string,
    rowKey: string,
    select: readonly string[] | undefined,
    types: PropertyTypes,
  ): Promise<StoredEntity | undefined | null> {
    const path = `${encodeURIComponent(table)}(PartitionKey='${encodeURIComponent(quote(partitionKey))}',RowKey='${encodeURIComponent(quote(rowKey))}')`;
    const url = this.#readUrl(path, selectParam(select));
    let response: PipelineResponse;
    try {
      response = await this.#runPoint({ operation: "getEntity", table, partitionKey, rowKey }, () =>
        this.#send(client, url, undefined),
      );
    } catch (error) {
      if (error instanceof EntityNotFoundError) return undefined;
      throw error;
    }
    const row = bodyOf(response) as Record<string, unknown> | undefined;
    const entity = row === undefined ? undefined : nometadataRowReader(types)(row);
    if (entity === undefined) return null;
    // A point read answers with the ETag itself: take the service's word for it.
    const etag = response.headers.get("etag");
    if (etag) entity.etag = etag;
    return entity;
  }

  /**
   * One query page with `odata=nometadata`. Rows the model cannot type are read again one by one;
   * `undefined` when there are more than `MAX_ROW_REREADS` of them (the caller reads the page again).
   */
  async #queryNometadata(
    client: TableClient,
    table: string,
    query: StoreQuery,
    types: PropertyTypes,
  ): Promise<StorePage | undefined> {
    let params = selectParam(query.select);
    if (query.filter !== undefined) params += `&$filter=${encodeURIComponent(query.filter)}`;
    if (query.top !== undefined) params += `&$top=${query.top}`;
    const continuation = query.continuation;
    if (continuation) {
      params += `&NextPartitionKey=${encodeURIComponent(continuation.nextPartitionKey)}`;
      // The SDK omits an empty or absent NextRowKey; mirror it.
      if (continuation.nextRowKey) params += `&NextRowKey=${encodeURIComponent(continuation.nextRowKey)}`;
    }
    const url = this.#readUrl(`${encodeURIComponent(table)}()`, params);
    const response = await this.#runWhole({ operation: "queryPage", table }, (abortSignal) =>
      this.#send(client, url, abortSignal),
    );
    const rows = (bodyOf(response) as { value?: Array<Record<string, unknown>> } | undefined)?.value ?? [];
    const read = nometadataRowReader(types);
    const items: Array<StoredEntity | undefined> = new Array(rows.length);
    let untyped: number[] | undefined;
    for (let i = 0; i < rows.length; i++) {
      const entity = read(rows[i] as Record<string, unknown>);
      if (entity === undefined) {
        untyped ??= [];
        untyped.push(i);
      }
      items[i] = entity;
    }
    if (untyped !== undefined) {
      if (untyped.length > MAX_ROW_REREADS) return undefined;
      for (const i of untyped) {
        const row = rows[i] as Record<string, unknown>;
        if (typeof row.PartitionKey !== "string" || typeof row.RowKey !== "string") return undefined;
        items[i] = await this.#rereadRow(client, table, query, row.PartitionKey, row.RowKey);
      }
    }
    const kept =
      untyped === undefined ? (items as StoredEntity[]) : items.filter((item) => item !== undefined);
    const nextPartitionKey = response.headers.get("x-ms-continuation-nextpartitionkey");
    if (!nextPartitionKey) return { items: kept };
    const nextRowKey = response.headers.get("x-ms-continuation-nextrowkey");
    return {
      items: kept,
      continuation: nextRowKey ? { nextPartitionKey, nextRowKey } : { nextPartitionKey },
    };
  }

  /**
   * One row of a light page that the model could not type, read again with type annotations under
   * the page's own filter (narrowed to its keys) and `$select`: its current version if it still
   * matches, `undefined` if it was deleted or changed out of the filter since (a query is no snapshot).
   */
  async #rereadRow(
    client: TableClient,
    table: string,
    query: StoreQuery,
    partitionKey: string,
    rowKey: string,
  ): Promise<StoredEntity | undefined> {
    const keys = `PartitionKey eq '${quote(partitionKey)}' and RowKey eq '${quote(rowKey)}'`;
    let continuation: StoreContinuation | undefined;
    do {
      const page = await this.#queryMinimal(client, table, {
        filter: query.filter === undefined ? keys : `(${query.filter}) and ${keys}`,
        ...(query.select === undefined ? {} : { select: query.select }),
        ...(continuation === undefined ? {} : { continuation }),
      });
      if (page.items.length > 0) return page.items[0];
      continuation = page.continuation;
    } while (continuation !== undefined);
    return undefined;
  }

  /** The URL of a read: the account URL (which may carry a SAS query) plus `path` and the query text. */
  #readUrl(path: string, params: string): string {
    const at = this.#url.indexOf("?");
    const base = at < 0 ? this.#url : this.#url.slice(0, at);
    const sas = at < 0 ? "" : `&${this.#url.slice(at + 1)}`;
    return `${base.endsWith("/") ? base : `${base}/`}${path}?$format=${NOMETADATA_FORMAT}${params}${sas}`;
  }

  /**
   * Sends one GET through the table client's own pipeline (authentication, agent, user agent, logging:
   * the same policies as the SDK's calls), skipping only the SDK's mapper-driven deserialisation. A
   * failure becomes the `RestError` the SDK would raise, so error translation stays one code path.
   */
  async #send(
    client: TableClient,
    url: string,
    abortSignal: AbortSignal | undefined,
  ): Promise<PipelineResponse> {
    const request = createPipelineRequest({
      url,
      method: "GET",
      allowInsecureConnection: this.#allowInsecure,
      ...(abortSignal === undefined ? { timeout: this.#timeoutMs } : { abortSignal }),
    });
    request.headers.set("Accept", NOMETADATA_FORMAT);
    request.headers.set("x-ms-version", SERVICE_VERSION);
    request.headers.set("DataServiceVersion", "3.0");
    this.#http ??= this.#customHttp ?? createDefaultHttpClient();
    const response = await client.pipeline.sendRequest(this.#http, request);
    if (response.status >= 200 && response.status < 300) return response;
    const body = bodyOf(response) as { "odata.error"?: unknown } | undefined;
    const error = new RestError(response.bodyAsText ?? "", {
      statusCode: response.status,
      request,
      response,
    });
    // Where the SDK's error mapper puts them (see azure-errors.ts).
    error.details = { errorCode: response.headers.get("x-ms-error-code"), odataError: body?.["odata.error"] };
    throw error;
  }

  /** One client per table: each holds its own pipeline. */
  #client(table: string): TableClient {
    let client = this.#clients.get(table);
    if (client === undefined) {
      // TableClient's overloads take one credential kind each; at runtime it accepts all of them.
      client = new TableClient(this.#url, table, this.#credential as NamedKeyCredential, this.#clientOptions);
      client.pipeline.addPolicy(transactionDeleteEtagPolicy, { phase: "Serialize" });
      this.#clients.set(table, client);
    }
    return client;
  }

  /**
   * Runs a single-entity or table call under the pipeline's own per-request timeout
   * (`requestOptions.timeout`) and translates its failure. That timer stops at the response headers,
   * which for these small responses is nearly the whole wait. An AbortSignal would also cover the body,
   * but costs ~25 µs of CPU per call in the SDK's HTTP client (listener bookkeeping): measured at ~4%
   * of a loopback point read, against a 5% budget.
   */
  async #runPoint<T>(context: AzureErrorContext, call: (options: PointOptions) => Promise<T>): Promise<T> {
    try {
      return await call(this.#pointOptions);
    } catch (error) {
      throw this.#translate(error, context);
    }
  }

  /**
   * Runs a query page or a transaction under an AbortSignal with the timeout, which also covers reading
   * the (possibly large) body, and translates its failure. The signal also identifies the transaction
   * to the delete-ETag policy.
   */
  async #runWhole<T>(context: AzureErrorContext, call: (abortSignal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const timer = this.#timeoutMs > 0 ? setTimeout(() => controller.abort(), this.#timeoutMs) : undefined;
    try {
      return await call(controller.signal);
    } catch (error) {
      throw this.#translate(error, context);
    } finally {
      clearTimeout(timer);
    }
  }

  #translate(error: unknown, context: AzureErrorContext): Error {
    return translateAzureError(error, { ...context, timeoutMs: this.#timeoutMs, secrets: this.#secrets });
  }
}

/**
 * The service filter of table names starting with `prefix`: `TableName ge 'p' and TableName lt 'q'`
 * (the only comparison the Tables API offers on names), or none for the empty prefix.
 */
function tableNamePrefixFilter(prefix: string): string | undefined {
  if (prefix === "") return undefined;
  const quote = (text: string): string => `'${text.replaceAll("'", "''")}'`;
  const last = prefix.charCodeAt(prefix.length - 1);
  const upper = prefix.slice(0, -1) + String.fromCharCode(last + 1);
  return `TableName ge ${quote(prefix)} and TableName lt ${quote(upper)}`;
}

/** Untypable rows of one light page read again one by one; more and the page is read again whole. */
const MAX_ROW_REREADS = 4;

/** The payload format of typed reads: JSON without type annotations. */
const NOMETADATA_FORMAT = "application/json;odata=nometadata";
/** The service version `@azure/data-tables` sends (generated/models/parameters.js). */
const SERVICE_VERSION = "2019-02-02";

/**
 * The parsed JSON body: the pipeline's deserialisation policy (core-client) has parsed it already
 * (`parsedBody`, no mapper runs for a request without an operation spec); parsed here otherwise.
 */
function bodyOf(response: PipelineResponse): unknown {
  const parsed = (response as { parsedBody?: unknown }).parsedBody;
  if (parsed !== undefined) return parsed;
  const text = response.bodyAsText;
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** `$select` of a typed read: Timestamp is always asked for, the ETag is derived from it. */
function selectParam(select: readonly string[] | undefined): string {
  if (select === undefined || select.length === 0) return "";
  const names = select.includes("Timestamp") ? select : [...select, "Timestamp"];
  return `&$select=${encodeURIComponent(names.join(","))}`;
}

/** A key inside an OData key literal: single quotes doubled. */
function quote(key: string): string {
  return key.replaceAll("'", "''");
}

function sdkMode(mode: WriteMode): "Replace" | "Merge" {
  return mode === "merge" ? "Merge" : "Replace";
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
