import type { NamedKeyCredential } from "@azure/core-auth";
import {
  createDefaultHttpClient,
  type HttpClient,
  type PipelineRequest,
  type PipelineResponse,
} from "@azure/core-rest-pipeline";
import { TableClient, TableServiceClient, type TableServiceClientOptions } from "@azure/data-tables";
import { EntityNotFoundError } from "../../errors.js";
import { batchTableUrl, sdkBatchesAsCosmos } from "../batch-body-size.js";
import { deletedUnlessAbsent } from "../delete-outcome.js";
import type {
  BlobStore,
  PropertyTypes,
  StoreCapabilities,
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
import { AzureCalls } from "./azure-calls.js";
import type { AzureErrorContext } from "./azure-errors.js";
import type { AzureCredential, AzureStoreOptions } from "./azure-store-options.js";
import { resolveAzureStoreSettings } from "./azure-store-settings.js";
import {
  accountUrlParts,
  type BatchTarget,
  batchBody,
  batchIds,
  batchRequest,
  batchResults,
  batchUrlOf,
} from "./batch-request.js";
import { parseConnectionString } from "./connection-string.js";
import {
  type EntityWrite,
  entityDeleteRequest,
  entityWriteRequest,
  type WriteTarget,
  writeAnswer,
} from "./entity-writes.js";
import { NometadataReads } from "./nometadata-reads.js";
import { asSelected } from "./nometadata-rows.js";
import { fromSdkPointEntity } from "./sdk-entity.js";
import { querySdkPage } from "./sdk-query-page.js";
import { signTableSas } from "./table-sas.js";
import { assertTransactionSendable } from "./transaction-sendable.js";

export type { AzureCredential, AzureStoreOptions } from "./azure-store-options.js";

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
  /** Timeouts and error translation of every request. */
  readonly #calls: AzureCalls;
  readonly #clients = new Map<string, TableClient>();
  #service: TableServiceClient | undefined;
  /** Typed reads with `odata=nometadata` payloads (see nometadata-rows.ts), unless metadata is kept. */
  readonly #nometadata: NometadataReads | undefined;
  /** Reads sent through the table client's pipeline beside the SDK's (typed and light ones). */
  readonly #reads: NometadataReads;
  /** The `$batch` URL of transactions, and where each table's sub-requests go. */
  readonly #batchUrl: string;
  readonly #targets = new Map<string, BatchTarget & WriteTarget>();
  /** The pipeline's own timeout of a single write (0: none). */
  readonly #timeoutMs: number;
  readonly #cosmosBatches: boolean;
  /** The account URL's query (a SAS, with its `?`), or "": it follows the path of every write built here. */
  readonly #query: string;
  readonly #allowInsecure: boolean;
  /**
   * The HTTP client of the requests built here (writes, transactions, typed reads), sent through a table
   * client's pipeline: the given one, else one per store (its keep-alive sockets shared by all of them).
   */
  readonly #http: HttpClient;

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
    const settings = resolveAzureStoreSettings(url, credential, options);
    this.#url = url;
    this.endpoint = settings.endpoint;
    this.#credential = credential;
    this.#calls = new AzureCalls(settings.timeoutMs, settings.secrets);
    this.#clientOptions = settings.clientOptions;
    this.blobs = settings.blobs;
    // Its agents are made on the first request: a store that sends nothing opens no socket.
    this.#http = options.httpClient ?? createDefaultHttpClient();
    this.#reads = new NometadataReads(url, this.#calls, {
      allowInsecureConnection: settings.allowInsecureConnection,
      timeoutMs: settings.timeoutMs,
      httpClient: this.#http,
    });
    this.#nometadata = settings.nometadata ? this.#reads : undefined;
    this.#batchUrl = batchUrlOf(url);
    this.#cosmosBatches = sdkBatchesAsCosmos(url);
    this.#query = accountUrlParts(url).query;
    this.#allowInsecure = settings.allowInsecureConnection;
    this.#timeoutMs = settings.timeoutMs;
    this.capabilities = settings.capabilities;
  }

  /**
   * A SAS token for one table limited to one partition (and an optional inclusive RowKey range), signed
   * locally with the account key (`generateTableSas`; nothing is sent). A store connected with a SAS or
   * a Microsoft Entra ID token has no key to sign with: `ValidationError`.
   */
  tableSas(table: string, request: TableSasRequest): string {
    return signTableSas(this.#credential, table, request);
  }

  async createTable(table: string): Promise<void> {
    const client = this.#client(table);
    // The SDK already treats 409 TableAlreadyExists as success.
    await this.#calls.runPoint({ operation: "createTable", table }, (options) => client.createTable(options));
  }

  async deleteTable(table: string): Promise<void> {
    const client = this.#client(table);
    // The SDK already treats 404 as success.
    await this.#calls.runPoint({ operation: "deleteTable", table }, (options) => client.deleteTable(options));
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
    return this.#calls.runWhole({ operation: "listTables", table: prefix }, async (abortSignal) => {
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
    if (types !== undefined && this.#nometadata !== undefined) {
      const entity = await this.#nometadata.getEntity(client, table, partitionKey, rowKey, select, types);
      // `null`: a value the model cannot type; read the row again with its type annotations.
      if (entity !== null) return entity && asSelected(entity, select);
    }
    try {
      const options =
        select !== undefined && select.length > 0
          ? { ...this.#calls.pointOptions, queryOptions: { select: select as string[] } }
          : this.#calls.pointOptions;
      const entity = await this.#calls.runPoint({ operation: "getEntity", table, partitionKey, rowKey }, () =>
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
    if (query.types !== undefined && this.#nometadata !== undefined) {
      const page = await this.#nometadata.queryPage(client, table, query, query.types);
      // Too many rows the model cannot type: the whole page again with type annotations.
      if (page !== undefined) {
        for (const item of page.items) asSelected(item, query.select);
        return page;
      }
    }
    return querySdkPage(client, this.#calls, table, query);
  }

  /** The port's typed read (`TableStore.queryTypedPage`): values keep their EDM type exactly. */
  async queryTypedPage(table: string, query: StoreQuery): Promise<StorePage> {
    return this.#reads.typedQueryPage(this.#client(table), table, query);
  }

  insert(table: string, entity: WireEntity): Promise<WriteResult> {
    return this.#write(table, { kind: "insert", entity });
  }

  upsert(table: string, entity: WireEntity, mode: WriteMode): Promise<WriteResult> {
    return this.#write(table, { kind: "upsert", entity, mode });
  }

  update(table: string, entity: WireEntity, mode: WriteMode, ifMatch: string): Promise<WriteResult> {
    return this.#write(table, { kind: "update", entity, mode, ifMatch });
  }

  /**
   * Sends one entity write (entity-writes.ts) through the table client's pipeline: one `then` and no
   * async frame or closure per call (the upsert is the request sent most); the error context is made
   * only on failure.
   */
  #write(table: string, write: EntityWrite): Promise<WriteResult> {
    let sent: Promise<PipelineResponse>;
    try {
      const request = entityWriteRequest(this.#target(table), write, this.#timeoutMs, this.#allowInsecure);
      sent = this.#send(table, request);
    } catch (error) {
      sent = Promise.reject(error);
    }
    return sent.then(writeAnswer).catch((error: unknown) => {
      throw this.#calls.translate(error, writeContext(write.kind, table, write.entity));
    });
  }

  async delete(table: string, partitionKey: string, rowKey: string, ifMatch: string): Promise<boolean> {
    return deletedUnlessAbsent(async () => {
      try {
        const target = this.#target(table);
        const request = entityDeleteRequest(
          target,
          partitionKey,
          rowKey,
          ifMatch,
          this.#timeoutMs,
          this.#allowInsecure,
        );
        writeAnswer(await this.#send(table, request));
      } catch (error) {
        throw this.#calls.translate(error, { operation: "delete", table, partitionKey, rowKey });
      }
    });
  }

  /** Sends a request built here through `table`'s client pipeline (with the given HTTP client, if any). */
  #send(table: string, request: PipelineRequest): Promise<PipelineResponse> {
    const client = this.#client(table);
    return client.pipeline.sendRequest(this.#http, request);
  }

  async submitTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]> {
    // Rejected before any request, with the errors the service (and MemoryStore) give for them.
    assertTransactionSendable(table, partitionKey, actions);
    const target = this.#target(table);
    const context: AzureErrorContext = { operation: "submitTransaction", table, partitionKey, actions };
    return this.#calls.runWhole(context, async (abortSignal) => {
      const { batchId, changesetId } = batchIds();
      const body = batchBody(target, actions, batchId, changesetId);
      const request = batchRequest(this.#batchUrl, body, batchId, this.#allowInsecure, abortSignal);
      return batchResults(await this.#send(table, request), actions.length);
    });
  }

  /** Where `table`'s writes and a transaction's sub-requests go (entity-writes.ts, batch-request.ts), once per table. */
  #target(table: string): BatchTarget & WriteTarget {
    let target = this.#targets.get(table);
    if (target === undefined) {
      target = { tableUrl: batchTableUrl(this.#url, table), cosmos: this.#cosmosBatches, query: this.#query };
      this.#targets.set(table, target);
    }
    return target;
  }

  /** One client per table (its pipeline also sends the table's transactions, see `submitTransaction`). */
  #client(table: string): TableClient {
    let client = this.#clients.get(table);
    if (client === undefined) {
      // TableClient's overloads take one credential kind each; at runtime it accepts all of them.
      client = new TableClient(this.#url, table, this.#credential as NamedKeyCredential, this.#clientOptions);
      this.#clients.set(table, client);
    }
    return client;
  }
}

/** The error context of a failed single write. */
function writeContext(
  operation: "insert" | "upsert" | "update",
  table: string,
  entity: WireEntity,
): AzureErrorContext {
  return { operation, table, partitionKey: entity.partitionKey, rowKey: entity.rowKey };
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
