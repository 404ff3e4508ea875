import { StoreError, TransactionError } from "../errors.js";
import type { TableTemplate } from "../keys/table-template.js";
import { DelegatingStore } from "../store/delegating-store.js";
import type {
  TableStore,
  TransactionAction,
  WireEntity,
  WriteMode,
  WriteResult,
} from "../store/table-store.js";

/**
 * The period table templates (`Logs{at:month}`) of a context's entities and indexes: which physical
 * tables may be missing only because nobody has written to their period yet.
 */
export class PeriodTableNames {
  readonly #prefix: string;
  readonly #templates = new Set<TableTemplate>();

  constructor(prefix: string) {
    this.#prefix = prefix;
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
}

/**
 * A store that creates a period's table on its first write: an insert, upsert or transaction that
 * writes something and meets 404 TableNotFound on a period table creates the table and is sent once
 * more (within the same attempt, so the retry and lost-answer rules around it are unchanged). No extra
 * request when the table exists; any other write (an update or delete of a missing table's entity) is
 * answered as the service answers it. Every write path (single writes, transactions, bulk batches,
 * index copies, repair) goes through it, so none needs its own rule.
 */
export class PeriodTableStore extends DelegatingStore {
  readonly #periods: PeriodTableNames;

  constructor(inner: TableStore, periods: PeriodTableNames) {
    super(inner);
    this.#periods = periods;
  }

  override insert(table: string, entity: WireEntity): Promise<WriteResult> {
    if (!this.#periods.has(table)) return this.inner.insert(table, entity);
    return this.#creating(table, () => this.inner.insert(table, entity));
  }

  override upsert(table: string, entity: WireEntity, mode: WriteMode): Promise<WriteResult> {
    if (!this.#periods.has(table)) return this.inner.upsert(table, entity, mode);
    return this.#creating(table, () => this.inner.upsert(table, entity, mode));
  }

  override submitTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]> {
    const send = () => this.inner.submitTransaction(table, partitionKey, actions);
    // Only deletes and updates: the entities cannot exist, and an empty table helps nobody.
    const writes = actions.some((action) => action.kind === "insert" || action.kind === "upsert");
    return writes && this.#periods.has(table) ? this.#creating(table, send) : send();
  }

  /** Sends a write to a period table; on 404 TableNotFound creates the table and sends it once more. */
  async #creating<R>(table: string, write: () => Promise<R>): Promise<R> {
    try {
      return await write();
    } catch (error) {
      if (!isTableNotFound(error)) throw error;
      await this.inner.createTable(table);
      return write();
    }
  }
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
