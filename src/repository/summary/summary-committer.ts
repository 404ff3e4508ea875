import { randomBytes } from "node:crypto";
import { ConcurrencyError, TableKitError, TransactionError, ValidationError } from "../../errors.js";
import type { EntityModel, SummaryModel } from "../../schema/entity-model.js";
import type { StoredEntity, TransactionAction, WireEntity, WriteResult } from "../../store/table-store.js";
import { MAX_COMPANION_ROUNDS } from "../core/commit-rounds.js";
import { isOutcomeUnknown } from "../core/lost-answers.js";
import type { Backoff, Requests, Scoped } from "../core/requests.js";
import { type PlannedWrite, planWrite, raceOrError, type SummarizedWrite } from "./summarized-write.js";

import { SummaryCache, summaryCacheKey } from "./summary-cache.js";
import {
  addTotals,
  committedWrite,
  contributionOf,
  nextSummaryRow,
  readSummaryState,
  type SummaryState,
  summaryMarker,
} from "./summary-row.js";

export type { SummarizedWrite };

/** What a write did: the entity's new ETag (unknown after a settled lost answer), and whether a deleted entity existed. */
export interface SummarizedOutcome {
  etag: string | undefined;
  existed: boolean;
}

/** Old rows read at once for one batch. */
const READS_IN_FLIGHT = 16;

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
 * Commits entity writes of one partition together with their summary rows, in one entity group
 * transaction: the old state of each entity (read, unless it is an insert) and each summary row
 * (read, unless its state is cached) give the delta; every entity action is conditional on the state
 * it was computed from (its ETag, or an insert where it was absent) and every summary row on its ETag.
 * A lost race (412/409 on a summary row, or on an entity the caller wrote unconditionally) re-reads and
 * goes again. A lost answer is settled by the summary row's write log (see `committedWrite`), so a
 * retried write is never counted twice.
 */
export class SummaryCommitter {
  readonly #model: EntityModel<object>;
  readonly #table: string;
  readonly #runner: Requests & Backoff;
  readonly #summaries: readonly SummaryModel[];
  readonly #cache: SummaryCache;

  constructor(model: EntityModel<object>, table: string, runner: Requests & Scoped & Backoff) {
    this.#model = model;
    this.#table = table;
    this.#runner = runner;
    this.#summaries = [...model.summaries.values()];
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

  /** Rounds a write goes before giving up on lost races (`exhausted`). */
  get maxRounds(): number {
    return MAX_COMPANION_ROUNDS;
  }

  /** The error of a write that lost `maxRounds` races on its summary rows. */
  exhausted(partitionKey: string, cause: unknown): ConcurrencyError {
    const rowKey = (this.#summaries[0] as SummaryModel).rowKey;
    return new ConcurrencyError({ table: this.#table, partitionKey, rowKey }, { cause });
  }

  /**
   * One round of a commit: the old rows and the summary rows read (cached state on round 1), each
   * write's action planned against what is stored, the summary rows with the delta; `actions` is
   * empty when there is nothing to write (deletes of entities already gone).
   */
  async planRound(
    partitionKey: string,
    writes: readonly SummarizedWrite[],
    round: number,
  ): Promise<PlannedRound> {
    const [olds, states] = await Promise.all([
      this.#readOld(partitionKey, writes),
      Promise.all(this.#summaries.map((s) => this.#state(partitionKey, s, round > 1))),
    ]);
    const plans = writes.map((write, i) => planWrite(this.#model, this.#table, partitionKey, write, olds[i]));
    const entityActions = plans.flatMap((plan) => (plan.action ? [plan.action] : []));
    // Where each write's action sits in the transaction (-1: nothing to send, e.g. deleting an absent entity).
    let slot = 0;
    const slots = plans.map((plan) => (plan.action ? slot++ : -1));
    if (entityActions.length === 0)
      return { plans, slots, entityCount: 0, summaryRows: [], token: "", actions: [] };
    const token = randomBytes(6).toString("base64url");
    const summaryRows = this.#summaries.map((summary, i) => {
      const state = states[i] as SummaryState;
      let totals = state.totals;
      for (const plan of plans) {
        totals = addTotals(totals, contributionOf(summary, plan.after), 1);
        totals = addTotals(totals, contributionOf(summary, plan.before), -1);
      }
      return { state, ...nextSummaryRow(this.#model, summary, partitionKey, state, totals, token) };
    });
    const actions: TransactionAction[] = [
      ...entityActions,
      ...summaryRows.map(
        ({ row, state }): TransactionAction =>
          state.etag === undefined
            ? { kind: "insert", entity: row }
            : { kind: "update", entity: row, mode: "replace", ifMatch: state.etag },
      ),
    ];
    return { plans, slots, entityCount: entityActions.length, summaryRows, token, actions };
  }

  /**
   * A round's transaction failed: `retry` (a lost race: plan again), `applied` (a lost answer whose
   * write committed), or throws the caller's error.
   */
  settleRound(
    error: unknown,
    partitionKey: string,
    writes: readonly SummarizedWrite[],
    planned: PlannedRound,
  ): Promise<"retry" | "applied"> {
    const first = planned.summaryRows[0] as PlannedRound["summaryRows"][number];
    return this.#settle(error, partitionKey, writes, planned.slots, planned.entityCount, {
      sequence: first.next.sequence,
      token: planned.token,
    });
  }

  /** A round committed (`results` undefined: its answer was lost, or nothing was sent): the rows cached, the outcomes. */
  finishRound(
    partitionKey: string,
    planned: PlannedRound,
    results: readonly WriteResult[] | undefined,
  ): { outcomes: SummarizedOutcome[]; states: Array<Omit<SummaryState, "etag">> | undefined } {
    const { plans, slots, summaryRows, entityCount } = planned;
    if (planned.actions.length === 0)
      return {
        outcomes: plans.map((plan) => ({ etag: undefined, existed: plan.existed })),
        states: undefined,
      };
    this.#summaries.forEach((summary, i) => {
      const etag = results?.[entityCount + i]?.etag;
      const key = this.#cacheKey(partitionKey, summary);
      if (etag === undefined) this.#cache.forget(key);
      else this.#cache.remember(key, { etag, ...(summaryRows[i] as (typeof summaryRows)[number]).next });
    });
    return {
      outcomes: plans.map((plan, i) => ({
        etag: plan.action?.kind === "delete" ? undefined : results?.[slots[i] as number]?.etag,
        existed: plan.existed,
      })),
      states: summaryRows.map((row) => row.next),
    };
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

  /** Whether a summary row's state is cached (a write's first round then reads nothing for it). */
  isCached(partitionKey: string, summary: SummaryModel): boolean {
    return this.#cache.get(this.#cacheKey(partitionKey, summary)) !== undefined;
  }

  /** Per summary, in order, whether its row's state in this partition is cached (`SummaryStagePlan.cached`). */
  cachedRows(partitionKey: string): boolean[] {
    return this.#summaries.map((summary) => this.isCached(partitionKey, summary));
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

  /** The stored rows the writes replace or delete (inserts need none: an existing key fails them). */
  async #readOld(
    partitionKey: string,
    writes: readonly SummarizedWrite[],
  ): Promise<Array<StoredEntity | undefined>> {
    const olds: Array<StoredEntity | undefined> = new Array(writes.length);
    let next = 0;
    const worker = async () => {
      while (next < writes.length) {
        const i = next++;
        const write = writes[i] as SummarizedWrite;
        if (write.kind === "insert") continue;
        const rowKey = write.kind === "delete" ? write.rowKey : write.wire.rowKey;
        olds[i] = await this.#runner.run("get", this.#table, (s) =>
          s.getEntity(this.#table, partitionKey, rowKey),
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(READS_IN_FLIGHT, writes.length) }, worker));
    return olds;
  }

  /**
   * Decides after a failed submit: `retry` (a lost race: read again), `applied` (a lost answer whose
   * write committed), or throws the caller's error.
   */
  async #settle(
    error: unknown,
    partitionKey: string,
    writes: readonly SummarizedWrite[],
    slots: readonly number[],
    entityCount: number,
    mine: { sequence: bigint; token: string },
  ): Promise<"retry" | "applied"> {
    if (error instanceof TransactionError && !isOutcomeUnknown(error))
      return this.#refusal(error, partitionKey, writes, slots, entityCount);
    if (!(error instanceof TableKitError) || error instanceof ValidationError) throw error;
    // The answer may have been lost after the transaction committed: the summary row's log decides.
    const summary = this.#summaries[0] as SummaryModel;
    const state = await this.#state(partitionKey, summary, true);
    const committed = committedWrite(state, mine.sequence, mine.token);
    if (committed === true) return "applied";
    if (committed === false && isOutcomeUnknown(error)) return "retry";
    if (committed === false) throw error;
    throw new ConcurrencyError(
      { table: this.#table, partitionKey, rowKey: summary.rowKey },
      { cause: error, outcomeUnknown: true },
    );
  }

  /** A round's transaction was definitely refused: a lost race (`retry`: plan again), or throws the caller's error. */
  refusedRound(
    error: TransactionError,
    partitionKey: string,
    writes: readonly SummarizedWrite[],
    planned: PlannedRound,
  ): "retry" {
    return this.#refusal(error, partitionKey, writes, planned.slots, planned.entityCount);
  }

  #refusal(
    error: TransactionError,
    partitionKey: string,
    writes: readonly SummarizedWrite[],
    slots: readonly number[],
    entityCount: number,
  ): "retry" {
    if (error.index >= entityCount) {
      if (error.statusCode === 412 || error.statusCode === 409) return "retry";
      throw error;
    }
    const write = writes[slots.indexOf(error.index)];
    if (write === undefined) throw error;
    return raceOrError(this.#table, error, partitionKey, write);
  }
}

/** One round of a commit (see `SummaryCommitter.planRound`). */
export interface PlannedRound {
  plans: PlannedWrite[];
  slots: number[];
  entityCount: number;
  summaryRows: Array<{ state: SummaryState; row: WireEntity; next: Omit<SummaryState, "etag"> }>;
  token: string;
  actions: TransactionAction[];
}
