import { randomUUID } from "node:crypto";
import { ConcurrencyError } from "../../../errors.js";
import { FEED_VERSION_PROPERTY } from "../../../schema/resolve-change-feed.js";
import type { TableStore, TransactionAction, WriteResult } from "../../../store/table-store.js";
import type { RequestAttempt } from "../request-attempt.js";
import { FeedProperties } from "./feed-rows.js";
import type { FeedState } from "./feed-state.js";

/** What the last attempt of a request committed with: its write id (on its journal rows), first journal row and versions. */
interface SentCommit {
  journalRowKey: string;
  versions: ReadonlyMap<string, number>;
}

/**
 * Tells a resend of a change-fed write from a new write. Each request (every attempt the runner sends
 * through the retry policy) gets one write id, stamped on its journal rows. When an attempt's answer
 * was lost and the request is sent again, its last commit is looked up first: a journal row holding
 * the write id means the commit was applied (the transaction is atomic), so it is answered from the
 * stored rows instead of being committed again with a second change. Absent, nothing was applied.
 */
export class FeedResends {
  readonly #ids = new WeakMap<object, string>();
  readonly #sent = new WeakMap<object, SentCommit>();

  /** The write id of the request in progress (a fresh one outside the runner: then there is no resend). */
  writeIdOf(attempt: RequestAttempt | undefined): string {
    if (attempt === undefined) return randomUUID();
    let id = this.#ids.get(attempt.request);
    if (id === undefined) {
      id = randomUUID();
      this.#ids.set(attempt.request, id);
    }
    return id;
  }

  /** Records what an attempt is about to commit. */
  remember(
    attempt: RequestAttempt | undefined,
    journalRowKey: string,
    versions: ReadonlyMap<string, number>,
  ): void {
    if (attempt !== undefined) this.#sent.set(attempt.request, { journalRowKey, versions });
  }

  /**
   * Whether an earlier attempt of this request may have committed and did: one point read of its
   * first journal row. `undefined` when no earlier commit was possibly applied or it was not.
   */
  async committedEarlier(
    store: TableStore,
    table: string,
    partitionKey: string,
    attempt: RequestAttempt | undefined,
  ): Promise<ReadonlyMap<string, number> | undefined> {
    if (attempt === undefined || !attempt.possiblyApplied) return undefined;
    const sent = this.#sent.get(attempt.request);
    if (sent === undefined) return undefined;
    const journal = await store.getEntity(table, partitionKey, sent.journalRowKey, [FeedProperties.write]);
    return journal?.[FeedProperties.write] === this.#ids.get(attempt.request) ? sent.versions : undefined;
  }
}

/**
 * The results of a transaction that an earlier attempt committed, from the rows read since: each
 * written row's ETag while it still holds the version that commit gave it. A later write of one of its
 * rows leaves its ETag unknowable: a `ConcurrencyError` of unknown outcome (the change is in the feed).
 */
export function committedResults(
  table: string,
  partitionKey: string,
  actions: readonly TransactionAction[],
  versions: ReadonlyMap<string, number>,
  state: FeedState,
): WriteResult[] {
  return actions.map((action) => {
    if (action.kind === "delete") return { etag: "" };
    const rowKey = action.entity.rowKey;
    const row = state.rows.get(rowKey);
    const version = versions.get(rowKey);
    if (row === undefined || (version !== undefined && row[FEED_VERSION_PROPERTY] !== version)) {
      throw new ConcurrencyError(
        { table, partitionKey, rowKey },
        {
          outcomeUnknown: true,
          cause: new Error(
            "the write was committed (its change is in the feed), then its row was written again",
          ),
        },
      );
    }
    return { etag: row.etag };
  });
}
