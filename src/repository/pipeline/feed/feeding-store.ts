import {
  ConcurrencyError,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  TransactionError,
  ValidationError,
} from "../../../errors.js";
import { DelegatingStore } from "../../../store/delegating-store.js";
import type {
  PropertyTypes,
  StoredEntity,
  StorePage,
  StoreQuery,
  TableStore,
  TransactionAction,
  WireEntity,
  WriteMode,
  WriteResult,
} from "../../../store/table-store.js";
import type { StoreLimits } from "../../../util/store-limits.js";
import { currentRequestAttempt, type RequestAttempt } from "../request-attempt.js";
import type { FeedDirectory } from "./feed-directory.js";
import { planFeedTransaction } from "./feed-plan.js";
import { committedResults, FeedResends } from "./feed-resend.js";
import { isFeedRowKey } from "./feed-rows.js";
import { type FeedState, readFeedState } from "./feed-state.js";
import type { FeedTable, FeedTables } from "./feed-tables.js";
import { feedRowsVisible } from "./feed-visibility.js";

/** Rounds a write makes when other writers of its partition keep winning the head (each lost round means one of theirs committed). */
const MAX_ROUNDS = 64;

/** What the feeding store reads besides the store: the change-fed tables, the directory, the clock and the change's reason. */
export interface FeedingOptions {
  tables: FeedTables;
  directory: FeedDirectory;
  limits: StoreLimits;
  now: () => number;
  reason: () => string | undefined;
}

/**
 * The change feed as a store in the context's stack, below encryption (it copies sealed values as
 * they are): every write of a change-fed entity's row (single writes, transactions, bulk batches,
 * `db.eventually`, repair replays, expiry sweeps: they all reach the store here) becomes one entity
 * group transaction with its change rows (feed-plan.ts), after one query for the partition's head and
 * the rows' versions. A lost race on the head is planned again; a failure of the caller's own
 * condition is the error the caller gets without the feed. The feed's rows are hidden from every read
 * and refused to every write outside `withFeedRows`. A resend of a commit whose answer was lost
 * finds its write id in the journal and answers from the stored rows instead of committing twice.
 */
export class FeedingStore extends DelegatingStore {
  readonly #options: FeedingOptions;
  readonly #resends = new FeedResends();

  constructor(inner: TableStore, options: FeedingOptions) {
    super(inner);
    this.#options = options;
  }

  override getEntity(
    table: string,
    partitionKey: string,
    rowKey: string,
    select?: readonly string[],
    types?: PropertyTypes,
  ): Promise<StoredEntity | undefined> {
    if (isFeedRowKey(rowKey) && this.#hides(table)) return Promise.resolve(undefined);
    return this.inner.getEntity(table, partitionKey, rowKey, select, types);
  }

  override async queryPage(table: string, query: StoreQuery): Promise<StorePage> {
    if (!this.#hides(table)) return this.inner.queryPage(table, query);
    const select = query.select;
    const addsRowKey = select !== undefined && select.length > 0 && !select.includes("RowKey");
    const page = await this.inner.queryPage(
      table,
      addsRowKey ? { ...query, select: [...select, "RowKey"] } : query,
    );
    if (!page.items.some((row) => isFeedRowKey(row.rowKey)) && !addsRowKey) return page;
    const items = page.items.filter((row) => !isFeedRowKey(row.rowKey));
    if (addsRowKey) for (const row of items) delete (row as Partial<StoredEntity>).rowKey;
    return page.continuation === undefined ? { items } : { items, continuation: page.continuation };
  }

  // A write to a table where no change-fed class lives goes on as it is, before anything is
  // allocated for it: that is every write of a context without a change feed.
  override insert(table: string, entity: WireEntity): Promise<WriteResult> {
    if (this.#options.tables.lookup(table) === undefined) return this.inner.insert(table, entity);
    return this.#single(table, { kind: "insert", entity }, () => this.inner.insert(table, entity));
  }

  override upsert(table: string, entity: WireEntity, mode: WriteMode): Promise<WriteResult> {
    if (this.#options.tables.lookup(table) === undefined) return this.inner.upsert(table, entity, mode);
    return this.#single(table, { kind: "upsert", entity, mode }, () =>
      this.inner.upsert(table, entity, mode),
    );
  }

  override update(table: string, entity: WireEntity, mode: WriteMode, ifMatch: string): Promise<WriteResult> {
    if (this.#options.tables.lookup(table) === undefined)
      return this.inner.update(table, entity, mode, ifMatch);
    return this.#single(table, { kind: "update", entity, mode, ifMatch }, () =>
      this.inner.update(table, entity, mode, ifMatch),
    );
  }

  override delete(table: string, partitionKey: string, rowKey: string, ifMatch: string): Promise<boolean> {
    if (this.#options.tables.lookup(table) === undefined)
      return this.inner.delete(table, partitionKey, rowKey, ifMatch);
    return this.#single(table, { kind: "delete", partitionKey, rowKey, ifMatch }, () =>
      this.inner.delete(table, partitionKey, rowKey, ifMatch),
    );
  }

  override submitTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]> {
    if (this.#options.tables.lookup(table) === undefined)
      return this.inner.submitTransaction(table, partitionKey, actions);
    return this.#fedTransaction(table, partitionKey, actions);
  }

  /** A transaction on a table where change-fed classes live. */
  async #fedTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]> {
    const feed = this.#feedOf(table, actions);
    if (feed === undefined || !actions.some((action) => this.#mayBeFed(feed, action)))
      return this.inner.submitTransaction(table, partitionKey, actions);
    const rowKeys = actions.map(rowKeyOf);
    const attempt = currentRequestAttempt();
    const earlier = await this.#resends.committedEarlier(this.inner, table, partitionKey, attempt);
    if (earlier !== undefined) {
      const state = await readFeedState(this.inner, table, partitionKey, rowKeys);
      return committedResults(table, partitionKey, actions, earlier, state);
    }
    await this.#options.directory.register(this.inner, feed.logical, { table, partitionKey });
    for (let round = 0; ; round++) {
      const state = await readFeedState(this.inner, table, partitionKey, rowKeys);
      const fed = actions.map((action) => this.#isFed(feed, action, state));
      if (!fed.includes(true)) return this.inner.submitTransaction(table, partitionKey, actions);
      const plan = this.#plan(table, partitionKey, feed, actions, fed, state, attempt);
      try {
        const results = await this.inner.submitTransaction(table, partitionKey, plan.actions);
        return results.slice(plan.first, plan.first + plan.count);
      } catch (error) {
        if (!(error instanceof TransactionError)) throw error;
        const own = error.index - plan.first;
        // The caller's own operation failed: the same error as without the feed, at its own index.
        if (own >= 0 && own < plan.count) throw withIndex(error, own);
        this.#assertRoundsLeft(round, table, partitionKey);
      }
    }
  }

  /** One write of one row: sent as it is unless it writes a change-fed entity's row. */
  async #single<R extends WriteResult | boolean>(
    table: string,
    action: TransactionAction,
    plain: () => Promise<R>,
  ): Promise<R> {
    const feed = this.#feedOf(table, [action]);
    // A copy or summary row in the partition records no change: sent as it is, with no read.
    if (feed === undefined || !this.#mayBeFed(feed, action)) return plain();
    const partitionKey = action.kind === "delete" ? action.partitionKey : action.entity.partitionKey;
    const rowKey = rowKeyOf(action);
    const keys = { table, partitionKey, rowKey };
    const attempt = currentRequestAttempt();
    const earlier = await this.#resends.committedEarlier(this.inner, table, partitionKey, attempt);
    if (earlier !== undefined) {
      if (action.kind === "delete") return true as R;
      const state = await readFeedState(this.inner, table, partitionKey, [rowKey]);
      return committedResults(table, partitionKey, [action], earlier, state)[0] as R;
    }
    await this.#options.directory.register(this.inner, feed.logical, { table, partitionKey });
    for (let round = 0; ; round++) {
      const state = await readFeedState(this.inner, table, partitionKey, [rowKey]);
      if (!this.#isFed(feed, action, state)) return plain();
      const stored = state.rows.get(rowKey);
      // The caller's condition, checked on what was read (the head's ETag keeps it true until the commit).
      if (action.kind === "delete" && stored === undefined) return false as R;
      if (action.kind === "insert" && stored !== undefined) throw new EntityAlreadyExistsError(keys);
      if (action.kind === "update" && stored === undefined) throw new EntityNotFoundError(keys);
      if ((action.kind === "update" || action.kind === "delete") && action.ifMatch !== "*") {
        if (stored?.etag !== action.ifMatch) throw new ConcurrencyError(keys);
      }
      const plan = this.#plan(table, partitionKey, feed, [action], [true], state, attempt);
      try {
        const results = await this.inner.submitTransaction(table, partitionKey, plan.actions);
        return (action.kind === "delete" ? true : results[plan.first]) as R;
      } catch (error) {
        if (!(error instanceof TransactionError)) throw error;
        // A writer that does not go through a feed changed the row since it was read.
        if (error.index === plan.first && !(action.kind === "delete" && error.statusCode === 404)) {
          throw asSingleError(error, keys);
        }
        this.#assertRoundsLeft(round, table, partitionKey);
      }
    }
  }

  #plan(
    table: string,
    partitionKey: string,
    feed: FeedTable,
    actions: readonly TransactionAction[],
    fed: readonly boolean[],
    state: FeedState,
    attempt: RequestAttempt | undefined,
  ) {
    const { tables, limits, now, reason } = this.#options;
    const plan = planFeedTransaction({
      table,
      partitionKey,
      actions,
      fed,
      state,
      at: new Date(now()),
      reason: reason(),
      writeId: this.#resends.writeIdOf(attempt),
      copies: tables.copies(feed),
      limits,
    });
    this.#resends.remember(attempt, plan.journalRowKey, plan.versions);
    return plan;
  }

  /** The change-fed table of a write; `undefined` when it writes no change-fed table (or runs inside `withFeedRows`). */
  #feedOf(table: string, actions: readonly TransactionAction[]): FeedTable | undefined {
    if (feedRowsVisible()) return undefined;
    const feed = this.#options.tables.lookup(table);
    if (feed === undefined) return undefined;
    for (const action of actions) {
      if (isFeedRowKey(rowKeyOf(action))) {
        throw new ValidationError(
          "feed-row",
          `RowKey '${rowKeyOf(action)}' in table ${table} starts with '~tkfeed~', which the change feed keeps for its own rows`,
        );
      }
    }
    return feed;
  }

  /** Whether an action may write a change-fed entity's row before anything is read (a delete is judged by the stored row). */
  #mayBeFed(feed: FeedTable, action: TransactionAction): boolean {
    return action.kind === "delete" || this.#options.tables.isFedRow(feed, action.entity);
  }

  /** A write or delete of a change-fed entity's row (a delete is judged by the stored row; an absent one records nothing). */
  #isFed(feed: FeedTable, action: TransactionAction, state: FeedState): boolean {
    if (action.kind !== "delete") return this.#options.tables.isFedRow(feed, action.entity);
    const stored = state.rows.get(action.rowKey);
    return stored !== undefined && this.#options.tables.isFedRow(feed, stored);
  }

  #hides(table: string): boolean {
    return !feedRowsVisible() && this.#options.tables.lookup(table) !== undefined;
  }

  #assertRoundsLeft(round: number, table: string, partitionKey: string): void {
    if (round + 1 < MAX_ROUNDS) return;
    throw new ConcurrencyError(
      { table, partitionKey, rowKey: "~tkfeed~head" },
      { cause: new Error(`the change feed's head lost ${MAX_ROUNDS} races in a row`) },
    );
  }
}

function rowKeyOf(action: TransactionAction): string {
  return action.kind === "delete" ? action.rowKey : action.entity.rowKey;
}

function withIndex(error: TransactionError, index: number): TransactionError {
  if (index === error.index) return error;
  return new TransactionError(
    {
      index,
      table: error.table,
      partitionKey: error.partitionKey,
      rowKey: error.rowKey,
      statusCode: error.statusCode,
      serviceCode: error.serviceCode,
    },
    { cause: error.cause ?? error, outcomeUnknown: error.outcomeUnknown },
  );
}

/** A single write's failure inside the feed's transaction, as the single request would have failed. */
function asSingleError(
  error: TransactionError,
  keys: { table: string; partitionKey: string; rowKey: string },
): Error {
  switch (error.statusCode) {
    case 409:
      return new EntityAlreadyExistsError(keys, { cause: error });
    case 412:
      return new ConcurrencyError(keys, { cause: error });
    case 404:
      return new EntityNotFoundError(keys, { cause: error });
    default:
      return error;
  }
}
