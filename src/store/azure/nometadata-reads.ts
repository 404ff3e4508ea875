import {
  createPipelineRequest,
  type HttpClient,
  type PipelineResponse,
  RestError,
} from "@azure/core-rest-pipeline";
import type { TableClient } from "@azure/data-tables";
import { EntityNotFoundError } from "../../errors.js";
import { markDoubles } from "../../util/double-marks.js";
import type {
  PropertyTypes,
  StoreContinuation,
  StoredEntity,
  StorePage,
  StoreQuery,
} from "../table-store.js";
import type { AzureCalls } from "./azure-calls.js";
import { accountUrlParts, entityUrl } from "./batch-request.js";
import { nometadataRowReader } from "./nometadata-rows.js";
import { querySdkPage } from "./sdk-query-page.js";
import { typedRowFromJson } from "./typed-rows.js";

/** Untypable rows of one light page read again one by one; more and the page is read again whole. */
const MAX_ROW_REREADS = 4;

/** The payload format of typed reads: JSON without type annotations. */
const NOMETADATA_FORMAT = "application/json;odata=nometadata";
/** The payload format of reads that keep every EDM type: annotations where JSON cannot tell the type. */
const MINIMAL_FORMAT = "application/json;odata=minimalmetadata";
/** The service version `@azure/data-tables` sends (generated/models/parameters.js). */
const SERVICE_VERSION = "2019-02-02";

/**
 * `AzureStore`'s typed reads: GETs with `odata=nometadata` (lighter payloads, rows typed by the model's
 * property types, see nometadata-rows.ts), sent through the table client's own pipeline.
 */
export class NometadataReads {
  /** The account URL without its query, with a trailing slash; its SAS query as `&…` parameters, or "". */
  readonly #base: string;
  readonly #sas: string;
  readonly #calls: AzureCalls;
  readonly #allowInsecure: boolean;
  readonly #timeoutMs: number;
  /** The HTTP client of the typed reads (the store's), sent through the table client's own pipeline. */
  readonly #http: HttpClient;

  /** `url`: the account URL, which may carry a SAS query. */
  constructor(
    url: string,
    calls: AzureCalls,
    options: { allowInsecureConnection: boolean; timeoutMs: number; httpClient: HttpClient },
  ) {
    const { base, query } = accountUrlParts(url);
    this.#base = base.endsWith("/") ? base : `${base}/`;
    this.#sas = query === "" ? "" : `&${query.slice(1)}`;
    this.#calls = calls;
    this.#allowInsecure = options.allowInsecureConnection;
    this.#timeoutMs = options.timeoutMs;
    this.#http = options.httpClient;
  }

  /** A point read with `odata=nometadata`; `null` when a value does not fit the model. */
  async getEntity(
    client: TableClient,
    table: string,
    partitionKey: string,
    rowKey: string,
    select: readonly string[] | undefined,
    types: PropertyTypes,
  ): Promise<StoredEntity | undefined | null> {
    const path = entityUrl(encodeURIComponent(table), partitionKey, rowKey);
    const url = this.#readUrl(path, selectParam(select));
    let response: PipelineResponse;
    try {
      response = await this.#calls.runPoint({ operation: "getEntity", table, partitionKey, rowKey }, () =>
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
  async queryPage(
    client: TableClient,
    table: string,
    query: StoreQuery,
    types: PropertyTypes,
  ): Promise<StorePage | undefined> {
    const url = this.#readUrl(
      `${encodeURIComponent(table)}()`,
      selectParam(query.select) + pageParams(query),
    );
    const response = await this.#calls.runWhole({ operation: "queryPage", table }, (abortSignal) =>
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
    return withContinuation(kept, response);
  }

  /**
   * One query page with minimal metadata whose values keep their EDM type (`TableStore.queryTypedPage`):
   * read from the response's text with whole Doubles marked (double-marks.ts), which the parsed body
   * cannot tell from Int32s.
   */
  async typedQueryPage(client: TableClient, table: string, query: StoreQuery): Promise<StorePage> {
    const url = this.#readUrl(`${encodeURIComponent(table)}()`, pageParams(query), MINIMAL_FORMAT);
    const response = await this.#calls.runWhole({ operation: "queryPage", table }, (abortSignal) =>
      this.#send(client, url, abortSignal, MINIMAL_FORMAT),
    );
    const text = response.bodyAsText ?? "";
    const rows = text === "" ? [] : ((JSON.parse(markDoubles(text)) as { value?: unknown[] }).value ?? []);
    return withContinuation(rows.map(typedRowFromJson), response);
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
      const page = await querySdkPage(client, this.#calls, table, {
        filter: query.filter === undefined ? keys : `(${query.filter}) and ${keys}`,
        ...(query.select === undefined ? {} : { select: query.select }),
        ...(continuation === undefined ? {} : { continuation }),
      });
      if (page.items.length > 0) return page.items[0];
      continuation = page.continuation;
    } while (continuation !== undefined);
    return undefined;
  }

  /** The URL of a read: the account URL's path plus `path`, then the query text and the account URL's SAS. */
  #readUrl(path: string, params: string, format = NOMETADATA_FORMAT): string {
    return `${this.#base}${path}?$format=${format}${params}${this.#sas}`;
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
    format = NOMETADATA_FORMAT,
  ): Promise<PipelineResponse> {
    const request = createPipelineRequest({
      url,
      method: "GET",
      allowInsecureConnection: this.#allowInsecure,
      ...(abortSignal === undefined ? { timeout: this.#timeoutMs } : { abortSignal }),
    });
    request.headers.set("Accept", format);
    request.headers.set("x-ms-version", SERVICE_VERSION);
    request.headers.set("DataServiceVersion", "3.0");
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
}

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

/** A query's `$filter`, `$top` and continuation parameters. */
function pageParams(query: StoreQuery): string {
  let params = "";
  if (query.filter !== undefined) params += `&$filter=${encodeURIComponent(query.filter)}`;
  if (query.top !== undefined) params += `&$top=${query.top}`;
  const continuation = query.continuation;
  if (continuation) {
    params += `&NextPartitionKey=${encodeURIComponent(continuation.nextPartitionKey)}`;
    // The SDK omits an empty or absent NextRowKey; mirror it.
    if (continuation.nextRowKey) params += `&NextRowKey=${encodeURIComponent(continuation.nextRowKey)}`;
  }
  return params;
}

/** A page of `items` with the continuation the response's headers give. */
function withContinuation(items: StoredEntity[], response: PipelineResponse): StorePage {
  const nextPartitionKey = response.headers.get("x-ms-continuation-nextpartitionkey");
  if (!nextPartitionKey) return { items };
  const nextRowKey = response.headers.get("x-ms-continuation-nextrowkey");
  return { items, continuation: nextRowKey ? { nextPartitionKey, nextRowKey } : { nextPartitionKey } };
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
