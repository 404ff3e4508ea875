import { StoreError, ValidationError } from "../../errors.js";
import { quoteString } from "../../query/odata.js";
import type { QueryExecutor } from "../../query/query.js";
import {
  assembleWide,
  assertWideRowKey,
  parsePart,
  partRange,
  type WidePart,
} from "../../serialization/wide-rows.js";
import type { StoreContinuation, StoredEntity } from "../../store/table-store.js";
import { ServiceLimits } from "../../util/service-limits.js";
import { WIDE_PART_PROPERTY } from "../../wire/system-properties.js";
import type { Backend, Requests } from "./requests.js";

/**
 * A wide entity read in several requests (a range the service paged) can meet a write in between and
 * see rows of two writes; it is then read again, at most this many times in all.
 */
const MAX_READS = 10;

/** The `$select` of a wide read: the caller's, plus the part marker every part carries. */
function wideSelect(select: readonly string[] | undefined): readonly string[] | undefined {
  // Every store answers a $select with the named properties only (table-store.ts): the parts are told
  // apart by RowKey, and the assembled entity carries both keys.
  return select === undefined ? undefined : [...select, WIDE_PART_PROPERTY, "PartitionKey", "RowKey"];
}

/** Every row of one wide entity's parts: one range query (continued only if the service pages it). */
export async function readPartRows(
  runner: Requests,
  table: string,
  partitionKey: string,
  base: string,
  select?: readonly string[],
): Promise<StoredEntity[]> {
  const { ge, lt } = partRange(base);
  const filter = `PartitionKey eq ${quoteString(partitionKey)} and RowKey ge ${quoteString(ge)} and RowKey lt ${quoteString(lt)}`;
  const rows: StoredEntity[] = [];
  let continuation: StoreContinuation | undefined;
  do {
    const cursor = continuation;
    const page = await runner.run("get", table, (s) =>
      s.queryPage(table, {
        filter,
        ...(select ? { select: wideSelect(select) } : {}),
        ...(cursor ? { continuation: cursor } : {}),
      }),
    );
    rows.push(...page.items);
    continuation = page.continuation;
  } while (continuation !== undefined);
  return rows;
}

/**
 * One wide entity, assembled from all its parts (its ETag lists every part's), or `undefined` when
 * it has no first part. Rows of two writes are read again; an entity whose parts stay incomplete
 * (rows changed outside tablekit) is a `StoreError`.
 */
export async function readWide(
  runner: Requests,
  table: string,
  partitionKey: string,
  base: string,
  select?: readonly string[],
): Promise<StoredEntity | undefined> {
  for (let read = 1; ; read++) {
    const rows = (await readPartRows(runner, table, partitionKey, base, select)).filter(
      (row) => parsePart(row)?.base === base,
    );
    if (!rows.some((row) => parsePart(row)?.index === 0)) return undefined;
    const entity = assembleWide(rows);
    if (entity !== undefined) return entity;
    if (read >= MAX_READS) {
      throw new StoreError(
        `Wide entity in table ${table}, PartitionKey '${partitionKey}', RowKey '${base}': its rows are not one whole write (a part is missing or was changed outside tablekit)`,
      );
    }
  }
}

/** The rows of one entity seen so far while paging. */
interface Group {
  partitionKey: string;
  first: WidePart;
  rows: StoredEntity[];
}

/**
 * The query executor of a wide entity: pages of rows become pages of whole entities. A page never
 * ends inside an entity: when the service's page stops there, the missing parts are read at once
 * (`$top` = the parts still missing), so the continuation always points at an entity's first part.
 * `toEntity` maps an assembled entity (and skips other types' as usual).
 */
export function wideExecutor<T>(
  entity: string,
  runner: Requests & Backend,
  toEntity: (stored: StoredEntity) => T | undefined,
): QueryExecutor<T> {
  const assertSorted = (): void => {
    if (runner.backend.capabilities.sortedResults) return;
    throw new ValidationError(
      "wide-unsorted",
      "Queries over wide entities need a store that returns rows in key order (capabilities.sortedResults); get() works on any store",
    );
  };
  return {
    async fetchPage(table, filter, select, top, continuation) {
      assertSorted();
      const items: T[] = [];
      let group: Group | undefined;
      const finish = async (done: Group): Promise<void> => {
        const stored =
          assembleWide(done.rows) ??
          // Rows of two writes (the entity changed between two pages): read it whole again.
          (await readWide(runner, table, done.partitionKey, done.first.base, select));
        const item = stored === undefined ? undefined : toEntity(stored);
        if (item !== undefined) items.push(item);
      };
      let cursor = continuation;
      let want = Math.min(Math.max(top, 1), ServiceLimits.maxPageSize);
      for (;;) {
        const from = cursor;
        const page = await runner.run("query", table, (s) =>
          s.queryPage(table, {
            filter,
            ...(select ? { select: wideSelect(select) } : {}),
            top: want,
            ...(from ? { continuation: from } : {}),
          }),
        );
        for (const row of page.items) {
          const part = parsePart(row);
          if (part === undefined) continue;
          const sameEntity =
            group !== undefined &&
            group.partitionKey === row.partitionKey &&
            group.first.base === part.base &&
            part.index !== 0;
          if (sameEntity) {
            (group as Group).rows.push(row);
          } else {
            if (group !== undefined) await finish(group);
            // Parts without their first part: left over from an entity already returned whole.
            group =
              part.index === 0 ? { partitionKey: row.partitionKey, first: part, rows: [row] } : undefined;
          }
          if (group !== undefined && group.rows.length >= group.first.count) {
            await finish(group);
            group = undefined;
          }
        }
        cursor = page.continuation;
        // (Only a concurrent write that shrank the pending entity can start another one here: the page
        // may then hold one entity more than `top`, never a part of one.)
        if (cursor === undefined || group === undefined) break;
        // The service's page ended inside an entity: read exactly its missing parts.
        want = Math.max(group.first.count - group.rows.length, 1);
      }
      if (group !== undefined) await finish(group);
      return cursor ? { items, continuation: cursor } : { items };
    },
    async fetchPoint(table, partitionKey, rowKey, select) {
      assertWideRowKey(entity, rowKey);
      const stored = await readWide(runner, table, partitionKey, rowKey, select);
      return stored === undefined ? undefined : toEntity(stored);
    },
    reportPage(stats) {
      runner.emit({ type: "query-page", ...stats });
    },
  };
}

/**
 * A scan of a table in key order (verification, recounts) sees a wide entity's rows one by one: this
 * gathers them and hands on the whole entity (read again when its rows are of two writes, or dropped
 * when its first part is gone). Other rows pass through as they are.
 */
export class WideScan {
  readonly #runner: Requests;
  readonly #table: string;
  #group: Group | undefined;

  constructor(runner: Requests, table: string) {
    this.#runner = runner;
    this.#table = table;
  }

  /** The rows (whole entities) ready after `row`. */
  async add(row: StoredEntity): Promise<StoredEntity[]> {
    const part = parsePart(row);
    if (part === undefined) return [row];
    const group = this.#group;
    if (group !== undefined && group.partitionKey === row.partitionKey && group.first.base === part.base) {
      if (part.index !== 0) {
        group.rows.push(row);
        return group.rows.length >= group.first.count ? this.end() : [];
      }
    }
    const done = await this.end();
    if (part.index === 0) {
      this.#group = { partitionKey: row.partitionKey, first: part, rows: [row] };
      if (part.count <= 1) done.push(...(await this.end()));
    }
    return done;
  }

  /** The entity still gathering, whole (at the end of the scan, or when another begins). */
  async end(): Promise<StoredEntity[]> {
    const group = this.#group;
    this.#group = undefined;
    if (group === undefined) return [];
    const stored =
      assembleWide(group.rows) ??
      (await readWide(this.#runner, this.#table, group.partitionKey, group.first.base));
    return stored === undefined ? [] : [stored];
  }
}
