import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { compilePredicate } from "../store/memory/filter-evaluator.js";
import type { MemoryStore } from "../store/memory/memory-store.js";
import { parseFilter } from "../store/memory/odata-filter-parser.js";
import type { RecordAccess } from "../store/memory/record-access.js";
import { badRequest } from "../store/memory/service-errors.js";
import type { EntityRecord } from "../store/memory/typed-entity.js";
import type { TransactionAction, WriteMode } from "../store/table-store.js";
import { anonymousRequestFailure } from "./anonymous-request.js";
import { type BatchOperation, boundaryOf, parseBatch } from "./batch-body.js";
import { checkBearerToken, isBearer, type TableServerOAuth } from "./bearer-token.js";
import { decodeContinuationKey, encodeContinuationKey } from "./continuation-header.js";
import { EntityJsonWriter } from "./entity-json-writer.js";
import {
  type MetadataLevel,
  metadataLevel,
  parseJsonObject,
  quoteKey,
  type RenderContext,
  readEntityBody,
} from "./odata-entity.js";
import { operationPath } from "./operation-path.js";
import { parseResource, type Resource } from "./resource-path.js";
import { ServiceAdmin } from "./service-admin.js";
import { errorBody, type ServiceFailure, ServiceFailureError, toFailure } from "./service-error.js";
import {
  authorize,
  checkSas,
  rangeFilter,
  type SasGrant,
  type SasOperation,
} from "./shared-access-signature.js";
import { type AccountCredentials, checkSharedKey } from "./shared-key.js";
import { errorXml } from "./xml-document.js";

// The service refuses any request body over 4 MiB with 413 RequestBodyTooLarge ("Performing entity
// group transactions": "The total payload of a batch request is limited to 4 MiB"; "Understanding the
// Table service data model": entities of at most 1 MiB). Counted on the bytes received, so a chunked
// upload (no Content-Length) is refused as soon as it crosses the limit.
const MAX_BODY_BYTES = 4 * 1024 * 1024;
// After a 413 the rest of the body is read and dropped (so the client, still sending, gets to read the
// answer) up to this many more bytes; a longer upload is cut by closing the connection.
const MAX_DRAIN_BYTES = 64 * 1024 * 1024;
const DEFAULT_VERSION = "2019-02-02";
const VERSION_FORMAT = /^\d{4}-\d{2}-\d{2}$/;

/** One HTTP answer before it is written: status, headers and body text. */
interface Answer {
  status: number;
  headers: Record<string, string>;
  body?: string;
}

/** The parts of a request a handler needs, shared by top-level requests and batch operations. */
interface Call {
  readonly method: string;
  readonly resource: Resource;
  readonly query: URLSearchParams;
  header(name: string): string | undefined;
  readonly body: string;
  /** What the request's shared access signature grants; undefined for Shared Key requests. */
  readonly grant?: SasGrant | undefined;
}

/**
 * The Table service REST API over one `MemoryStore`: routing, authorization and the JSON wire
 * format. Reads use the store's records (typed values); every write goes through the store port,
 * so the server adds no write path of its own.
 */
export class TableService {
  readonly #store: MemoryStore;
  readonly #records: RecordAccess;
  readonly #account: AccountCredentials;
  readonly #json = new EntityJsonWriter();
  readonly #admin: ServiceAdmin;
  /** `/account/`, what every operation path in a batch starts with. */
  readonly #accountPrefix: string;
  readonly #oauth: TableServerOAuth | undefined;
  #base = "";

  constructor(
    store: MemoryStore,
    records: RecordAccess,
    account: AccountCredentials,
    options: { oauth?: TableServerOAuth | undefined } = {},
  ) {
    this.#store = store;
    this.#records = records;
    this.#account = account;
    this.#accountPrefix = `/${account.name}/`;
    this.#oauth = options.oauth;
    this.#admin = new ServiceAdmin(records);
  }

  /** The account endpoint, once the server knows its address (used in links and Location headers). */
  set base(url: string) {
    this.#base = url;
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
    // Azure answers with the version it used: the requested one; a malformed one is refused.
    const versionOk = requested === undefined || VERSION_FORMAT.test(requested);
    const version = versionOk ? (requested ?? DEFAULT_VERSION) : DEFAULT_VERSION;
    let answer: Answer;
    try {
      if (typeof body !== "string") throw body;
      if (!versionOk) {
        throw new ServiceFailureError(
          400,
          "InvalidHeaderValue",
          "The value for one of the HTTP headers is not in the correct format.",
        );
      }
      answer = req.method === "OPTIONS" ? this.#preflight(req) : await this.#route(req, body, now);
    } catch (error) {
      answer = failureAnswer(toFailure(error), requestId, now, xmlErrors(req));
    }
    const headers = answer.headers;
    headers["x-ms-request-id"] = requestId;
    headers["x-ms-version"] = version;
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
        this.#admin.corsHeaders(req.method ?? "GET", headerOf(req, "origin"), () => Object.keys(headers)),
      );
    }
    res.writeHead(answer.status, headers);
    res.end(bytes);
  }

  /** A CORS preflight is answered from the service's rules alone, before any authorization. */
  #preflight(req: IncomingMessage): Answer {
    return this.#admin.preflight(
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
          policy: (table, id) => this.#admin.policy(table, id),
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
        return this.#admin.getStats(true, now);
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
    if (call.resource.kind === "batch") return this.#batch(call);
    return this.#dispatch(call, now);
  }

  async #dispatch(call: Call, now: Date): Promise<Answer> {
    const { resource, method } = call;
    const allow = (operation: SasOperation) => {
      if (call.grant !== undefined) authorize(call.grant, operation);
    };
    const keys =
      resource.kind === "entity" ? { partitionKey: resource.partitionKey, rowKey: resource.rowKey } : {};
    switch (resource.kind) {
      case "service":
        return this.#serviceOperation(call, now);
      case "tables":
        if (method === "GET") {
          allow({ kind: "tables", verb: "list" });
          return this.#queryTables(call);
        }
        if (method === "POST") {
          allow({ kind: "tables", verb: "create" });
          return this.#createTable(call);
        }
        break;
      case "table":
        if (method === "DELETE") {
          allow({ kind: "tables", verb: "delete" });
          return this.#deleteTable(resource.table);
        }
        break;
      case "entities":
        if (call.query.get("comp") === "acl") return this.#aclOperation(call, resource.table);
        if (method === "GET") {
          allow({ kind: "entity", table: resource.table, verb: "read" });
          return this.#queryEntities(call, resource.table);
        }
        if (method === "POST") return this.#insert(call, resource.table);
        break;
      case "entity": {
        const ifMatch = call.header("if-match");
        if (method === "GET") {
          allow({ kind: "entity", table: resource.table, verb: "read", ...keys });
          return this.#getEntity(call, resource);
        }
        const verb = ifMatch === undefined ? "upsert" : "update";
        if (method === "PUT") {
          allow({ kind: "entity", table: resource.table, verb, ...keys });
          return this.#write(call, resource, "replace");
        }
        if (method === "MERGE" || method === "PATCH") {
          allow({ kind: "entity", table: resource.table, verb, ...keys });
          return this.#write(call, resource, "merge");
        }
        if (method === "DELETE") {
          allow({ kind: "entity", table: resource.table, verb: "delete", ...keys });
          return this.#delete(call, resource);
        }
        break;
      }
      case "batch":
        break;
    }
    throw new ServiceFailureError(
      405,
      "UnsupportedHttpVerb",
      `The resource doesn't support the specified HTTP verb ${method}.`,
    );
  }

  /** Get/Set Table Service Properties and Get Table Service Stats (`?restype=service&comp=…`). */
  #serviceOperation(call: Call, now: Date): Answer {
    const comp = call.query.get("comp");
    if (call.query.get("restype") === "service" && (comp === "properties" || comp === "stats")) {
      const verb = call.method === "PUT" ? "write" : "read";
      if (call.grant !== undefined) authorize(call.grant, { kind: "service", verb });
      if (comp === "stats" && call.method === "GET") return this.#admin.getStats(false, now);
      if (comp === "properties" && call.method === "GET") return this.#admin.getProperties();
      if (comp === "properties" && call.method === "PUT") return this.#admin.setProperties(call.body);
      throw new ServiceFailureError(
        405,
        "UnsupportedHttpVerb",
        `The resource doesn't support the specified HTTP verb ${call.method}.`,
      );
    }
    throw new ServiceFailureError(
      400,
      "InvalidUri",
      "The requested URI does not represent any resource on the server.",
    );
  }

  /** Get/Set Table ACL (`table?comp=acl`) of an existing table. */
  #aclOperation(call: Call, table: string): Answer {
    if (call.method !== "GET" && call.method !== "PUT") {
      throw new ServiceFailureError(
        405,
        "UnsupportedHttpVerb",
        `The resource doesn't support the specified HTTP verb ${call.method}.`,
      );
    }
    if (call.grant !== undefined) {
      authorize(call.grant, { kind: "acl", table, verb: call.method === "PUT" ? "write" : "read" });
    }
    if (this.#records.tableName(table) === undefined) {
      throw new ServiceFailureError(404, "TableNotFound", "The table specified does not exist.");
    }
    return call.method === "PUT" ? this.#admin.setAcl(table, call.body) : this.#admin.getAcl(table);
  }

  #context(call: Call, table: string): RenderContext {
    return {
      level: levelOf(call),
      base: this.#base,
      account: this.#account.name,
      table,
    };
  }

  async #queryTables(call: Call): Promise<Answer> {
    const level = levelOf(call);
    const top = topOf(call.query);
    const filterText = call.query.get("$filter");
    const predicate =
      filterText === null || filterText.trim() === "" ? undefined : compilePredicate(parseFilter(filterText));
    const from = call.query.get("NextTableName");
    const start = from === null ? undefined : decodeContinuationKey(from);
    const names = (await this.#store.listTables()).sort(); // ordinal, as the service lists them
    const value: Record<string, unknown>[] = [];
    let next: string | undefined;
    for (const name of names) {
      if (start !== undefined && name < start) continue;
      if (predicate !== undefined && !predicate(tableRecord(name))) continue;
      if (value.length === top) {
        next = name;
        break;
      }
      value.push(this.#tableJson(name, level, false));
    }
    const json: Record<string, unknown> = {};
    if (level !== "nometadata") json["odata.metadata"] = `${this.#base}/$metadata#Tables`;
    json.value = value;
    const headers: Record<string, string> = { "Content-Type": jsonType(level) };
    if (next !== undefined) headers["x-ms-continuation-NextTableName"] = encodeContinuationKey(next);
    return { status: 200, headers, body: JSON.stringify(json) };
  }

  #tableJson(name: string, level: MetadataLevel, single: boolean): Record<string, unknown> {
    const json: Record<string, unknown> = {};
    if (single && level !== "nometadata") json["odata.metadata"] = `${this.#base}/$metadata#Tables/@Element`;
    if (level === "fullmetadata") {
      json["odata.type"] = `${this.#account.name}.Tables`;
      json["odata.id"] = `${this.#base}/Tables('${name}')`;
      json["odata.editLink"] = `Tables('${name}')`;
    }
    json.TableName = name;
    return json;
  }

  async #createTable(call: Call): Promise<Answer> {
    const table = parseJsonObject(call.body).TableName;
    if (typeof table !== "string") {
      throw badRequest("InvalidInput", 'the body must name the table: {"TableName":"…"}');
    }
    // The check and the create run in one synchronous step: no other request can slip between them.
    if (this.#records.tableName(table) !== undefined) {
      throw new ServiceFailureError(409, "TableAlreadyExists", "The table specified already exists.");
    }
    await this.#store.createTable(table);
    const level = levelOf(call);
    const headers: Record<string, string> = { Location: `${this.#base}/Tables('${table}')` };
    if (preferNoContent(call)) {
      return { status: 204, headers: { ...headers, "Preference-Applied": "return-no-content" } };
    }
    return {
      status: 201,
      headers: { ...headers, "Content-Type": jsonType(level), "Preference-Applied": "return-content" },
      body: JSON.stringify(this.#tableJson(table, level, true)),
    };
  }

  async #deleteTable(table: string): Promise<Answer> {
    if (this.#records.tableName(table) === undefined) {
      throw new ServiceFailureError(404, "ResourceNotFound", "The specified resource does not exist.");
    }
    // The store drops the table's ACL with it, in the same journal line.
    await this.#store.deleteTable(table);
    return { status: 204, headers: {} };
  }

  #queryEntities(call: Call, table: string): Answer {
    const context = this.#context(call, table);
    const select = selectOf(call.query);
    const npk = call.query.get("NextPartitionKey");
    const nrk = call.query.get("NextRowKey");
    const continuation =
      npk === null
        ? undefined
        : {
            nextPartitionKey: decodeContinuationKey(npk),
            ...(nrk === null ? {} : { nextRowKey: decodeContinuationKey(nrk) }),
          };
    const own = call.query.get("$filter");
    // A SAS key range narrows the query: nothing outside it is ever returned.
    const range = call.grant === undefined ? undefined : rangeFilter(call.grant);
    const filter =
      range === undefined ? own : own === null || own.trim() === "" ? range : `(${own}) and ${range}`;
    const page = this.#records.queryRecords(table, {
      ...(filter === null ? {} : { filter }),
      top: topOf(call.query),
      ...(continuation === undefined ? {} : { continuation }),
    });
    // The page is written as text from cached pieces: a page is up to 1,000 entities.
    const entities = page.items.map((record) => this.#json.write(record, context, select, false));
    const body =
      context.level === "nometadata"
        ? `{"value":[${entities.join(",")}]}`
        : `{"odata.metadata":${JSON.stringify(`${this.#base}/$metadata#${table}`)},"value":[${entities.join(",")}]}`;
    const headers: Record<string, string> = { "Content-Type": jsonType(context.level) };
    if (page.continuation !== undefined) {
      headers["x-ms-continuation-NextPartitionKey"] = encodeContinuationKey(
        page.continuation.nextPartitionKey,
      );
      if (page.continuation.nextRowKey !== undefined) {
        headers["x-ms-continuation-NextRowKey"] = encodeContinuationKey(page.continuation.nextRowKey);
      }
    }
    return { status: 200, headers, body };
  }

  #getEntity(call: Call, at: EntityAt): Answer {
    const record = this.#records.getRecord(at.table, at.partitionKey, at.rowKey);
    if (record === undefined)
      throw new ServiceFailureError(404, "ResourceNotFound", "The specified resource does not exist.");
    const context = this.#context(call, at.table);
    return {
      status: 200,
      headers: { "Content-Type": jsonType(context.level), ETag: record.etag },
      body: this.#json.write(record, context, selectOf(call.query), true),
    };
  }

  async #insert(call: Call, table: string): Promise<Answer> {
    const entity = readEntityBody(call.body, undefined);
    if (call.grant !== undefined) {
      authorize(call.grant, {
        kind: "entity",
        table,
        verb: "add",
        partitionKey: entity.partitionKey,
        rowKey: entity.rowKey,
      });
    }
    const written = this.#store.insert(table, entity);
    // Read back in the same synchronous step as the write, before any other request runs.
    const record = this.#readBack(table, entity);
    await written;
    return this.#created(call, table, record as EntityRecord);
  }

  /** The stored record of a write just submitted; undefined when the write failed (awaiting it says why). */
  #readBack(table: string, keys: { partitionKey: string; rowKey: string }): EntityRecord | undefined {
    try {
      return this.#records.getRecord(table, keys.partitionKey, keys.rowKey);
    } catch {
      return undefined;
    }
  }

  #created(call: Call, table: string, record: EntityRecord): Answer {
    const location = `${this.#base}/${this.#entityPath(table, record.partitionKey, record.rowKey)}`;
    const headers: Record<string, string> = {
      ETag: record.etag,
      Location: location,
      DataServiceId: location,
    };
    if (preferNoContent(call)) {
      return { status: 204, headers: { ...headers, "Preference-Applied": "return-no-content" } };
    }
    const context = this.#context(call, table);
    return {
      status: 201,
      headers: {
        ...headers,
        "Content-Type": jsonType(context.level),
        "Preference-Applied": "return-content",
      },
      body: this.#json.write(record, context, undefined, true),
    };
  }

  #entityPath(table: string, partitionKey: string, rowKey: string): string {
    return `${table}(PartitionKey='${quoteKey(partitionKey)}',RowKey='${quoteKey(rowKey)}')`;
  }

  async #write(call: Call, at: EntityAt, mode: WriteMode): Promise<Answer> {
    const entity = readEntityBody(call.body, at);
    const ifMatch = call.header("if-match");
    const result =
      ifMatch === undefined
        ? await this.#store.upsert(at.table, entity, mode)
        : await this.#store.update(at.table, entity, mode, ifMatch);
    return { status: 204, headers: { ETag: result.etag } };
  }

  async #delete(call: Call, at: EntityAt): Promise<Answer> {
    const ifMatch = call.header("if-match");
    if (ifMatch === undefined) {
      throw new ServiceFailureError(
        400,
        "MissingRequiredHeader",
        "An HTTP header that's mandatory for this request is not specified.",
      );
    }
    const deleted = await this.#store.delete(at.table, at.partitionKey, at.rowKey, ifMatch);
    if (!deleted)
      throw new ServiceFailureError(404, "ResourceNotFound", "The specified resource does not exist.");
    return { status: 204, headers: {} };
  }

  /** An entity group transaction: every operation parsed and checked, then one atomic store call. */
  async #batch(call: Call): Promise<Answer> {
    if (call.method !== "POST") {
      throw new ServiceFailureError(
        405,
        "UnsupportedHttpVerb",
        "The resource doesn't support the specified HTTP verb.",
      );
    }
    const boundary = boundaryOf(call.header("content-type"));
    const batch = parseBatch(call.body, boundary);
    if (batch.kind === "query") return this.#batchQuery(call, batch.operation);
    const operations = batch.operations;
    const batchId = randomUUID();
    const changesetId = randomUUID();
    const planned: { action: TransactionAction; table: string }[] = [];
    let table: string | undefined;
    let partitionKey: string | undefined;
    try {
      for (let index = 0; index < operations.length; index++) {
        try {
          const step = this.#batchAction(operations[index] as BatchOperation);
          const keys = step.action.kind === "delete" ? step.action : step.action.entity;
          if (call.grant !== undefined) {
            authorize(call.grant, {
              kind: "entity",
              table: step.table,
              verb: SAS_VERBS[step.action.kind],
              partitionKey: keys.partitionKey,
              rowKey: keys.rowKey,
            });
          }
          if (
            table !== undefined &&
            step.table !== table &&
            step.table.toLowerCase() !== table.toLowerCase()
          ) {
            throw badRequest("InvalidInput", "all operations of a batch must address one table");
          }
          if (partitionKey !== undefined && keys.partitionKey !== partitionKey) {
            throw badRequest(
              "CommandsInBatchActOnDifferentPartitions",
              "all operations of a batch must share one PartitionKey",
            );
          }
          table = step.table;
          partitionKey = keys.partitionKey;
          planned.push(step);
        } catch (error) {
          throw new IndexedFailure(index, error);
        }
      }
      if (table === undefined || partitionKey === undefined)
        throw new IndexedFailure(0, badRequest("InvalidInput", "a batch needs at least one operation"));
      const submitted = this.#store.submitTransaction(
        table,
        partitionKey,
        planned.map((p) => p.action),
      );
      // An insert sent without `Prefer: return-no-content` is answered 201 with the entity, as a single
      // insert is ("Performing entity group transactions": its sample answers 201 Created with the
      // entity). The records are read in the same synchronous step as the write, before any other request.
      const created = planned.map((step, i) =>
        step.action.kind === "insert" && !prefersNoContent(operations[i]?.header("prefer"))
          ? this.#readBack(step.table, step.action.entity)
          : undefined,
      );
      const results = await submitted;
      // Every part starts alike: its MIME header is written once per batch.
      const start = partStart(changesetId);
      let changeset = "";
      for (let i = 0; i < planned.length; i++) {
        const { action, table } = planned[i] as (typeof planned)[number];
        const record = created[i];
        const etag = `ETag: ${results[i]?.etag ?? ""}\r\n`;
        if (action.kind !== "insert") {
          changeset += `${start}HTTP/1.1 204 No Content\r\nDataServiceVersion: 3.0;\r\n`;
          changeset += action.kind === "delete" ? "\r\n" : `${etag}\r\n`;
          continue;
        }
        const { partitionKey, rowKey } = action.entity;
        const location = `${this.#base}/${this.#entityPath(table, partitionKey, rowKey)}`;
        const where = `Location: ${location}\r\nDataServiceId: ${location}\r\n`;
        if (record === undefined) {
          changeset += `${start}HTTP/1.1 204 No Content\r\nDataServiceVersion: 3.0;\r\n${etag}${where}Preference-Applied: return-no-content\r\n\r\n`;
          continue;
        }
        const operation = operations[i] as BatchOperation;
        const context: RenderContext = {
          level: metadataLevel(operation.header("accept")),
          base: this.#base,
          account: this.#account.name,
          table,
        };
        const json = this.#json.write(record, context, undefined, true);
        changeset += `${start}HTTP/1.1 201 Created\r\nDataServiceVersion: 3.0;\r\nContent-Type: ${jsonType(context.level)}\r\n${etag}${where}Preference-Applied: return-content\r\n\r\n${json}\r\n`;
      }
      return batchAnswer(batchId, changesetId, changeset);
    } catch (error) {
      const failure = error instanceof IndexedFailure ? indexed(error) : toFailure(error);
      const json = errorBody(failure, randomUUID(), new Date());
      const part = `HTTP/1.1 ${failure.status} ${statusText(failure.status)}\r\nDataServiceVersion: 3.0;\r\nContent-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n\r\n${json}\r\n`;
      return batchAnswer(batchId, changesetId, partStart(changesetId) + part);
    }
  }

  /**
   * A batch whose only part is a query (a point read or an entity query), answered as one
   * `application/http` part outside any changeset; its failure is that part's status, not the batch's.
   */
  #batchQuery(call: Call, operation: BatchOperation): Answer {
    let answer: Answer;
    try {
      const url = new URL(operation.url, "http://batch.invalid");
      const prefix = this.#accountPrefix;
      if (!url.pathname.startsWith(prefix))
        throw badRequest("InvalidUri", "the operation's URL names another account");
      const resource = parseResource(url.pathname.slice(prefix.length));
      const inner: Call = {
        method: "GET",
        resource,
        query: url.searchParams,
        header: (name) => operation.header(name),
        body: "",
        grant: call.grant,
      };
      if (resource.kind === "entity") {
        if (call.grant !== undefined) {
          const { table, partitionKey, rowKey } = resource;
          authorize(call.grant, { kind: "entity", table, verb: "read", partitionKey, rowKey });
        }
        answer = this.#getEntity(inner, resource);
      } else if (resource.kind === "entities") {
        if (call.grant !== undefined)
          authorize(call.grant, { kind: "entity", table: resource.table, verb: "read" });
        answer = this.#queryEntities(inner, resource.table);
      } else {
        throw badRequest("InvalidInput", "a query in a batch must read entities");
      }
    } catch (error) {
      // As for a changeset, the message names the failing operation: the only one, index 0.
      const failure = toFailure(error);
      answer = failureAnswer({ ...failure, message: `0:${failure.message}` }, randomUUID(), new Date());
    }
    const headers = Object.entries({ DataServiceVersion: "3.0;", ...answer.headers })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join("");
    const batchId = randomUUID();
    const body =
      `--batchresponse_${batchId}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n` +
      `HTTP/1.1 ${answer.status} ${statusText(answer.status)}\r\n${headers}\r\n${answer.body ?? ""}\r\n` +
      `--batchresponse_${batchId}--\r\n`;
    return {
      status: 202,
      headers: { "Content-Type": `multipart/mixed; boundary=batchresponse_${batchId}` },
      body,
    };
  }

  /** One batch operation as a port action. */
  #batchAction(operation: BatchOperation): { table: string; action: TransactionAction } {
    let path: string;
    try {
      path = operationPath(operation.url);
    } catch {
      throw badRequest("InvalidUri", "the operation's URL is invalid");
    }
    const prefix = this.#accountPrefix;
    if (!path.startsWith(prefix)) throw badRequest("InvalidUri", "the operation's URL names another account");
    const resource = parseResource(path.slice(prefix.length));
    // The operation itself, not a whole `Call`: a batch has up to 100 of them.
    const call = { method: operation.method, body: operation.body };
    if (resource.kind === "entities" && call.method === "POST") {
      return {
        table: resource.table,
        action: { kind: "insert", entity: readEntityBody(call.body, undefined) },
      };
    }
    if (resource.kind === "entity") {
      const ifMatch = operation.header("if-match");
      if (call.method === "DELETE") {
        if (ifMatch === undefined)
          throw new ServiceFailureError(
            400,
            "MissingRequiredHeader",
            "An HTTP header that's mandatory for this request is not specified.",
          );
        return {
          table: resource.table,
          action: { kind: "delete", partitionKey: resource.partitionKey, rowKey: resource.rowKey, ifMatch },
        };
      }
      const mode: WriteMode | undefined =
        call.method === "PUT"
          ? "replace"
          : call.method === "MERGE" || call.method === "PATCH"
            ? "merge"
            : undefined;
      if (mode !== undefined) {
        const entity = readEntityBody(call.body, resource);
        return {
          table: resource.table,
          action:
            ifMatch === undefined
              ? { kind: "upsert", entity, mode }
              : { kind: "update", entity, mode, ifMatch },
        };
      }
    }
    throw badRequest("InvalidInput", `a changeset cannot hold ${operation.method} ${resource.kind} requests`);
  }
}

type EntityAt = { table: string; partitionKey: string; rowKey: string };

/** The SAS permission verb each kind of batch operation needs. */
const SAS_VERBS = { insert: "add", upsert: "upsert", update: "update", delete: "delete" } as const;

/** A batch failure found while parsing operation `index`. */
class IndexedFailure extends Error {
  readonly index: number;
  constructor(index: number, cause: unknown) {
    super("batch operation failed", { cause });
    this.index = index;
  }
}

function indexed(error: IndexedFailure): ServiceFailure {
  const failure = toFailure(error.cause);
  return { ...failure, message: `${error.index}:${failure.message}` };
}

/** The MIME header of one changeset response part, before its HTTP response. */
function partStart(changesetId: string): string {
  return `--changesetresponse_${changesetId}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n`;
}

/** The batch response around a changeset's parts (each begun with `partStart`). */
function batchAnswer(batchId: string, changesetId: string, changeset: string): Answer {
  const body =
    `--batchresponse_${batchId}\r\nContent-Type: multipart/mixed; boundary=changesetresponse_${changesetId}\r\n\r\n` +
    `${changeset}--changesetresponse_${changesetId}--\r\n--batchresponse_${batchId}--\r\n`;
  return {
    status: 202,
    headers: { "Content-Type": `multipart/mixed; boundary=batchresponse_${batchId}` },
    body,
  };
}

function statusText(status: number): string {
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

function failureAnswer(failure: ServiceFailure, requestId: string, now: Date, xml = false): Answer {
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

function tableRecord(name: string): EntityRecord {
  return {
    partitionKey: "",
    rowKey: "",
    timestamp: 0n,
    etag: "",
    properties: new Map([["TableName", { type: "String", value: name }]]),
  };
}

function topOf(query: URLSearchParams): number {
  const text = query.get("$top");
  if (text === null) return 1000;
  const top = /^\d{1,4}$/.test(text) ? Number(text) : Number.NaN;
  if (!(top >= 1 && top <= 1000))
    throw badRequest("InvalidInput", `$top must be an integer from 1 to 1000, got '${text.slice(0, 20)}'`);
  return top;
}

function selectOf(query: URLSearchParams): ReadonlySet<string> | undefined {
  const text = query.get("$select");
  if (text === null || text.trim() === "" || text.trim() === "*") return undefined;
  return new Set(
    text
      .split(",")
      .map((name) => name.trim())
      .filter((name) => name !== ""),
  );
}

/** The metadata level of a request's answer: `$format` first, then `Accept`. */
function levelOf(call: Call): MetadataLevel {
  return metadataLevel(call.header("accept"), call.query.get("$format"));
}

function preferNoContent(call: Call): boolean {
  return prefersNoContent(call.header("prefer"));
}

/** Whether a `Prefer` header asks for no entity in the answer (`return-no-content`). */
function prefersNoContent(prefer: string | undefined): boolean {
  return /return-no-content/i.test(prefer ?? "");
}

function jsonType(level: MetadataLevel): string {
  return `application/json;odata=${level};streaming=true;charset=utf-8`;
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
