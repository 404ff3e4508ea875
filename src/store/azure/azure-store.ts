import { Agent as HttpAgent } from "node:http";
import type { NamedKeyCredential, SASCredential, TokenCredential } from "@azure/core-auth";
import {
  type TransactionAction as SdkTransactionAction,
  TableClient,
  TableServiceClient,
  type TableServiceClientOptions,
} from "@azure/data-tables";
import { EntityNotFoundError, StoreError, TransactionError, ValidationError } from "../../errors.js";
import { AZURE_TABLE_LIMITS, COSMOS_TABLE_LIMITS } from "../../util/store-limits.js";
import type {
  BlobStore,
  StoreCapabilities,
  StoredEntity,
  StorePage,
  StoreQuery,
  TableStore,
  TransactionAction,
  WireEntity,
  WriteMode,
  WriteResult,
} from "../table-store.js";
import { AzureBlobs } from "./azure-blobs.js";
import { type AzureErrorContext, translateAzureError } from "./azure-errors.js";
import { type AzureStoreOptions, DEFAULT_REQUEST_TIMEOUT_MS } from "./azure-store-options.js";
import { parseConnectionString } from "./connection-string.js";
import { fromSdkContinuationToken, toSdkContinuationToken } from "./continuation-token.js";
import { isCosmosEndpoint, isLoopbackHost, parseEndpoint } from "./endpoint.js";
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
export class AzureStore implements TableStore {
  readonly name = "azure";
  readonly capabilities: StoreCapabilities;
  /** The account's blobs (large entity values), when a blob endpoint is known. */
  readonly blobs: BlobStore | undefined;

  readonly #url: string;
  readonly #credential: AzureCredential;
  readonly #clientOptions: TableServiceClientOptions;
  readonly #timeoutMs: number;
  /** Options of every point operation: the pipeline's own per-request timeout (see #runPoint). */
  readonly #pointOptions: PointOptions;
  readonly #secrets: readonly string[];
  readonly #clients = new Map<string, TableClient>();
  #service: TableServiceClient | undefined;

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
        : new AzureBlobs(options.blobEndpoint, credential, {
            timeoutMs: this.#timeoutMs,
            secrets: this.#secrets,
          });
    const cosmos = isCosmosEndpoint(endpoint);
    this.capabilities = {
      sortedResults: !cosmos,
      limits: cosmos ? COSMOS_TABLE_LIMITS : AZURE_TABLE_LIMITS,
    };
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
  ): Promise<StoredEntity | undefined> {
    const client = this.#client(table);
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
