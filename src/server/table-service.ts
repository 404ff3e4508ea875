import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ServedStore } from "../store/served-store.js";
import { aclOperation, serviceOperation, unsupportedVerb } from "./admin-operations.js";
import { anonymousRequestFailure } from "./anonymous-request.js";
import { submitBatch } from "./batch-operations.js";
import { checkBearerToken, isBearer, type TableServerOAuth } from "./bearer-token.js";
import { EntityJsonWriter } from "./entity-json-writer.js";
import { deleteEntity, getEntity, insertEntity, writeEntity } from "./entity-operations.js";
import { queryEntities } from "./query-operations.js";
import { parseResource } from "./resource-path.js";
import { ServiceAdmin } from "./service-admin.js";
import { type Answer, type Call, failureAnswer, type ServiceContext } from "./service-call.js";
import { ServiceFailureError, toFailure } from "./service-error.js";
import { isAcceptedServiceVersion, unknownServiceVersion } from "./service-versions.js";
import { authorize, checkSas, type SasOperation } from "./shared-access-signature.js";
import { type AccountCredentials, checkSharedKey } from "./shared-key.js";
import { createTable, deleteTable, queryTables } from "./table-operations.js";

// The service refuses any request body over 4 MiB with 413 RequestBodyTooLarge ("Performing entity
// group transactions": "The total payload of a batch request is limited to 4 MiB"; "Understanding the
// Table service data model": entities of at most 1 MiB). Counted on the bytes received, so a chunked
// upload (no Content-Length) is refused as soon as it crosses the limit.
const MAX_BODY_BYTES = 4 * 1024 * 1024;
// After a 413 the rest of the body is read and dropped (so the client, still sending, gets to read the
// answer) up to this many more bytes; a longer upload is cut by closing the connection.
const MAX_DRAIN_BYTES = 64 * 1024 * 1024;
const DEFAULT_VERSION = "2019-02-02";

/**
 * The Table service REST API over a served store: reading requests, authorization and routing to the
 * operation handlers (tables, entities, queries, batches, administration). Reads use the store's typed
 * records; every write goes through the store port, so the server adds no write path of its own.
 */
export class TableService {
  readonly #service: ServiceContext;
  readonly #account: AccountCredentials;
  readonly #oauth: TableServerOAuth | undefined;
  readonly #skipApiVersionCheck: boolean;

  constructor(
    store: ServedStore,
    account: AccountCredentials,
    options: { oauth?: TableServerOAuth | undefined; skipApiVersionCheck?: boolean | undefined } = {},
  ) {
    this.#account = account;
    this.#oauth = options.oauth;
    this.#skipApiVersionCheck = options.skipApiVersionCheck === true;
    this.#service = {
      store,
      account,
      json: new EntityJsonWriter(),
      admin: new ServiceAdmin(store),
      base: "",
    };
  }

  /** The account endpoint, once the server knows its address (used in links and Location headers). */
  set base(url: string) {
    this.#service.base = url;
  }

  /** Answers one HTTP request; never throws (a failure becomes the service's error answer). */
  handle(req: IncomingMessage, res: ServerResponse): void {
    // Plain 'data'/'end' listeners: an async iterator over the request costs more than the small
    // bodies most requests carry.
    let chunks: Buffer[] = [];
    let size = 0;
    let answered = false;
    const answer = (body: string | unknown) => {
      if (answered) return;
      answered = true;
      void this.#answer(req, res, body);
    };
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) {
        chunks.push(chunk);
      } else if (!answered) {
        // Answered at once, without waiting for the rest; what follows is dropped, not kept.
        chunks = [];
        answer(
          new ServiceFailureError(
            413,
            "RequestBodyTooLarge",
            "The request body is too large and exceeds the maximum permissible limit.",
          ),
        );
      } else if (size > MAX_BODY_BYTES + MAX_DRAIN_BYTES) {
        req.destroy();
      }
    });
    req.once("error", (error) => answer(error));
    req.once("end", () => {
      answer(
        chunks.length === 1 ? (chunks[0] as Buffer).toString("utf8") : Buffer.concat(chunks).toString("utf8"),
      );
    });
  }

  /** Routes a request whose body has been read (or whose reading failed) and writes the answer. */
  async #answer(req: IncomingMessage, res: ServerResponse, body: string | unknown): Promise<void> {
    const requestId = randomUUID();
    const now = new Date();
    const requested = headerOf(req, "x-ms-version");
    // Azure answers with the version it used: the requested one. A refused version's answer names
    // none (the service used none; azure-sdk-for-net #45302 shows Azure's answer without it).
    const versionAccepted = isAcceptedServiceVersion(requested, this.#skipApiVersionCheck);
    const version = versionAccepted ? (requested ?? DEFAULT_VERSION) : undefined;
    let answer: Answer;
    try {
      if (typeof body !== "string") throw body;
      if (!versionAccepted) throw unknownServiceVersion();
      answer = req.method === "OPTIONS" ? this.#preflight(req) : await this.#route(req, body, now);
    } catch (error) {
      answer = failureAnswer(toFailure(error), requestId, now, xmlErrors(req));
    }
    const headers = answer.headers;
    headers["x-ms-request-id"] = requestId;
    if (version !== undefined) headers["x-ms-version"] = version;
    headers.Date = httpDate(now.getTime());
    headers.DataServiceVersion = "3.0;";
    headers["X-Content-Type-Options"] = "nosniff";
    headers["Cache-Control"] = "no-cache";
    // The body is encoded once: its length and the bytes written come from the same buffer (measured:
    // writing a 1,000-entity page as text costs the server about 15 % more CPU than as a Buffer).
    const bytes = answer.body === undefined ? undefined : Buffer.from(answer.body, "utf8");
    if (bytes !== undefined) headers["Content-Length"] = String(bytes.length);
    if (req.method !== "OPTIONS") {
      Object.assign(
        headers,
        this.#service.admin.corsHeaders(req.method ?? "GET", headerOf(req, "origin"), () =>
          Object.keys(headers),
        ),
      );
    }
    res.writeHead(answer.status, headers);
    res.end(bytes);
  }

  /** A CORS preflight is answered from the service's rules alone, before any authorization. */
  #preflight(req: IncomingMessage): Answer {
    return this.#service.admin.preflight(
      headerOf(req, "origin"),
      headerOf(req, "access-control-request-method"),
      headerOf(req, "access-control-request-headers"),
    );
  }

  async #route(req: IncomingMessage, body: string, now: Date): Promise<Answer> {
    const rawUrl = req.url ?? "/";
    const q = rawUrl.indexOf("?");
    const rawPath = q < 0 ? rawUrl : rawUrl.slice(0, q);
    const query = new URLSearchParams(q < 0 ? "" : rawUrl.slice(q + 1));
    const method = req.method ?? "GET";
    // The Table service has no anonymous access.
    if (!query.has("sig") && req.headers.authorization === undefined) {
      throw anonymousRequestFailure(headerOf(req, "x-ms-version") ?? DEFAULT_VERSION);
    }
    // A request carries a shared access signature in its query string, or else a Shared Key header
    // (or, with OAuth on, a bearer token: it grants what the key grants).
    const https = "encrypted" in req.socket && req.socket.encrypted === true;
    const authorization = req.headers.authorization;
    const grant = query.has("sig")
      ? checkSas(this.#account, query, {
          now: now.getTime(),
          https,
          clientAddress: req.socket.remoteAddress,
          policy: (table, id) => this.#service.admin.policy(table, id),
        })
      : this.#oauth !== undefined && authorization !== undefined && isBearer(authorization)
        ? checkBearerToken(authorization, {
            account: this.#account.name,
            now: now.getTime(),
            https,
            version: headerOf(req, "x-ms-version") ?? DEFAULT_VERSION,
            comp: query.get("comp"),
          })
        : checkSharedKey(this.#account, method, rawPath, query.get("comp"), req.headers, now.getTime());
    const prefix = `/${this.#account.name}`;
    // Get Table Service Stats is the one operation of the secondary endpoint (`account-secondary`).
    if (rawPath === `${prefix}-secondary` || rawPath === `${prefix}-secondary/`) {
      if (method === "GET" && query.get("restype") === "service" && query.get("comp") === "stats") {
        if (grant !== undefined) authorize(grant, { kind: "service", verb: "read" });
        return this.#service.admin.getStats(true, now);
      }
    }
    if (rawPath !== prefix && !rawPath.startsWith(`${prefix}/`)) {
      throw new ServiceFailureError(
        400,
        "InvalidUri",
        "The requested URI does not represent any resource on the server.",
      );
    }
    const call: Call = {
      method,
      resource: parseResource(rawPath.slice(prefix.length + 1)),
      query,
      header: (name) => headerOf(req, name),
      body,
      grant: grant ?? undefined,
    };
    if (call.resource.kind === "batch") return submitBatch(this.#service, call);
    return this.#dispatch(call, now);
  }

  async #dispatch(call: Call, now: Date): Promise<Answer> {
    const service = this.#service;
    const { resource, method } = call;
    const allow = (operation: SasOperation) => {
      if (call.grant !== undefined) authorize(call.grant, operation);
    };
    switch (resource.kind) {
      case "service":
        return serviceOperation(service, call, now);
      case "tables":
        if (method === "GET") {
          allow({ kind: "tables", verb: "list" });
          return queryTables(service, call);
        }
        if (method === "POST") {
          allow({ kind: "tables", verb: "create" });
          return createTable(service, call);
        }
        break;
      case "table":
        if (method === "DELETE") {
          allow({ kind: "tables", verb: "delete" });
          return deleteTable(service, resource.table);
        }
        break;
      case "entities":
        if (call.query.get("comp") === "acl") return aclOperation(service, call, resource.table);
        if (method === "GET") {
          allow({ kind: "entity", table: resource.table, verb: "read" });
          return queryEntities(service, call, resource.table);
        }
        if (method === "POST") return insertEntity(service, call, resource.table);
        break;
      case "entity": {
        const { table, partitionKey, rowKey } = resource;
        if (method === "GET") {
          allow({ kind: "entity", table, verb: "read", partitionKey, rowKey });
          return getEntity(service, call, resource);
        }
        const verb = call.header("if-match") === undefined ? "upsert" : "update";
        if (method === "PUT") {
          allow({ kind: "entity", table, verb, partitionKey, rowKey });
          return writeEntity(service, call, resource, "replace");
        }
        if (method === "MERGE" || method === "PATCH") {
          allow({ kind: "entity", table, verb, partitionKey, rowKey });
          return writeEntity(service, call, resource, "merge");
        }
        if (method === "DELETE") {
          allow({ kind: "entity", table, verb: "delete", partitionKey, rowKey });
          return deleteEntity(service, call, resource);
        }
        break;
      }
      case "batch":
        break;
    }
    throw unsupportedVerb(method);
  }
}

/**
 * Whether a request's failure is answered as an XML `<Error>` document: the service's XML operations
 * (service properties and stats, table ACLs: `comp=properties|stats|acl`) answer errors in XML, as
 * their results, unless the client asked for JSON (what Azurite does too). The SDKs read the error
 * code from that body; from a JSON one they get none.
 */
function xmlErrors(req: IncomingMessage): boolean {
  const url = req.url ?? "";
  const q = url.indexOf("?");
  if (q < 0) return false;
  const query = new URLSearchParams(url.slice(q + 1));
  const comp = query.get("comp");
  if (comp !== "properties" && comp !== "stats" && comp !== "acl") return false;
  return !/json/i.test(query.get("$format") ?? headerOf(req, "accept") ?? "");
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

// The Date header changes once a second; formatting it per request is measurable at thousands a second.
let dateSecond = Number.NaN;
let dateText = "";

/** The HTTP `Date` header of an instant (RFC 1123), formatted once per second. */
function httpDate(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(second * 1000).toUTCString();
  }
  return dateText;
}
