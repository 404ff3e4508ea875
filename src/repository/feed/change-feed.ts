import { ChangeFeedGapError, ValidationError } from "../../errors.js";
import { mapBounded } from "../../query/bounded-map.js";
import type { EntityModel } from "../../schema/entity-model.js";
import type {
  EdmType,
  PropertyTypes,
  StoredEntity,
  TableStore,
  WireEntity,
} from "../../store/table-store.js";
import { upcasterOf } from "../core/entity-rows.js";
import { readTypesOf } from "../core/read-types.js";
import type { FeedPartition } from "../pipeline/feed/feed-directory.js";
import {
  COPY_PREFIX,
  copiedRow,
  FeedProperties,
  HEAD_ROW_KEY,
  journalRangeFilter,
  seqOfJournalRowKey,
} from "../pipeline/feed/feed-rows.js";
import { withFeedRows } from "../pipeline/feed/feed-visibility.js";
import { isTableNotFound } from "../pipeline/period-table-store.js";
import type {
  Change,
  ChangeFeedConsumeOptions,
  ChangeFeedConsumer,
  ChangeFeedPage,
  ChangeFeedReadOptions,
} from "./change.js";
import { startConsumer } from "./feed-consumer.js";
import type { FeedDeps } from "./feed-deps.js";
import { decodePosition, type FeedCursors, PositionText, partitionId } from "./feed-position.js";

const DEFAULT_LIMIT = 1000;
const MAX_PAGE = 1000;
/** Partitions read at once by one `read` (each a point read and a query in flight). */
const READ_CONCURRENCY = 8;

/**
 * The change feed of one change-fed entity (`db.changes(Entity)`): pages of changes read partition
 * by partition (each in its sequence order; no order across partitions), and durable consumer groups.
 */
export class ChangeFeed<T extends object> {
  readonly #model: EntityModel<T>;
  readonly #deps: FeedDeps;
  /** The journal rows' property types (lighter payloads where the store can use them). */
  readonly #types: PropertyTypes | undefined;

  /** @internal Built by `db.changes(Entity)`. */
  constructor(model: EntityModel<T>, deps: FeedDeps) {
    this.#model = model;
    this.#deps = deps;
    this.#types = journalTypesOf(model as EntityModel);
  }

  /**
   * The changes after `from` (omitted: from the oldest retained), at most `limit`, and the position
   * after them. A position past retention in a partition is a `ChangeFeedGapError`.
   * @example
   * const { changes, next } = await db.changes(Order).read({ from: saved, limit: 500 });
   */
  async read(options: ChangeFeedReadOptions = {}): Promise<ChangeFeedPage<T>> {
    const limit = options.limit ?? DEFAULT_LIMIT;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE) {
      throw new ValidationError(
        "feed-limit",
        `limit must be a whole number from 1 to ${MAX_PAGE}, got ${String(limit)}`,
      );
    }
    const cursors: FeedCursors = options.from === undefined ? new Map() : decodePosition(options.from);
    return this.#readPartitions(await this.#partitions(), cursors, limit);
  }

  /**
   * Delivers every change to `handler` in batches, at least once, for a consumer group whose
   * checkpoint and lease live in the account (see docs/change-feed.md).
   * @example
   * const consumer = db.changes(Order).consume({ group: "billing", handler: async (changes) => { … } });
   */
  consume(options: ChangeFeedConsumeOptions<T>): ChangeFeedConsumer {
    return startConsumer(this.#model.table, options, this.#deps, {
      partitions: () => this.#partitions(),
      read: (partitions, from, limit) =>
        this.#readPartitions(partitions, from === undefined ? new Map() : decodePosition(from), limit),
    });
  }

  /** The feed's partitions, from the directory. */
  #partitions(): Promise<FeedPartition[]> {
    const { runner, directory } = this.#deps;
    return withFeedRows(() =>
      runner.run("listEntities", directory.table, (store) => directory.list(store, this.#model.table)),
    );
  }

  /**
   * Up to `limit` changes of `partitions` after `cursors` (which it moves on), and the position after
   * them. Partitions are read in parallel (at most `READ_CONCURRENCY` at a time), each asked for its
   * share of what is still wanted; the partitions that had more are asked again until the page is full.
   */
  async #readPartitions(
    partitions: FeedPartition[],
    cursors: FeedCursors,
    limit: number,
  ): Promise<ChangeFeedPage<T>> {
    const changes: Change<T>[] = [];
    const position = new PositionText(cursors);
    let open = partitions;
    while (open.length > 0 && changes.length < limit) {
      const share = Math.ceil((limit - changes.length) / open.length);
      const read = await mapBounded(open, READ_CONCURRENCY, (partition) =>
        this.#partitionRows(partition, cursors.get(partitionId(partition)), share),
      );
      const more: FeedPartition[] = [];
      for (const [index, partition] of open.entries()) {
        const rows = read[index] as StoredEntity[];
        const take = Math.min(share, rows.length, limit - changes.length);
        const id = partitionId(partition);
        for (const row of rows.slice(0, take)) {
          position.set(id, seqOfJournalRowKey(row.rowKey));
          changes.push(await this.#change(partition.table, partition.partitionKey, row, position.text()));
        }
        if (rows.length > take) more.push(partition);
      }
      open = more;
    }
    return { changes, next: position.text() };
  }

  /**
   * The journal rows of a partition after `after` (at least `wanted`, all there are when fewer), in
   * order; none when its table was dropped. A position past its retention is a `ChangeFeedGapError`.
   */
  async #partitionRows(
    partition: FeedPartition,
    after: number | undefined,
    wanted: number,
  ): Promise<StoredEntity[]> {
    let rows: StoredEntity[];
    try {
      rows = await this.#journalRows(partition, after ?? 0, wanted);
    } catch (error) {
      // A period's table dropped by db.dropTables takes its changes with it.
      if (isTableNotFound(error)) return [];
      throw error;
    }
    const head = rows[0];
    if (head?.rowKey !== HEAD_ROW_KEY) return rows;
    const trimmed = numberOf(head[FeedProperties.trimmed]);
    // Changes the position has not seen were trimmed: a silent skip would lose them.
    if (after !== undefined && after < trimmed) {
      const { table, partitionKey } = partition;
      throw new ChangeFeedGapError({ table, partitionKey, after, trimmed });
    }
    return rows.slice(1);
  }

  /**
   * The partition's head and at least `wanted` of its journal rows after `after` (all there are when
   * fewer), in RowKey order: the head first. The head is a point read beside the journal's key-range
   * query (a filter naming both would make the service scan the partition). A backend without sorted
   * results (Cosmos DB) returns rows in any order, so there every row after `after` is read and sorted.
   */
  async #journalRows(partition: FeedPartition, after: number, wanted: number): Promise<StoredEntity[]> {
    const { table, partitionKey } = partition;
    const { runner } = this.#deps;
    const sorted = runner.backend.capabilities.sortedResults;
    const head = withFeedRows(() =>
      runner.run("getEntity", table, (store) => store.getEntity(table, partitionKey, HEAD_ROW_KEY)),
    );
    // Awaited below; a failing query must not leave its rejection unhandled.
    head.catch(() => undefined);
    const rows: StoredEntity[] = [];
    let continuation: Awaited<ReturnType<TableStore["queryPage"]>>["continuation"];
    do {
      const page = await withFeedRows(() =>
        runner.run("listEntities", table, (store) =>
          store.queryPage(table, {
            filter: journalRangeFilter(partitionKey, after),
            ...(this.#types === undefined ? {} : { types: this.#types }),
            ...(sorted ? { top: Math.min(MAX_PAGE, wanted - rows.length + 1) } : {}),
            continuation,
          }),
        ),
      );
      rows.push(...page.items);
      continuation = page.continuation;
    } while (continuation !== undefined && (!sorted || rows.length < wanted));
    if (!sorted) rows.sort((a, b) => (a.rowKey < b.rowKey ? -1 : a.rowKey > b.rowKey ? 1 : 0));
    const stored = await head;
    return stored === undefined ? rows : [stored, ...rows];
  }

  async #change(
    table: string,
    partitionKey: string,
    row: StoredEntity,
    position: string,
  ): Promise<Change<T>> {
    const kind = String(row[FeedProperties.kind]);
    const change: Change<T> = {
      kind: kind === "delete" ? "delete" : kind === "merge" ? "merge" : "upsert",
      key: { partitionKey, rowKey: String(row[FeedProperties.rowKey]) },
      version: numberOf(row[FeedProperties.version]),
      at: dateOf(row[FeedProperties.at]),
      position,
    };
    if (row[FeedProperties.reason] === "ttl") change.reason = "ttl";
    const carries = row[FeedProperties.carries];
    if (carries !== "entity" && carries !== "changes") return change;
    const opened = await this.#deps.open(table, copiedRow(partitionKey, row));
    const upcast = upcasterOf(this.#model as EntityModel);
    const stored = { ...opened, etag: "" } as StoredEntity;
    const entity = this.#model.mapper.fromWire(upcast ? upcast(stored) : stored);
    if (carries === "entity") change.entity = entity;
    else change.changes = writtenFields(this.#model, entity, opened);
    return change;
  }
}

/** The fields a merge wrote: those whose stored properties are in the written row. */
function writtenFields<T extends object>(model: EntityModel<T>, entity: T, written: WireEntity): Partial<T> {
  const changes: Partial<T> = {};
  for (const column of model.columns) {
    if (!column.properties.some((property) => written[property] !== undefined)) continue;
    const field = column.field as keyof T;
    changes[field] = entity[field];
  }
  return changes;
}

function numberOf(value: unknown): number {
  return typeof value === "number" ? value : typeof value === "bigint" ? Number(value) : Number(value ?? 0);
}

function dateOf(value: unknown): Date {
  return value instanceof Date ? value : new Date(String(value));
}

/** The types of a journal row's properties: its entry's and, under their copy names, the model's columns. */
function journalTypesOf(model: EntityModel): PropertyTypes | undefined {
  const columns = readTypesOf(model);
  if (columns === undefined) return undefined;
  const types: Record<string, EdmType> = {
    [FeedProperties.version]: "Int32",
    [FeedProperties.at]: "DateTime",
  };
  for (const [property, type] of Object.entries(columns)) types[`${COPY_PREFIX}${property}`] = type;
  return types;
}
