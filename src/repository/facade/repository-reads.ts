import { ValidationError } from "../../errors.js";
import { findState } from "../../query/find-state.js";
import { Query, type QueryExecutor } from "../../query/query.js";
import type { EntityModel, SummaryModel } from "../../schema/entity-model.js";
import type { StoredEntity } from "../../store/table-store.js";
import type { WhereValues } from "../../util/entity-fields.js";
import { ENTITY_TYPE_PROPERTY, SUMMARY_PROPERTY } from "../../wire/system-properties.js";
import { COPY_INDEX_PROPERTY } from "../core/copy-ref.js";
import type { RequestContext } from "../core/requests.js";
import { RemoteSummaries, type RemoteSummary } from "../summary/remote-summaries.js";
import { publicValues, type SummaryValues } from "../summary/summary-row.js";

/** The `ValidationError` of an index or summary the class does not declare, naming those it does. */
export function unknownName(
  entity: string,
  what: "index" | "summary",
  name: string,
  declared: Iterable<string>,
): ValidationError {
  const known = [...declared];
  return new ValidationError(
    `unknown-${what}`,
    `${entity} has no ${what} '${name}'${known.length ? ` (it has ${known.join(", ")})` : ""}`,
    { field: name },
  );
}

/** `find` in one table: the partition the key fields fix, narrowed by leading RowKey fields. */
export function findQuery<T extends object>(
  model: EntityModel<T>,
  executor: QueryExecutor<T>,
  table: string,
  partial: Partial<T>,
): Query<T> {
  const state = findState(model.name, model.partitionKey, model.rowKey, partial as Record<string, unknown>);
  const query = Query.build<T>(model, executor, { table, ...state, filters: [] });
  // A bucket holds many values of its hashed field: unless the RowKey prefix pins it, filter on it.
  const hashed = model.partitionKey.hashed?.field;
  const value = hashed === undefined ? undefined : (partial as Record<string, unknown>)[hashed];
  if (hashed === undefined || value === undefined || hashed in state.rowFields) return query;
  return query.where({ [hashed]: value } as WhereValues<T>);
}

/** The period field picks the table (as for get); unless it is also a key field, it has done its job. */
export function withoutPeriodField<T extends object>(model: EntityModel<T>, partial: Partial<T>): Partial<T> {
  const field = model.tableTemplate?.field;
  const keyField =
    field === undefined || model.partitionKey.fields.includes(field) || model.rowKey.fields.includes(field);
  if (keyField) return partial;
  const { [field as keyof T]: _period, ...keys } = partial;
  return keys as Partial<T>;
}

/** A summary kept in another partition: the sum of its contribution rows there (one range query). */
export async function remoteSummary(
  model: EntityModel<object>,
  runner: RequestContext,
  summary: SummaryModel,
  partial: Record<string, unknown>,
): Promise<SummaryValues> {
  const remote = summary as RemoteSummary;
  const partitionKey = remote.remote.partitionKey.encode(partial, "PartitionKey");
  const totals = await new RemoteSummaries(model as EntityModel, runner).totals(remote, partitionKey);
  return publicValues(summary, totals);
}

/** Rows written by another entity type sharing the table, index copies and summary rows are not the repository's to return. */
export function isOwnRow(model: EntityModel<object>, stored: StoredEntity): boolean {
  if (stored[COPY_INDEX_PROPERTY] !== undefined || stored[SUMMARY_PROPERTY] !== undefined) return false;
  // Runs per row on every scan: compare text, allocate nothing (parseEntityType would).
  const tag = stored[ENTITY_TYPE_PROPERTY];
  if (typeof tag !== "string") return true;
  const type = model.type;
  return tag.length > type.length
    ? tag.startsWith(type) && tag.lastIndexOf("@") === type.length
    : tag === type;
}
