import { ValidationError } from "../../errors.js";
import type { QueryExecutor } from "../../query/query.js";
import type { EntityModel } from "../../schema/entity-model.js";
import type { PropertyTypes, StoredEntity } from "../../store/table-store.js";
import { COPY_INDEX_PROPERTY, type CopyRef } from "../core/copy-ref.js";
import { isTableNotFound } from "../core/period-tables.js";
import { readTypesOf } from "../core/read-types.js";
import type { Requests, TableNaming } from "../core/requests.js";
import { readWide } from "../core/wide-reads.js";
import { listShardsFilter, parseMember, readList, readListOrEmpty } from "./list-index.js";

/** The entities listed under one value of a list index, and how they are read. */
export interface ListedValue<T extends object> {
  /** `Entity.indexes.name`, for messages. */
  readonly name: string;
  readonly model: EntityModel<T>;
  readonly runner: Requests & TableNaming;
  /** The value's list in each partition it is listed in (every hash bucket's when the value pins none). */
  readonly refs: readonly CopyRef[];
  /** Whether the value is listed in several partitions: their members are merged in RowKey order. */
  readonly fanOut: boolean;
  /** Whether the index is kept in a table per period. */
  readonly periodic: boolean;
  /** The repository's own row reader (upcast, ETag and copies tracked). */
  readonly readRow: (stored: StoredEntity) => T | undefined;
  /** Whether a listed entity is one of the value's (a bucket lists every value of its hashed field). */
  readonly holdsValue: (entity: T) => boolean;
}

/** One listed member: its entity's keys, and its period table when the entity is kept in one. */
type Member = ReturnType<typeof parseMember>;

/** Listed members fetched at once. */
const MEMBER_READS = 8;

/**
 * The executor of a list index's query: each page reads the value's lists, then fetches the page's
 * listed entities in parallel (at most 8 at a time), in key order; the continuation is the offset
 * into the members. A list index has no point query, and takes no filter of its own.
 */
export function listIndexExecutor<T extends object>(listed: ListedValue<T>): QueryExecutor<T> {
  const ref = listed.refs[0] as CopyRef;
  const expected = listShardsFilter(ref);
  // The entities' table: fixed, or for a table per period the one each member names.
  const entityTable = listed.runner.tableName(listed.model.table);
  const types = readTypesOf(listed.model);
  return {
    fetchPoint: async () => {
      throw new ValidationError("list-index-get", "a list index has no point query");
    },
    fetchPage: async (_table, filter, select, top, continuation) => {
      assertListFilter(listed.name, filter, expected);
      const members = await listedMembers(listed);
      const offset = continuation?.nextRowKey === undefined ? 0 : Number(continuation.nextRowKey);
      const slice = members.slice(offset, offset + top);
      const found = await mapBounded(slice, MEMBER_READS, (member) =>
        readMember(listed, member, entityTable, select, types),
      );
      const items = listedEntities(listed, found);
      const end = offset + slice.length;
      return end < members.length
        ? { items, continuation: { nextPartitionKey: ref.partitionKey, nextRowKey: String(end) } }
        : { items };
    },
  };
}

/** The query's own filter is the range over the list's shards: nothing else applies to a list. */
function assertListFilter(name: string, filter: string, expected: string): void {
  if (filter !== expected) {
    throw new ValidationError(
      "list-index-filter",
      `${name}: a list index query returns the listed entities; where/filter/between are not supported on it`,
    );
  }
}

/** Every member of the value's lists, in key order (RowKey first when merged across buckets), then by table. */
async function listedMembers<T extends object>(listed: ListedValue<T>): Promise<Member[]> {
  const { runner, periodic, fanOut } = listed;
  const lists = await Promise.all(
    // A period nobody has written to has no table yet: it lists nothing.
    listed.refs.map((one) => (periodic ? readListOrEmpty(runner, one) : readList(runner, one))),
  );
  const members = lists.flatMap((list) => list.shards.flatMap((shard) => shard.members)).map(parseMember);
  members.sort(
    (a, b) =>
      (fanOut
        ? compareKeys(a.rowKey, b.rowKey) || compareKeys(a.partitionKey, b.partitionKey)
        : compareKeys(a.partitionKey, b.partitionKey) || compareKeys(a.rowKey, b.rowKey)) ||
      compareKeys(a.table ?? "", b.table ?? ""),
  );
  return members;
}

/** The stored row of a listed entity; `undefined` when it is gone. */
async function readMember<T extends object>(
  listed: ListedValue<T>,
  member: Member,
  entityTable: string,
  select: readonly string[] | undefined,
  types: PropertyTypes | undefined,
): Promise<StoredEntity | undefined> {
  const { runner } = listed;
  const table = member.table === undefined ? entityTable : runner.tableName(member.table);
  try {
    return listed.model.wide
      ? await readWide(runner, table, member.partitionKey, member.rowKey, select)
      : await runner.run("get", table, (s) =>
          s.getEntity(table, member.partitionKey, member.rowKey, select, types),
        );
  } catch (error) {
    // A period's table dropped since (db.dropTables): its entities are gone.
    if (member.table !== undefined && isTableNotFound(error)) return undefined;
    throw error;
  }
}

/** The entities of the rows found (not copies), those the value holds. */
function listedEntities<T extends object>(
  listed: ListedValue<T>,
  found: readonly (StoredEntity | undefined)[],
): T[] {
  const items: T[] = [];
  for (const stored of found) {
    if (stored && stored[COPY_INDEX_PROPERTY] === undefined) {
      const entity = listed.readRow(stored);
      if (entity && listed.holdsValue(entity)) items.push(entity);
    }
  }
  return items;
}

function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Maps with at most `limit` calls in flight, keeping the input order. */
async function mapBounded<I, O>(
  items: readonly I[],
  limit: number,
  map: (item: I) => Promise<O>,
): Promise<O[]> {
  const results = new Array<O>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const at = next++;
      results[at] = await map(items[at] as I);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
