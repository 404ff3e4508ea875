import { PeriodDroppedError, StoreError, TransactionError } from "../../errors.js";
import type { TableTemplate } from "../../keys/table-template.js";
import { DelegatingStore } from "../../store/delegating-store.js";
import type {
  TableStore,
  TransactionAction,
  WireEntity,
  WriteMode,
  WriteResult,
} from "../../store/table-store.js";
import { PeriodCutoffs } from "./period-cutoffs.js";

/**
 * The period table templates (`Logs{at:month}`) of a context's entities and indexes: which physical
 * tables may be missing only because nobody has written to their period yet.
 */
export class PeriodTableNames {
  readonly #prefix: string;
  readonly #templates = new Set<TableTemplate>();
  /** The periods `dropTables` dropped (stored in the account, cached once seen). */
  readonly cutoffs: PeriodCutoffs;

  constructor(prefix: string) {
    this.#prefix = prefix;
    this.cutoffs = new PeriodCutoffs(prefix);
  }

  /** Marks a template's tables as created on first write. */
  add(template: TableTemplate): void {
    this.#templates.add(template);
  }

  /** True for a physical table name one of the templates produces. */
  has(table: string): boolean {
    if (this.#templates.size === 0 || !table.startsWith(this.#prefix)) return false;
    const name = table.slice(this.#prefix.length);
    for (const template of this.#templates) if (template.periodOf(name) !== undefined) return true;
    return false;
  }

  /** The template that produces a physical table name, and the end of the period it holds. */
  periodOf(table: string): { template: TableTemplate; end: Date } | undefined {
    if (!table.startsWith(this.#prefix)) return undefined;
    const name = table.slice(this.#prefix.length);
    for (const template of this.#templates) {
      const start = template.periodOf(name);
      if (start !== undefined) return { template, end: template.nextPeriod(start) };
    }
    return undefined;
  }
}

/**
 * A store that creates a period's table on its first write: an insert, upsert or transaction that
 * writes something and meets 404 TableNotFound on a period table creates the table and is sent once
 * more (within the same attempt, so the retry and lost-answer rules around it are unchanged). No extra
 * request when the table exists; any other write (an update or delete of a missing table's entity) is
 * answered as the service answers it. Every write path (single writes, transactions, bulk batches,
 * index copies, repair) goes through it, so none needs its own rule.
 *
 * A period dropped by `db.dropTables` stays dropped: a write into it is a `PeriodDroppedError` (checked
 * against the cut-off this context has seen before sending, and against the stored one before
 * creating a missing table), never a re-created table. Creating a table whose name Azure still holds
 * (409 `TableBeingDeleted`, about 40 s after a delete) is a transient fault the retry policy rides out.
 */
export class PeriodTableStore extends DelegatingStore {
  readonly #periods: PeriodTableNames;

  constructor(inner: TableStore, periods: PeriodTableNames) {
    super(inner);
    this.#periods = periods;
  }

  override insert(table: string, entity: WireEntity): Promise<WriteResult> {
    if (!this.#periods.has(table)) return this.inner.insert(table, entity);
    this.#assertKnownNotDropped(table);
    return this.#creating(table, () => this.inner.insert(table, entity));
  }

  override upsert(table: string, entity: WireEntity, mode: WriteMode): Promise<WriteResult> {
    if (!this.#periods.has(table)) return this.inner.upsert(table, entity, mode);
    this.#assertKnownNotDropped(table);
    return this.#creating(table, () => this.inner.upsert(table, entity, mode));
  }

  override submitTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]> {
    // A fixed table (every transaction of a context without period tables): no closure, no walk.
    if (!this.#periods.has(table)) return this.inner.submitTransaction(table, partitionKey, actions);
    const send = () => this.inner.submitTransaction(table, partitionKey, actions);
    // Only deletes and updates: the entities cannot exist, and an empty table helps nobody.
    const writes = actions.some((action) => action.kind === "insert" || action.kind === "upsert");
    if (!writes) return send();
    this.#assertKnownNotDropped(table);
    return this.#creating(table, send);
  }

  /** Sends a write to a period table; on 404 TableNotFound creates the table and sends it once more. */
  async #creating<R>(table: string, write: () => Promise<R>): Promise<R> {
    try {
      return await write();
    } catch (error) {
      if (!isTableNotFound(error)) throw error;
      // A missing table may be a dropped period (by any process): its stored cut-off says.
      await this.#assertNotDropped(table);
      try {
        await this.inner.createTable(table);
      } catch (createError) {
        if (!isTableBeingDeleted(createError)) throw createError;
        await this.#assertNotDropped(table);
        throw new StoreError(
          `table ${table} is still being deleted (409 TableBeingDeleted: Azure holds a deleted table's name for about 40 seconds); the write is retried within the retry policy's window`,
          { statusCode: 409, serviceCode: "TableBeingDeleted", cause: createError },
        );
      }
      return write();
    }
  }

  #assertKnownNotDropped(table: string): void {
    const period = this.#periods.periodOf(table);
    if (period === undefined) return;
    const cutoff = this.#periods.cutoffs.known(period.template);
    if (cutoff !== undefined && period.end.getTime() <= cutoff.getTime()) {
      throw new PeriodDroppedError({ table, cutoff });
    }
  }

  async #assertNotDropped(table: string): Promise<void> {
    const period = this.#periods.periodOf(table);
    if (period === undefined) return;
    const cutoff = await this.#periods.cutoffs.read(this.inner, period.template);
    if (cutoff !== undefined && period.end.getTime() <= cutoff.getTime()) {
      throw new PeriodDroppedError({ table, cutoff });
    }
  }
}

/** True for the service's 409 `TableBeingDeleted`: the name of a table deleted moments ago is still held. */
export function isTableBeingDeleted(error: unknown): boolean {
  return error instanceof StoreError && error.statusCode === 409 && error.serviceCode === "TableBeingDeleted";
}

/**
 * True for the service's 404 `TableNotFound` (of a single request or of a whole transaction): the
 * table of a period nobody has written to yet.
 */
export function isTableNotFound(error: unknown): boolean {
  return (
    (error instanceof StoreError || error instanceof TransactionError) &&
    error.statusCode === 404 &&
    error.serviceCode === "TableNotFound"
  );
}
