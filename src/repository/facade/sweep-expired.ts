import { ConcurrencyError, ValidationError } from "../../errors.js";
import { dateToTicks, formatTicks } from "../../keys/ticks.js";
import { quoteString } from "../../query/odata.js";
import type { EntityModel } from "../../schema/entity-model.js";
import { EXPIRY_INDEX, EXPIRY_TABLE } from "../../schema/resolve-expiry.js";
import type { StoreContinuation, StoredEntity } from "../../store/table-store.js";
import { ServiceLimits } from "../../util/service-limits.js";
import { withChangeReason } from "../core/change-reason.js";
import { COPY_INDEX_PROPERTY, COPY_REFS_PROPERTY, type CopyRef, decodeCopyRefs } from "../core/copy-ref.js";
import { upcasterOf } from "../core/entity-rows.js";
import { isExpiredRow } from "../core/expiry.js";
import { isTableNotFound } from "../core/period-tables.js";
import type { RequestContext } from "../core/requests.js";
import { reconcileEntity } from "../index/copy-reconciler.js";
import { isEntityRowOf, isNewerRow, ownerOf, rowType } from "../index/copy-rows.js";
import { rememberCopies } from "../index/copy-state.js";
import type { Repository } from "./repository.js";

/** Due entries whose entities are read and deleted at once. */
export const SWEEPS_AT_ONCE = 8;

/** Options of `db.sweepExpired`. */
export interface SweepOptions {
  /** The most entities this call deletes (a positive integer; default: every due one). */
  limit?: number | undefined;
}

/** What `db.sweepExpired` did. */
export interface SweepResult {
  /** Entities deleted because they were due. */
  deleted: number;
}

/**
 * Deletes the entities of `repository` whose expiry is at or before the context's clock. It reads
 * only the due part of the expiry index (one PartitionKey range of `TablekitExpiry`, see
 * resolve-expiry.ts), never the entity's table; each due entry's entity is read and, if it is still
 * due, deleted through the repository (so indexes, summaries and the change feed see a delete, with
 * the reason `"ttl"`) on the condition of the ETag just read: an entity rewritten meanwhile with a
 * later expiry survives. An entry whose entity is gone or no longer due is stale: its entity's copies
 * are reconciled (the stale entry removed, the right one written).
 */
export async function sweepExpired<T extends object>(
  repository: Repository<T>,
  runner: RequestContext,
  options: SweepOptions = {},
): Promise<SweepResult> {
  const model = repository.model;
  const limit = checkedLimit(model, options);
  const now = runner.now();
  const table = runner.tableName(EXPIRY_TABLE);
  // Due: expiry ticks below those of the next millisecond (ticks within a millisecond are truncated on read).
  const prefix = `${model.type}~`;
  const bound = `${prefix}${formatTicks(dateToTicks(new Date(now + 1)))}`;
  const filter = `PartitionKey ge ${quoteString(prefix)} and PartitionKey lt ${quoteString(bound)}`;
  let deleted = 0;
  let continuation: StoreContinuation | undefined;
  do {
    const page = await readDuePage(runner, table, filter, continuation);
    if (page === undefined) break;
    const entries = page.items;
    // A few entries at a time, never more than the deletes still allowed (a stale entry deletes nothing).
    for (let at = 0; at < entries.length && deleted < limit; ) {
      const batch = entries.slice(at, at + Math.min(SWEEPS_AT_ONCE, limit - deleted));
      at += batch.length;
      const swept = await Promise.all(
        batch.map((entry) => sweepEntry(repository, runner, table, entry, now)),
      );
      deleted += swept.filter(Boolean).length;
    }
    continuation = page.continuation;
  } while (continuation !== undefined && deleted < limit);
  return { deleted };
}

function checkedLimit(model: EntityModel, options: SweepOptions): number {
  if (model.expiry === undefined) {
    throw new ValidationError(
      "sweep-expired",
      `${model.name} does not expire: sweepExpired needs an entity with @Entity({ expiresAt })`,
    );
  }
  const limit = options?.limit;
  if (limit === undefined) return Number.POSITIVE_INFINITY;
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new ValidationError(
      "sweep-limit",
      `sweepExpired: limit must be a positive integer, got ${String(limit)}`,
      {
        field: "limit",
      },
    );
  }
  return limit;
}

/** One page of due index entries; `undefined` when the expiry table does not exist (nothing ever expired there). */
async function readDuePage(
  runner: RequestContext,
  table: string,
  filter: string,
  continuation: StoreContinuation | undefined,
): Promise<{ items: StoredEntity[]; continuation?: StoreContinuation } | undefined> {
  try {
    return await runner.run("query", table, (s) =>
      s.queryPage(table, {
        filter,
        top: ServiceLimits.maxPageSize,
        ...(continuation ? { continuation } : {}),
      }),
    );
  } catch (error) {
    if (isTableNotFound(error)) return undefined;
    throw error;
  }
}

/** Deletes the entity of one due entry if it is still due (true), or reconciles a stale entry (false). */
async function sweepEntry<T extends object>(
  repository: Repository<T>,
  runner: RequestContext,
  table: string,
  entry: StoredEntity,
  now: number,
): Promise<boolean> {
  const model = repository.model;
  if (entry[COPY_INDEX_PROPERTY] !== EXPIRY_INDEX || rowType(entry) !== model.type) return false;
  const owner = ownerOf(model, runner, table, entry);
  if (owner === undefined) return false;
  const stored = await readEntity(runner, owner.table, owner.partitionKey, owner.rowKey);
  const entity = stored !== undefined && isEntityRowOf(model, stored) ? stored : undefined;
  if (entity !== undefined && isNewerRow(model, entity)) return false;
  if (entity !== undefined && isExpiredRow(model, entity, now)) {
    const upcast = upcasterOf(model);
    // The instance carries the ETag and copy list just read, so the delete need not read them again.
    const key = model.mapper.fromWire(upcast ? upcast(entity) : entity, runner.scope);
    rememberCopies(key, decodeCopyRefs(entity[COPY_REFS_PROPERTY]), runner.scope);
    try {
      // Through the repository: indexes (this entry included), summaries and the feed see a delete.
      return await withChangeReason("ttl", () => repository.delete(key as never, { ifMatch: entity.etag }));
    } catch (error) {
      // Rewritten since it was read: whatever it holds now, it is no longer the version that was due.
      if (!(error instanceof ConcurrencyError)) throw error;
    }
  }
  const ref: CopyRef = { index: EXPIRY_INDEX, table, partitionKey: entry.partitionKey, rowKey: entry.rowKey };
  await reconcileEntity(model, runner, owner.table, owner.partitionKey, owner.rowKey, [ref], "remote");
  return false;
}

async function readEntity(
  runner: RequestContext,
  table: string,
  partitionKey: string,
  rowKey: string,
): Promise<StoredEntity | undefined> {
  try {
    return await runner.run("get", table, (s) => s.getEntity(table, partitionKey, rowKey));
  } catch (error) {
    // A period's table dropped since (db.dropTables): its entities are gone.
    if (isTableNotFound(error)) return undefined;
    throw error;
  }
}
