import type { EntityModel } from "../../../schema/entity-model.js";
import type { StoredEntity } from "../../../store/table-store.js";
import type { Requests } from "../../core/requests.js";
import { readWide } from "../../core/wide-reads.js";

/** The stored entity a step writes: one row, or a wide entity's rows assembled (its ETag lists every row's). */
export function readEntityRow(
  runner: Requests,
  model: EntityModel<object>,
  table: string,
  keys: { partitionKey: string; rowKey: string },
): Promise<StoredEntity | undefined> {
  if (model.wide) return readWide(runner, table, keys.partitionKey, keys.rowKey);
  return runner.run("get", table, (s) => s.getEntity(table, keys.partitionKey, keys.rowKey));
}
