import { randomUUID } from "node:crypto";
import type { EntityRecord } from "../store/served-store.js";
import type { TransactionAction, WriteMode, WriteResult } from "../store/table-store.js";
import { type BatchOperation, boundaryOf, parseBatch } from "./batch-body.js";
import { getEntity, readBack } from "./entity-operations.js";
import { metadataLevel, type RenderContext, readEntityBody } from "./odata-entity.js";
import { operationPath } from "./operation-path.js";
import { queryEntities } from "./query-operations.js";
import { parseResource } from "./resource-path.js";
import {
  type Answer,
  type Call,
  entityPath,
  failureAnswer,
  jsonType,
  prefersNoContent,
  type ServiceContext,
  statusText,
} from "./service-call.js";
import {
  badRequest,
  errorBody,
  type ServiceFailure,
  ServiceFailureError,
  toFailure,
} from "./service-error.js";
import { authorize } from "./shared-access-signature.js";

/** The SAS permission verb each kind of batch operation needs. */
const SAS_VERBS = { insert: "add", upsert: "upsert", update: "update", delete: "delete" } as const;

/** An entity group transaction: every operation parsed and checked, then one atomic store call. */
export async function submitBatch(service: ServiceContext, call: Call): Promise<Answer> {
  if (call.method !== "POST") {
    throw new ServiceFailureError(
      405,
      "UnsupportedHttpVerb",
      "The resource doesn't support the specified HTTP verb.",
    );
  }
  const boundary = boundaryOf(call.header("content-type"));
  const batch = parseBatch(call.body, boundary);
  if (batch.kind === "query") return batchQuery(service, call, batch.operation);
  const operations = batch.operations;
  const batchId = randomUUID();
  const changesetId = randomUUID();
  try {
    const changeset = planChangeset(service, call, operations);
    const { submitted, created } = submitChangeset(service, changeset, operations);
    const results = await submitted;
    const parts = changesetParts(service, changesetId, operations, changeset.steps, results, created);
    return batchAnswer(batchId, changesetId, parts);
  } catch (error) {
    return failedChangeset(batchId, changesetId, error);
  }
}

/** One changeset operation as the action it sends to its table. */
interface BatchStep {
  table: string;
  action: TransactionAction;
}

/** A changeset's steps, all on one table and one partition. */
interface PlannedChangeset {
  table: string;
  partitionKey: string;
  steps: BatchStep[];
}

/**
 * Parses and checks each operation in order (its SAS permission, then one table and one partition
 * for all); a failure names the operation's index.
 */
function planChangeset(
  service: ServiceContext,
  call: Call,
  operations: readonly BatchOperation[],
): PlannedChangeset {
  const steps: BatchStep[] = [];
  let table: string | undefined;
  let partitionKey: string | undefined;
  for (let index = 0; index < operations.length; index++) {
    try {
      const step = batchAction(service, operations[index] as BatchOperation);
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
      if (table !== undefined && step.table !== table && step.table.toLowerCase() !== table.toLowerCase()) {
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
      steps.push(step);
    } catch (error) {
      throw new IndexedFailure(index, error);
    }
  }
  if (table === undefined || partitionKey === undefined)
    throw new IndexedFailure(0, badRequest("InvalidInput", "a batch needs at least one operation"));
  return { table, partitionKey, steps };
}

/**
 * Submits the changeset, and reads back the entities its inserts answer with in the same
 * synchronous step as the write, before any other request.
 */
function submitChangeset(
  service: ServiceContext,
  changeset: PlannedChangeset,
  operations: readonly BatchOperation[],
): { submitted: Promise<WriteResult[]>; created: Array<EntityRecord | undefined> } {
  // The body was judged by its bytes as received (table-service.ts): not sized again as the SDK would write it.
  const submitted = service.store.submitReceivedTransaction(
    changeset.table,
    changeset.partitionKey,
    changeset.steps.map((p) => p.action),
  );
  // An insert sent without `Prefer: return-no-content` is answered 201 with the entity, as a single
  // insert is ("Performing entity group transactions": its sample answers 201 Created with the
  // entity).
  const created = changeset.steps.map((step, i) =>
    step.action.kind === "insert" && !prefersNoContent(operations[i]?.header("prefer"))
      ? readBack(service, step.table, step.action.entity)
      : undefined,
  );
  return { submitted, created };
}

/** The changeset's response parts, one per operation in order. */
function changesetParts(
  service: ServiceContext,
  changesetId: string,
  operations: readonly BatchOperation[],
  steps: readonly BatchStep[],
  results: readonly WriteResult[],
  created: ReadonlyArray<EntityRecord | undefined>,
): string {
  // Every part starts alike: its MIME header is written once per batch.
  const start = partStart(changesetId);
  let changeset = "";
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i] as BatchStep;
    const etag = `ETag: ${results[i]?.etag ?? ""}\r\n`;
    changeset += start + stepResponse(service, step, operations[i] as BatchOperation, etag, created[i]);
  }
  return changeset;
}

/** One operation's HTTP response: 204 for an update or delete; for an insert 204, or 201 with the entity. */
function stepResponse(
  service: ServiceContext,
  { action, table }: BatchStep,
  operation: BatchOperation,
  etag: string,
  record: EntityRecord | undefined,
): string {
  if (action.kind !== "insert") {
    const end = action.kind === "delete" ? "\r\n" : `${etag}\r\n`;
    return `HTTP/1.1 204 No Content\r\nDataServiceVersion: 3.0;\r\n${end}`;
  }
  const { partitionKey, rowKey } = action.entity;
  const location = `${service.base}/${entityPath(table, partitionKey, rowKey)}`;
  const where = `Location: ${location}\r\nDataServiceId: ${location}\r\n`;
  if (record === undefined) {
    return `HTTP/1.1 204 No Content\r\nDataServiceVersion: 3.0;\r\n${etag}${where}Preference-Applied: return-no-content\r\n\r\n`;
  }
  const context: RenderContext = {
    level: metadataLevel(operation.header("accept"), formatOf(operation.url)),
    base: service.base,
    account: service.account.name,
    table,
  };
  const json = service.json.write(record, context, undefined, true);
  return `HTTP/1.1 201 Created\r\nDataServiceVersion: 3.0;\r\nContent-Type: ${jsonType(context.level)}\r\n${etag}${where}Preference-Applied: return-content\r\n\r\n${json}\r\n`;
}

/** A changeset that failed: one part with the failure, its message naming the operation's index. */
function failedChangeset(batchId: string, changesetId: string, error: unknown): Answer {
  const failure = error instanceof IndexedFailure ? indexed(error) : toFailure(error);
  const json = errorBody(failure, randomUUID(), new Date());
  const part = `HTTP/1.1 ${failure.status} ${statusText(failure.status)}\r\nDataServiceVersion: 3.0;\r\nContent-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n\r\n${json}\r\n`;
  return batchAnswer(batchId, changesetId, partStart(changesetId) + part);
}

/**
 * A batch whose only part is a query (a point read or an entity query), answered as one
 * `application/http` part outside any changeset; its failure is that part's status, not the batch's.
 */
function batchQuery(service: ServiceContext, call: Call, operation: BatchOperation): Answer {
  let answer: Answer;
  try {
    const url = new URL(operation.url, "http://batch.invalid");
    const prefix = `/${service.account.name}/`;
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
      answer = getEntity(service, inner, resource);
    } else if (resource.kind === "entities") {
      if (call.grant !== undefined)
        authorize(call.grant, { kind: "entity", table: resource.table, verb: "read" });
      answer = queryEntities(service, inner, resource.table);
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
function batchAction(
  service: ServiceContext,
  operation: BatchOperation,
): { table: string; action: TransactionAction } {
  let path: string;
  try {
    path = operationPath(operation.url);
  } catch {
    throw badRequest("InvalidUri", "the operation's URL is invalid");
  }
  const prefix = `/${service.account.name}/`;
  if (!path.startsWith(prefix)) throw badRequest("InvalidUri", "the operation's URL names another account");
  const resource = parseResource(path.slice(prefix.length));
  const method = operation.method;
  if (resource.kind === "entities" && method === "POST") {
    return {
      table: resource.table,
      action: { kind: "insert", entity: readEntityBody(operation.body, undefined) },
    };
  }
  if (resource.kind === "entity") {
    const ifMatch = operation.header("if-match");
    if (method === "DELETE") {
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
      method === "PUT" ? "replace" : method === "MERGE" || method === "PATCH" ? "merge" : undefined;
    if (mode !== undefined) {
      const entity = readEntityBody(operation.body, resource);
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

/** The `$format` query option of an operation's URL (it takes precedence over its `Accept`), or null. */
function formatOf(url: string): string | null {
  const q = url.indexOf("?");
  return q < 0 ? null : new URLSearchParams(url.slice(q + 1)).get("$format");
}
