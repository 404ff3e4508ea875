import type { Answer, Call, ServiceContext } from "./service-call.js";
import { ServiceFailureError } from "./service-error.js";
import { authorize } from "./shared-access-signature.js";

/** Get/Set Table Service Properties and Get Table Service Stats (`?restype=service&comp=…`). */
export function serviceOperation(service: ServiceContext, call: Call, now: Date): Answer {
  const comp = call.query.get("comp");
  if (call.query.get("restype") === "service" && (comp === "properties" || comp === "stats")) {
    const verb = call.method === "PUT" ? "write" : "read";
    if (call.grant !== undefined) authorize(call.grant, { kind: "service", verb });
    if (comp === "stats" && call.method === "GET") return service.admin.getStats(false, now);
    if (comp === "properties" && call.method === "GET") return service.admin.getProperties();
    if (comp === "properties" && call.method === "PUT") return service.admin.setProperties(call.body);
    throw unsupportedVerb(call.method);
  }
  throw new ServiceFailureError(
    400,
    "InvalidUri",
    "The requested URI does not represent any resource on the server.",
  );
}

/** Get/Set Table ACL (`table?comp=acl`) of an existing table. */
export function aclOperation(service: ServiceContext, call: Call, table: string): Answer {
  if (call.method !== "GET" && call.method !== "PUT") throw unsupportedVerb(call.method);
  if (call.grant !== undefined) {
    authorize(call.grant, { kind: "acl", table, verb: call.method === "PUT" ? "write" : "read" });
  }
  if (service.store.tableName(table) === undefined) {
    throw new ServiceFailureError(404, "TableNotFound", "The table specified does not exist.");
  }
  return call.method === "PUT" ? service.admin.setAcl(table, call.body) : service.admin.getAcl(table);
}

/** The service's 405 for a verb the resource does not support. */
export function unsupportedVerb(method: string): ServiceFailureError {
  return new ServiceFailureError(
    405,
    "UnsupportedHttpVerb",
    `The resource doesn't support the specified HTTP verb ${method}.`,
  );
}
