import { ValidationError } from "../../../errors.js";
import {
  decodeContinuation,
  encodeContinuation,
  fingerprintQuery,
} from "../../../query/continuation-token.js";
import type { Page, PageOptions } from "../../../query/query.js";
import { rememberEtag } from "../../../serialization/entity-etag.js";
import type { StoreContinuation } from "../../../store/table-store.js";
import { ServiceLimits } from "../../../util/service-limits.js";
import type { Requests, Scoped } from "../../core/requests.js";
import { type DynamicRow, storedToRow } from "./dynamic-row.js";

/**
 * Rows of `db.dynamic(table)` matching a filter: `page`, `toArray` and `for await`, like a typed
 * `Query`. Key order on Azure Table storage; the store's order on an unsorted store.
 * @example
 * for await (const row of db.dynamic("Events").find("device-7").filter("Level ge 3")) console.log(row);
 */
export class DynamicQuery {
  readonly #runner: Requests & Scoped;
  readonly #table: string;
  readonly #filter: string;

  /** @internal Use `db.dynamic(table).find(...)` or `.scan()`. */
  static build(runner: Requests & Scoped, table: string, filter: string): DynamicQuery {
    return new DynamicQuery(runner, table, filter);
  }

  private constructor(runner: Requests & Scoped, table: string, filter: string) {
    this.#runner = runner;
    this.#table = table;
    this.#filter = filter;
  }

  /** The OData filter text sent (empty for a scan). */
  get filterText(): string {
    return this.#filter;
  }

  /** A narrower query: this one `and` an OData filter (`odata` renders values as typed literals). */
  filter(text: string): DynamicQuery {
    if (typeof text !== "string" || text.trim() === "") {
      throw new ValidationError("filter", "filter needs OData filter text", { field: "filter" });
    }
    const combined = this.#filter === "" ? text : `(${this.#filter}) and (${text})`;
    return new DynamicQuery(this.#runner, this.#table, combined);
  }

  /**
   * One page of at most `size` rows (default 1,000), resuming from `continuation`, after at most
   * `maxRequests` store requests (then `budgetExhausted: true` when it stopped short).
   */
  async page(options: PageOptions = {}): Promise<Page<DynamicRow>> {
    const size = options.size ?? ServiceLimits.maxPageSize;
    if (!Number.isSafeInteger(size) || size < 1) {
      throw new ValidationError("page-size", `page size must be a positive integer, got ${size}`, {
        field: "size",
      });
    }
    const maxRequests = options.maxRequests ?? Number.POSITIVE_INFINITY;
    if (maxRequests !== Number.POSITIVE_INFINITY && (!Number.isSafeInteger(maxRequests) || maxRequests < 1)) {
      throw new ValidationError(
        "max-requests",
        `maxRequests must be a positive integer, got ${maxRequests}`,
        {
          field: "maxRequests",
        },
      );
    }
    const fingerprint = fingerprintQuery(this.#table, this.#filter, undefined);
    let cursor: StoreContinuation | undefined =
      options.continuation === undefined
        ? undefined
        : decodeContinuation(options.continuation, fingerprint).store;
    const items: DynamicRow[] = [];
    let requests = 0;
    do {
      // Asking for exactly what is still wanted keeps the service's continuation exact: nothing is skipped.
      const top = Math.min(size - items.length, ServiceLimits.maxPageSize);
      const after = cursor;
      const page = await this.#runner.run("query", this.#table, (s) =>
        s.queryPage(this.#table, {
          filter: this.#filter === "" ? undefined : this.#filter,
          top,
          continuation: after,
        }),
      );
      for (const stored of page.items) {
        const row = storedToRow(stored);
        rememberEtag(row, stored.etag, this.#runner.scope);
        items.push(row);
      }
      cursor = page.continuation;
      requests++;
    } while (cursor !== undefined && items.length < size && requests < maxRequests);
    if (cursor === undefined) return { items };
    const continuation = encodeContinuation({ store: cursor }, fingerprint);
    // Stopped by the budget before the page filled up: say so, as a typed query's page does.
    return items.length < size ? { items, continuation, budgetExhausted: true } : { items, continuation };
  }

  /** Every matching row. */
  async toArray(): Promise<DynamicRow[]> {
    const rows: DynamicRow[] = [];
    for await (const row of this) rows.push(row);
    return rows;
  }

  /** Iterates every matching row, following continuations lazily and holding one page in memory. */
  async *[Symbol.asyncIterator](): AsyncIterator<DynamicRow> {
    let continuation: string | undefined;
    do {
      const page: Page<DynamicRow> = await this.page(continuation === undefined ? {} : { continuation });
      yield* page.items;
      continuation = page.continuation;
    } while (continuation !== undefined);
  }
}
