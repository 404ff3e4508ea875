import type { ServedStore } from "../store/served-store.js";
import type { EntityJsonWriter } from "./entity-json-writer.js";
import { type MetadataLevel, metadataLevel, quoteKey, type RenderContext } from "./odata-entity.js";
import type { Resource } from "./resource-path.js";
import type { ServiceAdmin } from "./service-admin.js";
import { badRequest, errorBody, type ServiceFailure } from "./service-error.js";
import type { SasGrant } from "./shared-access-signature.js";
import type { AccountCredentials } from "./shared-key.js";
import { errorXml } from "./xml-document.js";

/** One HTTP answer before it is written: status, headers and body text. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body?: string;
}

/** The parts of a request a handler needs, shared by top-level requests and batch operations. */
export interface Call {
  readonly method: string;
  readonly resource: Resource;
  readonly query: URLSearchParams;
  header(name: string): string | undefined;
  readonly body: string;
  /** What the request's shared access signature grants; undefined for Shared Key requests. */
  readonly grant?: SasGrant | undefined;
}

/** What every operation handler works with: the served store, the account, and the server's shared parts. */
export interface ServiceContext {
  readonly store: ServedStore;
  readonly account: AccountCredentials;
  readonly json: EntityJsonWriter;
  readonly admin: ServiceAdmin;
  /** The account endpoint, once the server knows its address (used in links and Location headers). */
  base: string;
}

/** The table and keys an entity URL names. */
export type EntityAt = { table: string; partitionKey: string; rowKey: string };

/** How an entity of `table` is rendered for this request (its metadata level, links). */
export function renderContext(service: ServiceContext, call: Call, table: string): RenderContext {
  return { level: levelOf(call), base: service.base, account: service.account.name, table };
}

/** The metadata level of a request's answer: `$format` first, then `Accept`. */
export function levelOf(call: Call): MetadataLevel {
  return metadataLevel(call.header("accept"), call.query.get("$format"));
}

/** The `Content-Type` of a JSON answer at this metadata level. */
export function jsonType(level: MetadataLevel): string {
  return `application/json;odata=${level};streaming=true;charset=utf-8`;
}

/** An entity's address relative to the account endpoint: `Table(PartitionKey='…',RowKey='…')`. */
export function entityPath(table: string, partitionKey: string, rowKey: string): string {
  return `${table}(PartitionKey='${quoteKey(partitionKey)}',RowKey='${quoteKey(rowKey)}')`;
}

/** `$top`: 0 to 1,000, default 1,000; Azure answers `$top=0` with 200 and no entities (Azurite #1428). */
export function topOf(query: URLSearchParams): number {
  const text = query.get("$top");
  if (text === null) return 1000;
  const top = /^\d{1,4}$/.test(text) ? Number(text) : Number.NaN;
  if (!(top >= 0 && top <= 1000))
    throw badRequest("InvalidInput", `$top must be an integer from 0 to 1000, got '${text.slice(0, 20)}'`);
  return top;
}

/** `$select` as a set of names; undefined for every property. */
export function selectOf(query: URLSearchParams): ReadonlySet<string> | undefined {
  const text = query.get("$select");
  if (text === null || text.trim() === "" || text.trim() === "*") return undefined;
  return new Set(
    text
      .split(",")
      .map((name) => name.trim())
      .filter((name) => name !== ""),
  );
}

/** Whether a `Prefer` header asks for no entity in the answer (`return-no-content`). */
export function prefersNoContent(prefer: string | undefined): boolean {
  return /return-no-content/i.test(prefer ?? "");
}

/** The reason phrase of a status line inside a batch answer. */
export function statusText(status: number): string {
  const texts: Record<number, string> = {
    200: "OK",
    201: "Created",
    204: "No Content",
    400: "Bad Request",
    403: "Forbidden",
    404: "Not Found",
    409: "Conflict",
    412: "Precondition Failed",
    413: "Request Entity Too Large",
    500: "Internal Server Error",
  };
  return texts[status] ?? "Error";
}

/** The service's error answer: JSON (`odata.error`), or an XML `<Error>` document. */
export function failureAnswer(failure: ServiceFailure, requestId: string, now: Date, xml = false): Answer {
  return {
    status: failure.status,
    headers: {
      ...failure.headers,
      "x-ms-error-code": failure.code,
      "Content-Type": xml
        ? "application/xml"
        : "application/json;odata=minimalmetadata;streaming=true;charset=utf-8",
    },
    body: xml ? errorXml(failure, requestId, now) : errorBody(failure, requestId, now),
  };
}
