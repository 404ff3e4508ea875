import { ValidationError } from "../../errors.js";
import type { EntityModel, SummaryModel } from "../../schema/entity-model.js";
import type { Requests, Scoped } from "../core/requests.js";
import { SummaryCache, summaryCacheKey } from "./summary-cache.js";
import { readSummaryState, type SummaryState, summaryMarker } from "./summary-row.js";

/**
 * Refuses, before any request, an entity whose RowKey is a summary row's (possible only where the
 * RowKey template has no literal prefix).
 */
export function assertNotSummaryKey(model: EntityModel<object>, rowKey: string): void {
  for (const summary of model.summaries.values()) {
    const remote = summary.remote;
    // Contribution rows of a remote summary in the entity's own table take `<rowKey>~…` RowKeys.
    if (
      remote &&
      remote.table.toLowerCase() === model.table.toLowerCase() &&
      rowKey.startsWith(`${remote.rowKey}~`)
    ) {
      throw new ValidationError(
        "summary-row-key",
        `${model.name}: RowKey '${rowKey}' starts with '${remote.rowKey}~', the RowKeys of summary ${summary.name}'s rows in this table; an entity cannot have it`,
        { field: "RowKey" },
      );
    }
    if (rowKey === summary.rowKey) {
      throw new ValidationError(
        "summary-row-key",
        `${model.name}: RowKey '${rowKey}' is the row of summary ${summary.name}; an entity cannot have it`,
        { field: "RowKey" },
      );
    }
  }
}

/**
 * The summary rows of an entity class in one physical table, as every write that commits them uses
 * them (single writes, transactions and bulk batches, through `SummaryStage` and `SummaryCompanion`):
 * their state, cached per scope and read when not cached or after a lost race; the room they take in
 * a transaction; the RowKeys an entity cannot have. The delta, the conditions and the settling of a
 * lost answer by the summary row's write log are `SummaryCompanion`'s.
 */
export class SummaryCommitter {
  readonly #model: EntityModel<object>;
  readonly #table: string;
  readonly #runner: Requests;
  readonly #summaries: readonly SummaryModel[];
  /** The summaries' RowKeys, in the same order (read by every write's stage). */
  readonly rowKeys: readonly string[];
  readonly #cache: SummaryCache;

  constructor(model: EntityModel<object>, table: string, runner: Requests & Scoped) {
    this.#model = model;
    this.#table = table;
    this.#runner = runner;
    this.#summaries = [...model.summaries.values()];
    this.rowKeys = this.#summaries.map((summary) => summary.rowKey);
    this.#cache = SummaryCache.of(runner.scope);
  }

  /** The summaries' rows per transaction: what is left of the service's 100 operations is for entities. */
  get reserved(): number {
    return this.#summaries.length;
  }

  /** Refuses an entity whose RowKey is a summary row's (see `assertNotSummaryKey`). */
  assertNotSummaryKey(rowKey: string): void {
    assertNotSummaryKey(this.#model, rowKey);
  }

  /** Reads the current state of a summary row (and caches it); `undefined` values mean zeros. */
  async readState(partitionKey: string, summary: SummaryModel): Promise<SummaryState> {
    return this.#state(partitionKey, summary, true);
  }

  /** The summaries kept, in the order their rows join a transaction. */
  get summaries(): readonly SummaryModel[] {
    return this.#summaries;
  }

  /** A summary row's state: the cached one unless `fresh` (or none is cached), else read. */
  state(partitionKey: string, summary: SummaryModel, fresh: boolean): Promise<SummaryState> {
    return this.#state(partitionKey, summary, fresh);
  }

  /** Per summary, in order, whether its row's state in this partition is cached (a first round reads none for it; `SummaryStagePlan.cached`). */
  cachedRows(partitionKey: string): boolean[] {
    return this.#summaries.map(
      (summary) => this.#cache.get(this.#cacheKey(partitionKey, summary)) !== undefined,
    );
  }

  /** Remembers the state a committed write left (its ETag known), or forgets it (the answer was lost). */
  remember(
    partitionKey: string,
    summary: SummaryModel,
    etag: string | undefined,
    next: Omit<SummaryState, "etag">,
  ): void {
    const key = this.#cacheKey(partitionKey, summary);
    if (etag === undefined) this.#cache.forget(key);
    else this.#cache.remember(key, { etag, ...next });
  }

  async #state(partitionKey: string, summary: SummaryModel, fresh: boolean): Promise<SummaryState> {
    const key = this.#cacheKey(partitionKey, summary);
    const cached = fresh ? undefined : this.#cache.get(key);
    if (cached) return cached;
    const row = await this.#runner.run("get", this.#table, (s) =>
      s.getEntity(this.#table, partitionKey, summary.rowKey),
    );
    const state = readSummaryState(this.#model, summary, row);
    if (state.etag === undefined) this.#cache.forget(key);
    else this.#cache.remember(key, state as SummaryState & { etag: string });
    return state;
  }

  #cacheKey(partitionKey: string, summary: SummaryModel): string {
    return summaryCacheKey(this.#table, partitionKey, summary.rowKey, summaryMarker(this.#model, summary));
  }
}
