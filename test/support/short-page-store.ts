import type { StorePage, StoreQuery, TableStore } from "../../src/store/table-store.js";
import { type StoreRequest, StoreWrapper } from "./store-wrapper.js";

/**
 * Asks the inner store for at most `rowsPerPage` rows per query page, as the service may answer
 * with fewer rows than asked (at partition or time limits): a query then needs several requests
 * for one `page()`, on every store alike.
 */
export class ShortPageStore extends StoreWrapper {
  readonly #rowsPerPage: number;

  constructor(inner: TableStore, rowsPerPage: number) {
    super(inner);
    this.#rowsPerPage = rowsPerPage;
  }

  override queryPage(table: string, query: StoreQuery): Promise<StorePage> {
    const top = Math.min(query.top ?? this.#rowsPerPage, this.#rowsPerPage);
    return this.inner.queryPage(table, { ...query, top });
  }

  protected override around<T>(_request: StoreRequest, send: () => Promise<T>): Promise<T> {
    return send();
  }
}
