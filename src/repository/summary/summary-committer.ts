import { randomBytes } from "node:crypto";
import {
  ConcurrencyError,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  TableKitError,
  TransactionError,
  ValidationError,
} from "../../errors.js";
import type { EntityModel, SummaryModel } from "../../schema/entity-model.js";
import type {
  StoredEntity,
  TransactionAction,
  WireEntity,
  WriteMode,
  WriteResult,
} from "../../store/table-store.js";
import { upcasterOf } from "../core/entity-rows.js";
import { isOutcomeUnknown } from "../core/lost-answers.js";
import type { Backoff, Requests, Scoped } from "../core/requests.js";
import { submitTransaction } from "../core/submit-transaction.js";
import { SummaryCache, summaryCacheKey } from "./summary-cache.js";
import {
  addTotals,
  committedWrite,
  contributionOf,
  isSummarizedRow,
  nextSummaryRow,
  readSummaryState,
  type SummaryState,
  summaryMarker,
} from "./summary-row.js";

/** One entity write as the caller asked for it; `ifMatch` undefined or `"*"` means unconditional. */
export type SummarizedWrite =
  | { kind: "insert"; wire: WireEntity }
  | { kind: "upsert"; wire: WireEntity; mode: WriteMode }
  | { kind: "update"; wire: WireEntity; mode: WriteMode; ifMatch: string }
  | { kind: "delete"; partitionKey: string; rowKey: string; ifMatch: string | undefined };

/** What a write did: the entity's new ETag (unknown after a settled lost answer), and whether a deleted entity existed. */
export interface SummarizedOutcome {
  etag: string | undefined;
  existed: boolean;
}

/** Rounds before a write gives up losing races on its summary rows (each lost round means another writer's commit). */
const MAX_ROUNDS = 200;
/** Old rows read at once for one batch. */
const READS_IN_FLIGHT = 16;

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

  /** Refuses an entity whose RowKey is a summary row's (possible only where the RowKey template has no literal prefix). */
  assertNotSummaryKey(rowKey: string): void {
    for (const summary of this.#summaries) {
      const remote = summary.remote;
      // Contribution rows of a remote summary in the entity's own table take `<rowKey>~…` RowKeys.
      if (
        remote &&
        remote.table.toLowerCase() === this.#model.table.toLowerCase() &&
        rowKey.startsWith(`${remote.rowKey}~`)
      ) {
        throw new ValidationError(
          "summary-row-key",
          `${this.#model.name}: RowKey '${rowKey}' starts with '${remote.rowKey}~', the RowKeys of summary ${summary.name}'s rows in this table; an entity cannot have it`,
          { field: "RowKey" },
        );
      }
      if (rowKey === summary.rowKey) {
        throw new ValidationError(
          "summary-row-key",
          `${this.#model.name}: RowKey '${rowKey}' is the row of summary ${summary.name}; an entity cannot have it`,
          { field: "RowKey" },
        );
      }
    }
  }

  /** Commits the writes (one partition, each entity once); throws the caller's error for a write that cannot be done. */
  async commit(partitionKey: string, writes: readonly SummarizedWrite[]): Promise<SummarizedOutcome[]> {
    return (await this.commitStates(partitionKey, writes)).outcomes;
  }

  /**
   * `commit`, also resolving the summary rows' states the commit left (in `summaries` order; undefined
   * when nothing was written). `ready` is awaited before the transaction is sent (a remote summary's
   * intent, recorded while the rows are read).
   */
  async commitStates(
    partitionKey: string,
    writes: readonly SummarizedWrite[],
    ready?: Promise<unknown>,
  ): Promise<{ outcomes: SummarizedOutcome[]; states: Array<Omit<SummaryState, "etag">> | undefined }> {
    for (let round = 1; ; round++) {
      const [olds, states] = await Promise.all([
        this.#readOld(partitionKey, writes),
        Promise.all(this.#summaries.map((s) => this.#state(partitionKey, s, round > 1))),
      ]);
      const plans = writes.map((write, i) => this.#plan(partitionKey, write, olds[i]));
      const entityActions = plans.flatMap((plan) => (plan.action ? [plan.action] : []));
      // Where each write's action sits in the transaction (-1: nothing to send, e.g. deleting an absent entity).
      let slot = 0;
      const slots = plans.map((plan) => (plan.action ? slot++ : -1));
      // Nothing to write (deletes of entities already gone): the summary is unchanged.
      if (entityActions.length === 0)
        return {
          outcomes: plans.map((plan) => ({ etag: undefined, existed: plan.existed })),
          states: undefined,
        };
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
      let results: WriteResult[] | undefined;
      if (ready !== undefined) await ready;
      try {
        results = (await submitTransaction(this.#runner, this.#table, partitionKey, actions)).results;
      } catch (error) {
        const first = summaryRows[0] as (typeof summaryRows)[number];
        const verdict = await this.#settle(error, partitionKey, writes, slots, entityActions.length, {
          sequence: first.next.sequence,
          token,
        });
        if (verdict === "retry") {
          if (round >= MAX_ROUNDS) {
            const rowKey = (this.#summaries[0] as SummaryModel).rowKey;
            throw new ConcurrencyError({ table: this.#table, partitionKey, rowKey }, { cause: error });
          }
          await this.#runner.retry.contend(round);
          continue;
        }
      }
      this.#summaries.forEach((summary, i) => {
        const etag = results?.[entityActions.length + i]?.etag;
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

  /** The action of one write given what is stored, conditional on exactly that state, and the rows before and after. */
  #plan(partitionKey: string, write: SummarizedWrite, stored: StoredEntity | undefined): Plan {
    const keys = {
      table: this.#table,
      partitionKey,
      rowKey: write.kind === "delete" ? write.rowKey : write.wire.rowKey,
    };
    const before = stored && isSummarizedRow(this.#model, stored) ? this.#upcast(stored) : undefined;
    switch (write.kind) {
      case "insert":
        return {
          action: { kind: "insert", entity: write.wire },
          before: undefined,
          after: write.wire,
          existed: false,
        };
      case "upsert":
        if (!stored)
          return {
            action: { kind: "insert", entity: write.wire },
            before,
            after: write.wire,
            existed: false,
          };
        return {
          action: { kind: "update", entity: write.wire, mode: write.mode, ifMatch: stored.etag },
          before,
          after: write.mode === "merge" ? merged(stored, write.wire) : write.wire,
          existed: true,
        };
      case "update":
        if (!stored) throw new EntityNotFoundError(keys);
        if (write.ifMatch !== "*" && write.ifMatch !== stored.etag) throw new ConcurrencyError(keys);
        return {
          action: { kind: "update", entity: write.wire, mode: write.mode, ifMatch: stored.etag },
          before,
          after: write.mode === "merge" ? merged(stored, write.wire) : write.wire,
          existed: true,
        };
      case "delete":
        if (!stored) return { action: undefined, before: undefined, after: undefined, existed: false };
        if (write.ifMatch !== undefined && write.ifMatch !== "*" && write.ifMatch !== stored.etag)
          throw new ConcurrencyError(keys);
        return {
          action: { kind: "delete", partitionKey, rowKey: write.rowKey, ifMatch: stored.etag },
          before,
          after: undefined,
          existed: true,
        };
    }
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
    if (error instanceof TransactionError && !isOutcomeUnknown(error)) {
      if (error.index >= entityCount) {
        if (error.statusCode === 412 || error.statusCode === 409) return "retry";
        throw error;
      }
      const write = writes[slots.indexOf(error.index)];
      if (write === undefined) throw error;
      return this.#raceOrError(error, partitionKey, write);
    }
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

  /** A failed entity action: another writer changed it after our read (go again where the caller did not condition it), or the caller's error. */
  #raceOrError(error: TransactionError, partitionKey: string, write: SummarizedWrite): "retry" {
    const rowKey = write.kind === "delete" ? write.rowKey : write.wire.rowKey;
    const keys = { table: this.#table, partitionKey, rowKey };
    const status = error.statusCode;
    if (write.kind === "insert") {
      if (status === 409) throw new EntityAlreadyExistsError(keys, { cause: error });
      throw error;
    }
    if (status !== 412 && status !== 404 && status !== 409) throw error;
    const conditioned =
      (write.kind === "update" || write.kind === "delete") &&
      write.ifMatch !== undefined &&
      write.ifMatch !== "*";
    if (!conditioned) return "retry";
    if (status === 404 && write.kind === "update") throw new EntityNotFoundError(keys, { cause: error });
    if (status === 404) return "retry";
    throw new ConcurrencyError(keys, { cause: error });
  }

  #upcast(stored: StoredEntity): StoredEntity {
    const upcast = upcasterOf(this.#model);
    return upcast ? upcast(stored) : stored;
  }
}

/** One write planned against what is stored. */
interface Plan {
  action: TransactionAction | undefined;
  /** The entity row before the write (undefined: absent, or another type's row). */
  before: WireEntity | undefined;
  /** The entity row after the write (undefined: deleted). */
  after: WireEntity | undefined;
  /** Whether the entity was there before (known for deletes, which read it). */
  existed: boolean;
}

/**
 * A merge's result as the service stores it: the stored row as it is (not upcast: the merged row carries
 * the current version's discriminator and is read without upcasting) with the sent properties laid over it.
 */
function merged(stored: StoredEntity, sent: WireEntity): WireEntity {
  const row: WireEntity = { ...stored };
  for (const [name, value] of Object.entries(sent)) {
    if (value !== undefined && value !== null) row[name] = value;
  }
  return row;
}
