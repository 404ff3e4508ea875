import { randomBytes } from "node:crypto";
import { ConcurrencyError, TableKitError, TransactionError, ValidationError } from "../../errors.js";
import type { EntityModel, SummaryModel } from "../../schema/entity-model.js";
import type { StoredEntity, TransactionAction, WireEntity, WriteResult } from "../../store/table-store.js";
import { readEntity } from "../core/entity-layout.js";
import { upcasterOf } from "../core/entity-rows.js";
import type { CompanionWrite, GroupCompanion, StageDescription } from "../core/group-companion.js";
import { isOutcomeUnknown } from "../core/lost-answers.js";
import type { Requests } from "../core/requests.js";
import type { SummaryCommitter } from "./summary-committer.js";
import { describeSummaryRows } from "./summary-description.js";
import {
  addTotals,
  committedWrite,
  contributionOf,
  isSummarizedRow,
  nextSummaryRow,
  type SummaryState,
} from "./summary-row.js";

/** The summary rows of entity writes of one partition (one, or a transaction's), planned afresh each round. */
export class SummaryCompanion implements GroupCompanion {
  readonly #model: EntityModel<object>;
  readonly #table: string;
  readonly #runner: Requests;
  readonly #committer: SummaryCommitter;
  readonly #writes: readonly CompanionWrite[];
  readonly #partitionKey: string;
  #before: Promise<Array<WireEntity | undefined>> | undefined;
  /** The rows of the latest round: what `committed` caches and `settle` looks for. */
  #planned: Array<{ summary: SummaryModel; next: Omit<SummaryState, "etag">; token: string }> = [];

  constructor(
    model: EntityModel<object>,
    table: string,
    runner: Requests,
    committer: SummaryCommitter,
    writes: readonly CompanionWrite[],
  ) {
    this.#model = model;
    this.#table = table;
    this.#runner = runner;
    this.#committer = committer;
    this.#writes = writes;
    this.#partitionKey = (writes[0] as CompanionWrite).partitionKey;
  }

  /** The state the latest round leaves a summary's row in (what a remote summary mirrors). */
  plannedState(summary: SummaryModel): Omit<SummaryState, "etag"> | undefined {
    return this.#planned.find((planned) => planned.summary === summary)?.next;
  }

  get rowKeys(): readonly string[] {
    return this.#committer.rowKeys;
  }

  /** The reads of a first round (rows before, uncached summary rows) and the summary rows it writes. */
  describe(): StageDescription {
    const partitionKey = this.#partitionKey;
    const cached = this.#committer.cachedRows(partitionKey);
    return describeSummaryRows({ model: this.#model, table: this.#table, writes: this.#writes, cached });
  }

  async plan(round: number): Promise<TransactionAction[]> {
    const partitionKey = this.#partitionKey;
    this.#before ??= Promise.all(this.#writes.map((write) => this.#readBefore(write)));
    const [befores, states] = await Promise.all([
      this.#before,
      Promise.all(this.#committer.summaries.map((s) => this.#committer.state(partitionKey, s, round > 1))),
    ]);
    const token = randomBytes(6).toString("base64url");
    this.#planned = [];
    return this.#committer.summaries.map((summary, i): TransactionAction => {
      const state = states[i] as SummaryState;
      let totals = state.totals;
      this.#writes.forEach((write, w) => {
        totals = addTotals(totals, contributionOf(summary, write.after), 1);
        totals = addTotals(totals, contributionOf(summary, befores[w]), -1);
      });
      const { row, next } = nextSummaryRow(this.#model, summary, partitionKey, state, totals, token);
      this.#planned.push({ summary, next, token });
      return state.etag === undefined
        ? { kind: "insert", entity: row }
        : { kind: "update", entity: row, mode: "replace", ifMatch: state.etag };
    });
  }

  committed(results: readonly WriteResult[] | undefined): void {
    this.#planned.forEach(({ summary, next }, i) => {
      this.#committer.remember(this.#partitionKey, summary, results?.[i]?.etag, next);
    });
  }

  async settle(error: unknown): Promise<"applied" | "retry" | undefined> {
    if (!(error instanceof TableKitError) || error instanceof ValidationError) return undefined;
    // A definite refusal is the writer's to translate (its own entity's error, or a lost race on a row).
    if (error instanceof TransactionError && !isOutcomeUnknown(error)) return undefined;
    const mine = this.#planned[0];
    if (mine === undefined) return undefined;
    const partitionKey = this.#partitionKey;
    const state = await this.#committer.state(partitionKey, mine.summary, true);
    const committed = committedWrite(state, mine.next.sequence, mine.token);
    if (committed === true) return "applied";
    if (committed === false) return isOutcomeUnknown(error) ? "retry" : undefined;
    throw new ConcurrencyError(
      { table: this.#table, partitionKey, rowKey: mine.summary.rowKey },
      { cause: error, outcomeUnknown: true },
    );
  }

  /**
   * The entity row the write replaces or deletes: the stored row at the ETag the entity action is
   * conditional on (if another version is stored, the entity action fails and nothing commits).
   */
  async #readBefore(write: CompanionWrite): Promise<WireEntity | undefined> {
    const { partitionKey, rowKey, condition, before } = write;
    if (condition === undefined) return undefined;
    const stored: StoredEntity | undefined =
      before?.etag === condition
        ? before
        : await readEntity(this.#model, this.#runner, this.#table, partitionKey, rowKey);
    if (!stored || !isSummarizedRow(this.#model, stored)) return undefined;
    const upcast = upcasterOf(this.#model);
    return upcast ? upcast(stored) : stored;
  }
}
