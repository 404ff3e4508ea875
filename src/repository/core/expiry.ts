import type { QueryExecutor } from "../../query/query.js";
import type { EntityModel, ExpiryModel } from "../../schema/entity-model.js";
import type { StoredEntity, WireEntity } from "../../store/table-store.js";
import { ScopedState, type StateScope } from "../../util/scoped-state.js";

/** The instant (ms since the epoch) a stored row's expiry column holds; `undefined` without one. */
export function expiresAtOf(expiry: ExpiryModel, stored: StoredEntity): number | undefined {
  const value: unknown = stored[expiry.property];
  const ms =
    value instanceof Date
      ? value.getTime()
      : typeof value === "string"
        ? Date.parse(value)
        : value !== null && typeof value === "object" && "value" in value
          ? Date.parse(String((value as { value: unknown }).value))
          : Number.NaN;
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * True for a row of an `expiresAt` entity whose expiry is at or before `now`: from that instant it
 * is gone for every read and write, whether or not a sweep has deleted it yet.
 */
export function isExpiredRow(model: EntityModel, stored: StoredEntity, now: number): boolean {
  const expiry = model.expiry;
  if (expiry === undefined) return false;
  const at = expiresAtOf(expiry, stored);
  return at !== undefined && at <= now;
}

/** The expiry of the stored version of each tracked instance (its ETag's version), by scope. */
const storedExpiry = new ScopedState<number>();

/**
 * Remembers the expiry of the version of `entity` that a read returned or a write left (`row`), so a
 * later write conditional on that version's ETag knows, without a read, whether it has expired since.
 */
export function rememberExpiry(
  model: EntityModel,
  entity: object,
  row: WireEntity | undefined,
  scope: StateScope,
): void {
  if (model.expiry === undefined) return;
  storedExpiry.set(
    entity,
    scope,
    row === undefined ? undefined : expiresAtOf(model.expiry, row as StoredEntity),
  );
}

/** True when the version of `entity` tracked in `scope` had expired by `now`. */
export function trackedVersionExpired(entity: object, scope: StateScope, now: number): boolean {
  const at = storedExpiry.get(entity, scope);
  return at !== undefined && at <= now;
}

/**
 * An executor whose projected reads (`select`) also fetch the expiry column, so the row reader can
 * tell an expired row; the column is dropped again from results that did not ask for it.
 */
export function withExpiryColumn<T>(model: EntityModel, executor: QueryExecutor<T>): QueryExecutor<T> {
  const expiry = model.expiry;
  if (expiry === undefined) return executor;
  const widen = (select: readonly string[] | undefined) =>
    select === undefined || select.includes(expiry.property) ? select : [...select, expiry.property];
  const drop = (select: readonly string[] | undefined, item: T | undefined): T | undefined => {
    if (item !== undefined && select !== undefined && !select.includes(expiry.property)) {
      delete (item as Record<string, unknown>)[expiry.field];
    }
    return item;
  };
  const fetchFirst = executor.fetchFirst;
  return {
    ...executor,
    async fetchPage(table, filter, select, top, continuation) {
      const page = await executor.fetchPage(table, filter, widen(select), top, continuation);
      for (const item of page.items) drop(select, item);
      return page;
    },
    async fetchPoint(table, partitionKey, rowKey, select) {
      return drop(select, await executor.fetchPoint(table, partitionKey, rowKey, widen(select)));
    },
    ...(fetchFirst === undefined
      ? {}
      : {
          async fetchFirst(table, filter, select, top) {
            const items = await fetchFirst.call(executor, table, filter, widen(select), top);
            for (const item of items) drop(select, item);
            return items;
          },
        }),
  };
}
