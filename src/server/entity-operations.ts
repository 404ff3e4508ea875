import type { EntityRecord } from "../store/served-store.js";
import type { WriteMode } from "../store/table-store.js";
import { readEntityBody } from "./odata-entity.js";
import {
  type Answer,
  type Call,
  type EntityAt,
  entityPath,
  jsonType,
  prefersNoContent,
  renderContext,
  type ServiceContext,
  selectOf,
} from "./service-call.js";
import { ServiceFailureError } from "./service-error.js";
import { authorize } from "./shared-access-signature.js";

/** Query Entity by its keys: 200 with the entity and its ETag, or 404. */
export function getEntity(service: ServiceContext, call: Call, at: EntityAt): Answer {
  const record = service.store.getRecord(at.table, at.partitionKey, at.rowKey);
  if (record === undefined)
    throw new ServiceFailureError(404, "ResourceNotFound", "The specified resource does not exist.");
  const context = renderContext(service, call, at.table);
  return {
    status: 200,
    headers: { "Content-Type": jsonType(context.level), ETag: record.etag },
    body: service.json.write(record, context, selectOf(call.query), true),
  };
}

/** Insert Entity: 201 with the entity, or 204 with `Prefer: return-no-content`. */
export async function insertEntity(service: ServiceContext, call: Call, table: string): Promise<Answer> {
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
  const written = service.store.insert(table, entity);
  // Read back in the same synchronous step as the write, before any other request runs.
  const record = readBack(service, table, entity);
  await written;
  const location = `${service.base}/${entityPath(table, entity.partitionKey, entity.rowKey)}`;
  const headers: Record<string, string> = {
    ETag: (record as EntityRecord).etag,
    Location: location,
    DataServiceId: location,
  };
  if (prefersNoContent(call.header("prefer"))) {
    return { status: 204, headers: { ...headers, "Preference-Applied": "return-no-content" } };
  }
  const context = renderContext(service, call, table);
  return {
    status: 201,
    headers: { ...headers, "Content-Type": jsonType(context.level), "Preference-Applied": "return-content" },
    body: service.json.write(record as EntityRecord, context, undefined, true),
  };
}

/**
 * The stored record of a write just submitted (the store does a write's work before its promise
 * settles); undefined when the write failed (awaiting it says why).
 */
export function readBack(
  service: ServiceContext,
  table: string,
  keys: { partitionKey: string; rowKey: string },
): EntityRecord | undefined {
  try {
    return service.store.getRecord(table, keys.partitionKey, keys.rowKey);
  } catch {
    return undefined;
  }
}

/** Update/Merge Entity (with If-Match) or Insert-Or-Replace/Merge (without): 204 with the new ETag. */
export async function writeEntity(
  service: ServiceContext,
  call: Call,
  at: EntityAt,
  mode: WriteMode,
): Promise<Answer> {
  const entity = readEntityBody(call.body, at);
  const ifMatch = call.header("if-match");
  const result =
    ifMatch === undefined
      ? await service.store.upsert(at.table, entity, mode)
      : await service.store.update(at.table, entity, mode, ifMatch);
  return { status: 204, headers: { ETag: result.etag } };
}

/** Delete Entity: If-Match is required; 404 when the entity does not exist. */
export async function deleteEntity(service: ServiceContext, call: Call, at: EntityAt): Promise<Answer> {
  const ifMatch = call.header("if-match");
  if (ifMatch === undefined) {
    throw new ServiceFailureError(
      400,
      "MissingRequiredHeader",
      "An HTTP header that's mandatory for this request is not specified.",
    );
  }
  const deleted = await service.store.delete(at.table, at.partitionKey, at.rowKey, ifMatch);
  if (!deleted)
    throw new ServiceFailureError(404, "ResourceNotFound", "The specified resource does not exist.");
  return { status: 204, headers: {} };
}
