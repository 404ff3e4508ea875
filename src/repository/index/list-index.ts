import { quoteString } from "../../query/odata.js";
import type { EntityModel } from "../../schema/entity-model.js";
import type { StoredEntity, TransactionAction, WireEntity } from "../../store/table-store.js";
import { COPY_INDEX_PROPERTY, type CopyRef } from "../core/copy-ref.js";
import { isTableNotFound } from "../core/period-tables.js";
import type { Requests, TableNaming } from "../core/requests.js";

/** On an index entity: the value's base RowKey (shards add `~001`, `~002`…). */
export const LIST_BASE_PROPERTY = "_tkList";

/**
 * Members are split over properties of at most this many characters (the service's 64 KiB string
 * limit, with room for JSON), and over shard entities of at most this many such properties (the
 * 1 MiB entity limit).
 */
const CHUNK_CHARS = 30_000;
const CHUNKS_PER_SHARD = 14;

/** One stored shard of an index entity. */
export interface ListShard {
  rowKey: string;
  etag: string | undefined;
  members: string[];
}

/** Every shard of the index entity of one value. */
export interface ListState {
  ref: CopyRef;
  shards: ListShard[];
}

/**
 * How an entity is named in a list: its keys, and for an entity kept in a table per period its
 * period's table (the logical name, without the context's prefix), which its keys alone do not say.
 */
export function memberOf(partitionKey: string, rowKey: string, periodTable?: string): string {
  return JSON.stringify(
    periodTable === undefined ? [partitionKey, rowKey] : [partitionKey, rowKey, periodTable],
  );
}

/** The member naming an entity of `model` written to the physical `table`. */
export function entityMember(
  model: EntityModel<object>,
  runner: TableNaming,
  table: string,
  partitionKey: string,
  rowKey: string,
): string {
  const periodTable =
    model.tableTemplate === undefined ? undefined : table.slice(runner.tableName("").length);
  return memberOf(partitionKey, rowKey, periodTable);
}

/** The entity a member names: its keys, and its period's table (logical name) when it has one. */
export function parseMember(member: string): { partitionKey: string; rowKey: string; table?: string } {
  const [partitionKey, rowKey, table] = JSON.parse(member) as [string, string, string | undefined];
  return table === undefined ? { partitionKey, rowKey } : { partitionKey, rowKey, table };
}

/** The filter selecting every shard row of a value (shards are filtered exactly by their base afterwards). */
export function listShardsFilter(ref: CopyRef): string {
  return `PartitionKey eq ${quoteString(ref.partitionKey)} and RowKey ge ${quoteString(ref.rowKey)} and RowKey lt ${quoteString(`${ref.rowKey}~\uffff`)}`;
}

/** The shards of one list among rows read by `listShardsFilter`. */
export function shardsOf(ref: CopyRef, rows: readonly StoredEntity[]): ListShard[] {
  return rows
    .filter((row) => row[LIST_BASE_PROPERTY] === ref.rowKey && row[COPY_INDEX_PROPERTY] === ref.index)
    .map((row) => ({ rowKey: row.rowKey, etag: row.etag, members: decodeMembers(row) }));
}

/** Reads the current shards of one value's index entity. */
export async function readList(runner: Requests, ref: CopyRef): Promise<ListState> {
  const rows: StoredEntity[] = [];
  let continuation: { nextPartitionKey: string; nextRowKey?: string } | undefined;
  do {
    const page = await runner.run("readList", ref.table, (s) =>
      s.queryPage(ref.table, { filter: listShardsFilter(ref), ...(continuation ? { continuation } : {}) }),
    );
    rows.push(...page.items);
    continuation = page.continuation;
  } while (continuation);
  return { ref, shards: shardsOf(ref, rows) };
}

/**
 * `readList`, where the index entity's table may not exist yet (a period's table before its first
 * write, which creates it) or no longer (a dropped period's): such a table holds no shard.
 */
export async function readListOrEmpty(runner: Requests, ref: CopyRef): Promise<ListState> {
  try {
    return await readList(runner, ref);
  } catch (error) {
    if (isTableNotFound(error)) return { ref, shards: [] };
    throw error;
  }
}

/**
 * The writes that add and/or remove one member, each conditional on the shard's ETag (so two
 * writers changing the same list conflict instead of losing a member). Empty when nothing changes.
 */
export function planListChange(
  state: ListState,
  type: string,
  change: { add?: string; remove?: string } | ReadonlyArray<{ add?: string; remove?: string }>,
): TransactionAction[] {
  const shards = state.shards.map((shard) => ({ ...shard, members: [...shard.members], changed: false }));
  // Several changes of one index entity (a transaction's entities) apply in order to the same shards.
  for (const one of "length" in change ? change : [change]) applyChange(state, shards, one);
  const actions: TransactionAction[] = [];
  for (const shard of shards) {
    if (!shard.changed) continue;
    if (shard.members.length === 0) {
      if (shard.etag)
        actions.push({
          kind: "delete",
          partitionKey: state.ref.partitionKey,
          rowKey: shard.rowKey,
          ifMatch: shard.etag,
        });
      continue;
    }
    const entity = shardRow(state.ref, shard.rowKey, type, shard.members);
    actions.push(
      shard.etag
        ? { kind: "update", entity, mode: "replace", ifMatch: shard.etag }
        : { kind: "insert", entity },
    );
  }
  return actions;
}

type PlannedShard = ListShard & { changed: boolean };

function applyChange(
  state: ListState,
  shards: PlannedShard[],
  change: { add?: string; remove?: string },
): void {
  if (change.remove !== undefined) {
    for (const shard of shards) {
      const at = shard.members.indexOf(change.remove);
      if (at >= 0) {
        shard.members.splice(at, 1);
        shard.changed = true;
      }
    }
  }
  if (change.add !== undefined && !shards.some((shard) => shard.members.includes(change.add as string))) {
    let target = shards.find((shard) => fits(shard.members, change.add as string));
    if (!target) {
      const used = new Set(shards.map((shard) => shard.rowKey));
      let n = 0;
      let rowKey = state.ref.rowKey;
      while (used.has(rowKey)) rowKey = `${state.ref.rowKey}~${String(++n).padStart(3, "0")}`;
      target = { rowKey, etag: undefined, members: [], changed: false };
      shards.push(target);
    }
    target.members.push(change.add);
    target.changed = true;
  }
}

function shardRow(ref: CopyRef, rowKey: string, type: string, members: readonly string[]): WireEntity {
  const row: WireEntity = {
    partitionKey: ref.partitionKey,
    rowKey,
    [COPY_INDEX_PROPERTY]: ref.index,
    [LIST_BASE_PROPERTY]: ref.rowKey,
    EntityType: type,
  };
  let chunk: string[] = [];
  let length = 2;
  let index = 0;
  for (const member of members) {
    if (length + member.length + 1 > CHUNK_CHARS && chunk.length > 0) {
      row[`m${index++}`] = `[${chunk.join(",")}]`;
      chunk = [];
      length = 2;
    }
    chunk.push(member);
    length += member.length + 1;
  }
  if (chunk.length > 0) row[`m${index}`] = `[${chunk.join(",")}]`;
  return row;
}

function decodeMembers(row: StoredEntity): string[] {
  const members: string[] = [];
  for (let i = 0; typeof row[`m${i}`] === "string"; i++) {
    for (const pair of JSON.parse(row[`m${i}`] as string) as unknown[]) members.push(JSON.stringify(pair));
  }
  return members;
}

/** Whether a shard can take one more member within its property and entity budgets. */
function fits(members: readonly string[], member: string): boolean {
  let chunks = 1;
  let length = 2;
  for (const m of [...members, member]) {
    if (length + m.length + 1 > CHUNK_CHARS) {
      chunks++;
      length = 2;
    }
    length += m.length + 1;
  }
  return chunks <= CHUNKS_PER_SHARD;
}
