import type { ColumnModel, EntityModel } from "../schema/entity-model.js";
import type { StoreContinuation } from "../wire/wire-entity.js";
import type { QueryPageStats } from "./query-budget.js";

/** Runs compiled queries against a store (implemented by the repository). */
export interface QueryExecutor<T> {
  fetchPage(
    table: string,
    filter: string,
    select: readonly string[] | undefined,
    top: number,
    continuation: StoreContinuation | undefined,
  ): Promise<{ items: T[]; continuation?: StoreContinuation }>;
  fetchPoint(
    table: string,
    partitionKey: string,
    rowKey: string,
    select: readonly string[] | undefined,
  ): Promise<T | undefined>;
  /**
   * Present only when the store returns results unsorted (`capabilities.sortedResults` false, the
   * Cosmos DB Table API): reads every page of the filter and resolves its first `top` results in
   * (PartitionKey, RowKey) order (`top` may be `Infinity`).
   */
  fetchFirst?(
    table: string,
    filter: string,
    select: readonly string[] | undefined,
    top: number,
  ): Promise<T[]>;
  /** Hears what each `page()`, `toArray()` or iteration cost (the context's `query-page` event). */
  reportPage?(stats: QueryPageStats): void;
  /** The blind values of `where` equalities on blind-indexed columns (absent without a blind-index key). */
  readonly blindValues?: BlindValues | undefined;
}

/** `QueryExecutor.fetchFirst` bound to its executor: the first `top` results in key order. */
export type FetchFirst<R> = (
  table: string,
  filter: string,
  select: readonly string[] | undefined,
  top: number,
) => Promise<R[]>;

/** The blind values of a value (the context's `blindIndex`, repository side): current key first. */
export interface BlindValues {
  storedValues(model: EntityModel, column: ColumnModel, value: unknown): string[];
}
