import {
  createPipelineRequest,
  type PipelineRequest,
  type PipelineResponse,
  RestError,
} from "@azure/core-rest-pipeline";
import type { WireEntity, WriteMode, WriteResult } from "../table-store.js";
import { entityJson, entityUrl } from "./batch-request.js";

/**
 * A single entity write (insert, upsert, update, delete) as the request `@azure/data-tables` 13.x sends
 * for it (TableClient createEntity / upsertEntity / updateEntity / deleteEntity through the generated
 * client: method, URL, headers and JSON), built directly: `AzureStore` sends it through the table client's own pipeline
 * (authentication, the Cosmos DB merge policy, agent, user agent, logging), skipping only the
 * generated client's operation-spec serialisation, tracing span and response mapping, most of a write's
 * client CPU. test/store-azure/entity-writes.test.ts compares the requests with the SDK's.
 */

/** A write's target: the table's URL (account origin and path, the name percent-encoded) and the account URL's query (a SAS), if any. */
export interface WriteTarget {
  readonly tableUrl: string;
  readonly query: string;
}

/** An entity write: `insert` (POST to the table), or an upsert or update (PUT replaces, PATCH merges; an update has `ifMatch`). */
export type EntityWrite =
  | { kind: "insert"; entity: WireEntity }
  | { kind: "upsert"; entity: WireEntity; mode: WriteMode }
  | { kind: "update"; entity: WireEntity; mode: WriteMode; ifMatch: string };

/** The request of `write`, with the pipeline's own per-request timeout (none for 0). */
export function entityWriteRequest(
  target: WriteTarget,
  write: EntityWrite,
  timeoutMs: number,
  allowInsecureConnection: boolean,
): PipelineRequest {
  const entity = write.entity;
  const inserting = write.kind === "insert";
  const request = createPipelineRequest({
    url: inserting
      ? target.tableUrl + target.query
      : entityUrl(target.tableUrl, entity.partitionKey, entity.rowKey) + target.query,
    method: inserting ? "POST" : write.mode === "merge" ? "PATCH" : "PUT",
    body: entityJson(entity),
    allowInsecureConnection,
    ...(timeoutMs > 0 ? { timeout: timeoutMs } : {}),
  });
  const headers = request.headers;
  // In the generated client's order (TableClient.js → generated/operations/table.js).
  if (inserting) {
    headers.set("Content-Type", "application/json;odata=nometadata");
    headers.set("Accept", "application/json;odata=minimalmetadata");
    headers.set("x-ms-version", "2019-02-02");
    headers.set("DataServiceVersion", "3.0");
    headers.set("Prefer", "return-no-content");
    return request;
  }
  headers.set("Content-Type", "application/json");
  headers.set("x-ms-version", "2019-02-02");
  headers.set("DataServiceVersion", "3.0");
  headers.set("Accept", "application/json");
  if (write.kind === "update") headers.set("If-Match", write.ifMatch);
  return request;
}

/** The request of a delete of the entity at these keys, conditional on `ifMatch` (`*`: whatever is stored). */
export function entityDeleteRequest(
  target: WriteTarget,
  partitionKey: string,
  rowKey: string,
  ifMatch: string,
  timeoutMs: number,
  allowInsecureConnection: boolean,
): PipelineRequest {
  const request = createPipelineRequest({
    url: entityUrl(target.tableUrl, partitionKey, rowKey) + target.query,
    method: "DELETE",
    allowInsecureConnection,
    ...(timeoutMs > 0 ? { timeout: timeoutMs } : {}),
  });
  const headers = request.headers;
  headers.set("Accept", "application/json;odata=minimalmetadata");
  headers.set("x-ms-version", "2019-02-02");
  headers.set("DataServiceVersion", "3.0");
  headers.set("If-Match", ifMatch);
  return request;
}

/**
 * The write's result (its ETag header; none for a delete), or the `RestError` the SDK's deserialisation raises for a
 * refusal: the service's code (`x-ms-error-code`) and its JSON `odata.error` (or, for an XML answer
 * such as a failed authentication, its `Message`) where the SDK's error mapper puts them
 * (azure-errors.ts reads them there).
 */
export function writeAnswer(response: PipelineResponse): WriteResult {
  const status = response.status;
  if (status >= 200 && status < 300) return { etag: response.headers.get("etag") ?? "" };
  const text = response.bodyAsText ?? "";
  const error = new RestError(text, { statusCode: status, request: response.request, response });
  const code = response.headers.get("x-ms-error-code");
  error.details = { errorCode: code, ...serviceDetails(text) };
  if (code !== undefined) error.code = code;
  throw error;
}

/** `odataError` of a JSON answer, `Message` of an XML one. */
function serviceDetails(text: string): { odataError?: unknown; Message?: string } {
  if (text.startsWith("{")) {
    try {
      return { odataError: (JSON.parse(text) as { "odata.error"?: unknown })["odata.error"] };
    } catch {
      return {};
    }
  }
  const message = /<Message>([\s\S]*?)<\/Message>/.exec(text)?.[1];
  return message === undefined ? {} : { Message: message };
}
