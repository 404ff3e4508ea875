/** One page of results and, when more may follow, an opaque continuation string that can be stored. */
export interface Page<T> {
  items: T[];
  continuation?: string | undefined;
  /** Present when the page stopped at its `maxRequests` before filling up; `continuation` reads on. */
  budgetExhausted?: true;
}

/** Options of `page`; `continuation: undefined` (a last page's) starts from the beginning. */
export interface PageOptions {
  /** At most this many results (default 1,000). */
  size?: number | undefined;
  /** Where to resume: a previous page's `continuation`. */
  continuation?: string | undefined;
  /**
   * At most this many store requests (a positive integer): a sparse scan whose pages come back empty
   * stops there, with `budgetExhausted: true` and a continuation.
   */
  maxRequests?: number | undefined;
}

/** Options of `toArray`. */
export interface ToArrayOptions {
  /**
   * At most this many store requests (a positive integer); when they run out before the end of the
   * results, `toArray` rejects with a `QueryBudgetError` holding what it read and a continuation.
   */
  maxRequests?: number | undefined;
}
