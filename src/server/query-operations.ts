import { decodeContinuationKey, encodeContinuationKey } from "./continuation-header.js";
import {
  type Answer,
  type Call,
  jsonType,
  renderContext,
  type ServiceContext,
  selectOf,
  topOf,
} from "./service-call.js";
import { rangeFilter } from "./shared-access-signature.js";

/** Query Entities: one page of a table's entities, with continuation headers when more may follow. */
export function queryEntities(service: ServiceContext, call: Call, table: string): Answer {
  const context = renderContext(service, call, table);
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
  const page = service.store.queryRecords(table, {
    ...(filter === null ? {} : { filter }),
    top: topOf(call.query),
    ...(continuation === undefined ? {} : { continuation }),
  });
  // The page is written as text from cached pieces: a page is up to 1,000 entities.
  const entities = page.items.map((record) => service.json.write(record, context, select, false));
  const body =
    context.level === "nometadata"
      ? `{"value":[${entities.join(",")}]}`
      : `{"odata.metadata":${JSON.stringify(`${service.base}/$metadata#${table}`)},"value":[${entities.join(",")}]}`;
  const headers: Record<string, string> = { "Content-Type": jsonType(context.level) };
  if (page.continuation !== undefined) {
    headers["x-ms-continuation-NextPartitionKey"] = encodeContinuationKey(page.continuation.nextPartitionKey);
    if (page.continuation.nextRowKey !== undefined) {
      headers["x-ms-continuation-NextRowKey"] = encodeContinuationKey(page.continuation.nextRowKey);
    }
  }
  return { status: 200, headers, body };
}
