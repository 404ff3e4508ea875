import { randomUUID } from "node:crypto";
import {
  createHttpHeaders,
  createPipelineRequest,
  type PipelineRequest,
  type PipelineResponse,
  RestError,
} from "@azure/core-rest-pipeline";
import type { TransactionAction, WireEntity, WriteResult } from "../table-store.js";

/**
 * The `$batch` request of an entity group transaction, written here byte for byte as
 * `@azure/data-tables` 13.x writes it (TableClient.submitTransaction → TableTransaction.js,
 * TablePolicies.js, utils/transactionHelpers.js, serialization.js; src/store/batch-body-size.ts sizes
 * the same body), and its answer read as TableTransaction.js's `parseTransactionResponse` reads it.
 *
 * `AzureStore` sends it through the table client's own pipeline (authentication, agent, user agent,
 * logging) instead of calling `TableClient.submitTransaction`, which builds a second `TableClient`
 * and runs every operation through the generated client's serialisation pipeline to assemble the
 * body, per transaction: that was most of a transaction's client CPU. Writing the body directly also
 * gives a conditional delete its `If-Match` (the SDK's transaction drops a delete's options and sends
 * `If-Match: *`), so no policy has to patch the assembled body any more.
 * test/store-azure/batch-request.test.ts compares the body with the SDK's for every kind of operation.
 */

const CRLF = "\r\n";

/** The headers of the `$batch` POST (utils/baseTransactionHeaders.js and utils/transactionHeaders.js). */
function batchHeaders(batchId: string): Record<string, string> {
  return {
    accept: "application/json",
    "x-ms-version": "2019-02-02",
    DataServiceVersion: "3.0;",
    MaxDataServiceVersion: "3.0;NetFx",
    "Content-Type": `multipart/mixed; boundary=batch_${batchId}`,
    "Accept-Charset": "UTF-8",
    Connection: "Keep-Alive",
  };
}

/**
 * Sub-request headers as the SDK writes them, each line with its CRLF. Its transaction pipeline drops
 * `x-ms-version` from each sub-request, except on the Cosmos DB Table API, where its merge policy also
 * turns a merge into a POST with `X-HTTP-Method: MERGE` (TableTransaction.js `prepateTransactionPipeline`,
 * cosmosPathPolicy.js); on Cosmos DB the sub-requests go out with the header, as the SDK sends them.
 */
function subRequestHeaders(cosmos: boolean) {
  const version = cosmos ? "x-ms-version: 2019-02-02\r\n" : "";
  const common = `${version}DataServiceVersion: 3.0\r\n`;
  return {
    insert: `Content-Type: application/json;odata=nometadata\r\nAccept: application/json;odata=minimalmetadata\r\n${common}Prefer: return-no-content\r\n`,
    replace: `Content-Type: application/json\r\n${common}Accept: application/json\r\n`,
    merge: `Content-Type: application/json\r\n${cosmos ? "X-HTTP-Method: MERGE\r\n" : ""}${common}Accept: application/json\r\n`,
    delete: `Accept: application/json;odata=minimalmetadata\r\n${common}`,
  };
}
const AZURE_HEADERS = subRequestHeaders(false);
const COSMOS_HEADERS = subRequestHeaders(true);

/** Where a transaction's sub-requests go: the table's URL (see `batchTableUrl`), and the SDK's Cosmos rule. */
export interface BatchTarget {
  /** Account origin and path, then the table name percent-encoded; no query (a SAS stays on the `$batch` URL). */
  readonly tableUrl: string;
  /** The SDK sends a merge to the Cosmos DB Table API as a POST with `X-HTTP-Method: MERGE`. */
  readonly cosmos: boolean;
}

/** The `$batch` body of `actions`, with the given batch and changeset ids (random UUIDs when sent). */
export function batchBody(
  target: BatchTarget,
  actions: readonly TransactionAction[],
  batchId: string,
  changesetId: string,
): string {
  const changeset = `--changeset_${changesetId}`;
  const partHead = `${CRLF}${changeset}${CRLF}content-type: application/http${CRLF}content-transfer-encoding: binary${CRLF}${CRLF}`;
  let body = `--batch_${batchId}${CRLF}content-type: multipart/mixed; boundary=changeset_${changesetId}${CRLF}${CRLF}`;
  for (let i = 0; i < actions.length; i++)
    body += partHead + subRequest(target, actions[i] as TransactionAction);
  return `${body}${CRLF}${changeset}--${CRLF}--batch_${batchId}--${CRLF}`;
}

/** One operation's request line, headers, empty line and JSON (none for a delete). */
function subRequest(target: BatchTarget, action: TransactionAction): string {
  switch (action.kind) {
    case "insert":
      return `POST ${target.tableUrl} HTTP/1.1${CRLF}${headersOf(target).insert}${CRLF}${CRLF}${entityJson(action.entity)}`;
    case "upsert":
      return write(target, action.entity, action.mode === "merge", "");
    case "update":
      return write(target, action.entity, action.mode === "merge", `If-Match: ${action.ifMatch}${CRLF}`);
    case "delete":
      return `DELETE ${entityUrl(target.tableUrl, action.partitionKey, action.rowKey)} HTTP/1.1${CRLF}${headersOf(target).delete}If-Match: ${action.ifMatch}${CRLF}${CRLF}`;
  }
}

/** A replace (PUT) or merge (PATCH; POST with `X-HTTP-Method: MERGE` on Cosmos DB), conditional with `ifMatch`. */
function write(target: BatchTarget, entity: WireEntity, merge: boolean, ifMatch: string): string {
  const url = entityUrl(target.tableUrl, entity.partitionKey, entity.rowKey);
  const method = merge ? (target.cosmos ? "POST" : "PATCH") : "PUT";
  const headers = merge ? headersOf(target).merge : headersOf(target).replace;
  return `${method} ${url} HTTP/1.1${CRLF}${headers}${ifMatch}${CRLF}${CRLF}${entityJson(entity)}`;
}

function headersOf(target: BatchTarget): typeof AZURE_HEADERS {
  return target.cosmos ? COSMOS_HEADERS : AZURE_HEADERS;
}

/** An entity's URL: keys with quotes doubled, then `encodeURIComponent`d (the generated client's path). */
export function entityUrl(tableUrl: string, partitionKey: string, rowKey: string): string {
  return `${tableUrl}(PartitionKey='${encodeURIComponent(partitionKey.replaceAll("'", "''"))}',RowKey='${encodeURIComponent(rowKey.replaceAll("'", "''"))}')`;
}

/** EDM annotations of typed values (serialization.js `Edm`). */
const EDM_TYPES: ReadonlyMap<unknown, string> = new Map(
  ["Binary", "Boolean", "DateTime", "Double", "Guid", "Int32", "Int64", "String"].map((type) => [
    type,
    `Edm.${type}`,
  ]),
);

/**
 * The entity's JSON as serialization.js `serialize` writes it (keys renamed, typed values with a
 * `name@odata.type` annotation), with the port's fixes that sdk-entity.ts made before the SDK saw the
 * row: `etag` and `timestamp` are never sent, a non-finite Double is the service's string form, a view
 * of part of a buffer is encoded as the bytes it views.
 */
export function entityJson(entity: WireEntity): string {
  const json: Record<string, unknown> = {};
  for (const key in entity) {
    if (key === "etag" || key === "timestamp") continue;
    const value = entity[key];
    const name = key === "partitionKey" ? "PartitionKey" : key === "rowKey" ? "RowKey" : key;
    switch (typeof value) {
      case "undefined":
        continue;
      case "string":
      case "boolean":
        json[name] = value;
        continue;
      case "number":
        if (Number.isFinite(value)) json[name] = value;
        else annotate(json, name, String(value), "Edm.Double");
        continue;
      case "bigint":
        annotate(json, name, value.toString(), "Edm.Int64");
        continue;
      default:
        typedValue(json, name, value);
    }
  }
  return JSON.stringify(json);
}

function typedValue(json: Record<string, unknown>, name: string, value: unknown): void {
  if (value === null) {
    json[name] = null;
  } else if (value instanceof Date) {
    annotate(json, name, value, "Edm.DateTime");
  } else if (value instanceof Uint8Array) {
    const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    annotate(json, name, bytes.toString("base64"), "Edm.Binary");
  } else {
    const typed = value as { type?: unknown; value?: unknown };
    if (typeof value !== "object" || typed.value === undefined || typed.type === undefined)
      throw new Error(`Unknown EDM type ${typeof value}`);
    const edm = EDM_TYPES.get(typed.type);
    if (edm === undefined) throw new Error(`Unknown EDM type ${typeof typed.value}`);
    const fixed =
      typed.type === "Double" && typeof typed.value === "number" && !Number.isFinite(typed.value)
        ? String(typed.value)
        : typed.value;
    annotate(json, name, fixed, edm);
  }
}

function annotate(json: Record<string, unknown>, name: string, value: unknown, edm: string): void {
  json[name] = value;
  json[`${name}@odata.type`] = edm;
}

/**
 * The `$batch` POST of `body` (ids from `batchBody`), to `batchUrl`: the account URL with `/$batch`
 * before its query, if any (a SAS).
 */
export function batchRequest(
  batchUrl: string,
  body: string,
  batchId: string,
  allowInsecureConnection: boolean,
  abortSignal: AbortSignal | undefined,
): PipelineRequest {
  return createPipelineRequest({
    url: batchUrl,
    method: "POST",
    body,
    headers: createHttpHeaders(batchHeaders(batchId)),
    allowInsecureConnection,
    ...(abortSignal === undefined ? {} : { abortSignal }),
  });
}

/** Fresh batch and changeset ids (the SDK's `Uuid.generateUuid()`). */
export function batchIds(): { batchId: string; changesetId: string } {
  return { batchId: randomUUID(), changesetId: randomUUID() };
}

const SUB_RESPONSE = "--changesetresponse_";

/**
 * Each of `operations` results from the `$batch` answer (a delete's ETag, or one the answer lacks, is
 * ""), or the `RestError` the SDK raises for it (TableTransaction.js `parseTransactionResponse`): a
 * failed batch, or a sub-response with a body (the service answers an operation's refusal with its
 * `odata.error` and nothing after it).
 */
export function batchResults(response: PipelineResponse, operations: number): WriteResult[] {
  const text = response.bodyAsText || "";
  const status = response.status;
  if (status < 200 || status >= 300) throw bodyError(text, status, response);
  const parts = text.split(SUB_RESPONSE);
  const etags: string[] = [];
  for (let i = 1; i < parts.length - 1; i++) {
    const part = parts[i] as string;
    const statusMatch = /HTTP\/1.1 ([0-9]*)/.exec(part);
    const subStatus = statusMatch === null ? Number.NaN : Number.parseInt(statusMatch[1] as string, 10);
    if (!Number.isInteger(subStatus)) throw new Error(`Couldn't extract status from sub-response:\n ${part}`);
    const body = /\{(.*)\}/.exec(part);
    if (body !== null) throw bodyError(body[0], subStatus, response);
    etags.push(/ETag: (.*)/.exec(part)?.[1] ?? "");
  }
  const results: WriteResult[] = new Array(operations);
  for (let i = 0; i < operations; i++) results[i] = { etag: etags[i] ?? "" };
  return results;
}

/** The SDK's error for a failed batch or operation: the service's message and code, when its JSON has them. */
function bodyError(text: string, statusCode: number, response: PipelineResponse): RestError {
  let parsed: { "odata.error"?: { code?: string; message?: { value?: string } } } | undefined;
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch {
    parsed = undefined;
  }
  const error = parsed?.["odata.error"];
  return new RestError(error?.message?.value ?? "Transaction Failed", {
    ...(error?.code === undefined ? {} : { code: error.code }),
    statusCode,
    request: response.request,
    response,
  });
}

/** An account URL split at its query: the URL without it, and the query (a SAS, with its `?`) or "". */
export function accountUrlParts(accountUrl: string): { base: string; query: string } {
  const at = accountUrl.indexOf("?");
  return at < 0
    ? { base: accountUrl, query: "" }
    : { base: accountUrl.slice(0, at), query: accountUrl.slice(at) };
}

/** The `$batch` URL of an account URL: `/$batch` after its path, before its query (a SAS), if any. */
export function batchUrlOf(accountUrl: string): string {
  const { base, query } = accountUrlParts(accountUrl);
  return `${base.endsWith("/") ? base : `${base}/`}$batch${query}`;
}
