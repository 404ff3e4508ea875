import { decodeContinuationKey, encodeContinuationKey } from "./continuation-header.js";
import { type MetadataLevel, parseJsonObject } from "./odata-entity.js";
import {
  type Answer,
  type Call,
  jsonType,
  levelOf,
  prefersNoContent,
  type ServiceContext,
  topOf,
} from "./service-call.js";
import { badRequest, ServiceFailureError } from "./service-error.js";

/** Query Tables: one page of table names (ordinal order), filtered, with `NextTableName` when more follow. */
export function queryTables(service: ServiceContext, call: Call): Answer {
  const level = levelOf(call);
  const top = topOf(call.query);
  const filter = call.query.get("$filter");
  const from = call.query.get("NextTableName");
  const start = from === null ? undefined : decodeContinuationKey(from);
  const value: Record<string, unknown>[] = [];
  let next: string | undefined;
  for (const name of service.store.tableNames(filter ?? undefined)) {
    if (start !== undefined && name < start) continue;
    if (value.length === top) {
      next = name;
      break;
    }
    value.push(tableJson(service, name, level, false));
  }
  const json: Record<string, unknown> = {};
  if (level !== "nometadata") json["odata.metadata"] = `${service.base}/$metadata#Tables`;
  json.value = value;
  const headers: Record<string, string> = { "Content-Type": jsonType(level) };
  if (next !== undefined) headers["x-ms-continuation-NextTableName"] = encodeContinuationKey(next);
  return { status: 200, headers, body: JSON.stringify(json) };
}

/** Create Table: 201 with the table (204 with return-no-content); 409 when it exists or is being deleted. */
export async function createTable(service: ServiceContext, call: Call): Promise<Answer> {
  const table = parseJsonObject(call.body).TableName;
  if (typeof table !== "string") {
    throw badRequest("InvalidInput", 'the body must name the table: {"TableName":"…"}');
  }
  // The check and the create run in one synchronous step: no other request can slip between them.
  if (service.store.tableName(table) !== undefined) {
    throw new ServiceFailureError(409, "TableAlreadyExists", "The table specified already exists.");
  }
  await service.store.createTable(table);
  const level = levelOf(call);
  const headers: Record<string, string> = { Location: `${service.base}/Tables('${table}')` };
  if (prefersNoContent(call.header("prefer"))) {
    return { status: 204, headers: { ...headers, "Preference-Applied": "return-no-content" } };
  }
  return {
    status: 201,
    headers: { ...headers, "Content-Type": jsonType(level), "Preference-Applied": "return-content" },
    body: JSON.stringify(tableJson(service, table, level, true)),
  };
}

/** Delete Table: 204, or 404 when it does not exist (the store drops its ACL with it). */
export async function deleteTable(service: ServiceContext, table: string): Promise<Answer> {
  if (service.store.tableName(table) === undefined) {
    throw new ServiceFailureError(404, "ResourceNotFound", "The specified resource does not exist.");
  }
  await service.store.deleteTable(table);
  return { status: 204, headers: {} };
}

function tableJson(
  service: ServiceContext,
  name: string,
  level: MetadataLevel,
  single: boolean,
): Record<string, unknown> {
  const json: Record<string, unknown> = {};
  if (single && level !== "nometadata") json["odata.metadata"] = `${service.base}/$metadata#Tables/@Element`;
  if (level === "fullmetadata") {
    json["odata.type"] = `${service.account.name}.Tables`;
    json["odata.id"] = `${service.base}/Tables('${name}')`;
    json["odata.editLink"] = `Tables('${name}')`;
  }
  json.TableName = name;
  return json;
}
